// The arena Alea must reproduce seedrandom's alea number for number: seeds decide every deck.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { aleaNext, aleaSeed } from './alea.js';

describe('aleaSeed / aleaNext', () => {
  it.each(['0', '1', 'seed-001', '7:1023/4', '', 'ünïcödé ☃', String(2 ** 40)])('draws what seedrandom.alea(%j) draws', (seed) => {
    const reference = seedrandom.alea(seed);
    const state = new Float64Array(4);
    aleaSeed(state, seed);
    for (let i = 0; i < 2000; i++) expect(aleaNext(state)).toBe(reference());
  });
});
