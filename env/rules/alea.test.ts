// The arena Alea must reproduce seedrandom's alea number for number: seeds decide every deck.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { aleaNext, aleaSeed, aleaShuffle } from './alea.js';

describe('aleaSeed / aleaNext', () => {
  it.each(['0', '1', 'seed-001', '7:1023/4', '', 'ünïcödé ☃', String(2 ** 40)])('draws what seedrandom.alea(%j) draws', (seed) => {
    const reference = seedrandom.alea(seed);
    const state = new Float64Array(4);
    aleaSeed(state, seed);
    for (let i = 0; i < 2000; i++) expect(aleaNext(state)).toBe(reference());
  });
});

describe('aleaShuffle', () => {
  it.each(['0', 'seed-001', '7:1023/4'])('shuffles as aleaNext draws would, and leaves the generator where they would (%j)', (seed) => {
    const fast = new Float64Array(4);
    const slow = new Float64Array(4);
    aleaSeed(fast, seed);
    aleaSeed(slow, seed);
    for (let round = 0; round < 50; round++) {
      const length = 2 + (round % 32);
      const deck = Int8Array.from({ length }, (_, i) => i);
      const expected = Array.from(deck);
      for (let i = length - 1; i > 0; i--) {
        const j = Math.floor(aleaNext(slow) * (i + 1));
        [expected[i], expected[j]] = [expected[j]!, expected[i]!];
      }
      aleaShuffle(fast, deck, 0, length);
      expect(Array.from(deck)).toEqual(expected);
      expect(Array.from(fast)).toEqual(Array.from(slow));
    }
  });
});
