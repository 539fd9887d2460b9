// The optimizer extra of a checkpoint: a round trip, and refusal of meta that does not match the blob.
import { describe, expect, it } from 'vitest';
import { CheckpointError } from './errors.js';
import { checkAdamState, decodeOptimizerState, encodeOptimizerState } from './optimizer-state.js';

const STATE = [
  { name: 'iter', shape: [], data: new Float32Array([7]) },
  { name: 'dense/kernel/m', shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) },
];

describe('optimizer state as a checkpoint extra', () => {
  it('round-trips names, shapes and values', () => {
    const decoded = decodeOptimizerState(encodeOptimizerState(STATE), 'ckpt');
    expect(decoded.map((w) => [w.name, w.shape, Array.from(w.data)])).toEqual(STATE.map((w) => [w.name, w.shape, Array.from(w.data)]));
  });

  it('refuses shapes that do not cover the blob, and malformed meta, naming the field', () => {
    const blob = encodeOptimizerState(STATE);
    const refuse = (meta: unknown, data = blob.data) => {
      try {
        decodeOptimizerState({ data, meta: meta as never }, 'ckpt');
      } catch (e) {
        expect(e).toBeInstanceOf(CheckpointError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refuse([{ name: 'iter', shape: [] }])).toMatch(/shapes hold 1 floats, the blob 7/);
    expect(refuse([{ name: 'x', shape: [-1] }])).toMatch(/extras\.optimizer\.meta\[0\]\.shape\[0\]/);
    expect(refuse({ not: 'a list' })).toMatch(/extras\.optimizer\.meta/);
    expect(refuse(blob.meta, blob.data.subarray(0, 5))).toMatch(/not a float32 array/);
    // NaN moments turned the first update's weights into NaN, saved as a league snapshot [probe round 6].
    for (const bad of [NaN, Infinity]) {
      const damaged = encodeOptimizerState([STATE[0]!, { ...STATE[1]!, data: new Float32Array([1, 2, bad, 4, 5, 6]) }]);
      expect(refuse(damaged.meta, damaged.data)).toMatch(new RegExp(`extras\\.optimizer: value 3 is ${bad}, not a finite number`));
    }
  });
});

describe('checkAdamState', () => {
  const scalar = (name: string) => ({ name, shape: [], data: new Float32Array(1) });
  const array = (name: string, shape: number[]) => ({ name, shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) });
  const shapes = [[2, 3], [3]];
  const powers = [scalar('accBeta1'), scalar('accBeta2')];
  it('takes the step count, first and second moments in variable order, with or without the powers', () => {
    const moments = [scalar('iter'), array('k/m', [2, 3]), array('b/m', [3]), array('k/v', [2, 3]), array('b/v', [3])];
    expect(() => checkAdamState(moments, shapes, 'ck')).not.toThrow();
    expect(() => checkAdamState([...moments, ...powers], shapes, 'ck')).not.toThrow();
    // Saved before Adam's first step: the step count alone.
    expect(() => checkAdamState([scalar('iter'), ...powers], shapes, 'ck')).not.toThrow();
  });
  it('refuses arrays that do not fit the variables, naming the first that does not', () => {
    const swapped = [scalar('iter'), array('b/m', [3]), array('k/m', [2, 3]), array('k/v', [2, 3]), array('b/v', [3])];
    expect(() => checkAdamState(swapped, shapes, 'ck')).toThrow(/extras\.optimizer\.meta: array 1 \(b\/m\) has shape \[3\]/);
    expect(() => checkAdamState([scalar('iter'), array('k/m', [2, 3])], shapes, 'ck')).toThrow(/2 arrays besides accBeta1 and accBeta2.*takes 5/);
    expect(() => checkAdamState([scalar('iter'), array('k/m', [2, 3])], shapes, 'ck')).toThrow(CheckpointError);
  });
});

