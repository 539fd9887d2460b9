import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS } from './rules/index.js';
import { randomLegalAction, randomLegalActions } from './policy.js';
import { VecEnv } from './vec-env.js';

/** Rows one at a time, the reference the batched sampler must match draw for draw. */
function oneByOne(masks: Uint8Array, numRows: number, numActions: number, seed: string): number[] {
  const random = seedrandom(seed);
  return Array.from({ length: numRows }, (_, i) => randomLegalAction(masks, i, numActions, random));
}

function batched(masks: Uint8Array, numRows: number, numActions: number, seed: string): number[] {
  return Array.from(randomLegalActions(masks, numRows, numActions, seedrandom(seed), new Int32Array(numRows)));
}

describe('randomLegalActions', () => {
  it('draws the same actions as randomLegalAction row by row, on real masks', () => {
    const vec = new VecEnv({ numEnvs: 37, config: { rules: { profile: 'tavern5', players: 5, exchange: {} } } }).reset(3);
    const random = seedrandom('steps');
    const actions = new Int32Array(37);
    for (let t = 0; t < 200; t++) {
      expect(batched(vec.masks, 37, NUM_ACTIONS, `t${t}`)).toEqual(oneByOne(vec.masks, 37, NUM_ACTIONS, `t${t}`));
      vec.step(randomLegalActions(vec.masks, 37, NUM_ACTIONS, random, actions));
    }
  });

  it('handles any row width, byte offset, buffer end and non-zero byte value', () => {
    const random = seedrandom('shapes');
    for (let trial = 0; trial < 300; trial++) {
      const numActions = 1 + Math.floor(random() * 20);
      const numRows = 1 + Math.floor(random() * 40); // under 8 rows go row by row
      const lead = Math.floor(random() * 5);
      const tail = Math.floor(random() * 3); // 0: the masks end exactly at the buffer's end
      const buffer = new Uint8Array(lead + numRows * numActions + tail);
      const masks = buffer.subarray(lead, lead + numRows * numActions);
      for (let k = 0; k < masks.length; k++) masks[k] = random() < 0.3 ? 1 + Math.floor(random() * 255) : 0;
      buffer.fill(1, 0, lead); // bytes outside the masks must never be read as legal
      buffer.fill(1, lead + masks.length);
      expect(batched(masks, numRows, numActions, `s${trial}`)).toEqual(oneByOne(masks, numRows, numActions, `s${trial}`));
    }
  });

  it('gives -1 for a row with no legal action and checks its array sizes', () => {
    const masks = new Uint8Array(10 * 6);
    masks[7] = 1;
    const actions = Array.from(randomLegalActions(masks, 10, 6, seedrandom('e'), new Int32Array(10)));
    expect(actions).toEqual([-1, 1, -1, -1, -1, -1, -1, -1, -1, -1]);
    expect(() => randomLegalActions(masks, 11, 6, Math.random, new Int32Array(11))).toThrow(/masks hold 60 entries/);
    expect(() => randomLegalActions(masks, 10, 6, Math.random, new Int32Array(1))).toThrow(/out has 1 entries/);
  });
});
