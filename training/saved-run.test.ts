// What a resume takes from a checkpoint is checked against it first: the trainer state against
// the checkpoint's step, saved weight arrays against the model they go into [probe round 6].

import { describe, expect, it } from 'vitest';
import type { LoadedCheckpoint } from '../checkpoints/index.js';
import { encodeArrays } from './distributed/arrays.js';
import { parseTrainConfig } from './config.js';
import { savedArrays, savedTrainerState } from './saved-run.js';

const CONFIG = parseTrainConfig({ league: { maxSnapshots: 2 } });

/** The parts of a loaded checkpoint these checks read. */
function checkpoint(step: number, extras: Record<string, { data?: Uint8Array; meta?: unknown }>): LoadedCheckpoint {
  const map = new Map(Object.entries(extras).map(([name, e]) => [name, { data: e.data ?? new Uint8Array(0), meta: e.meta as never }]));
  return { dir: 'ck', manifest: { step } as never, extras: map } as unknown as LoadedCheckpoint;
}

describe('savedTrainerState', () => {
  it('takes a state of the checkpoint\'s own update, and refuses any other, naming the field', () => {
    const state = { update: 4, snapshots: ['snapshot-u2', 'snapshot-u4'] };
    expect(savedTrainerState(checkpoint(4, { trainer: { meta: state } }), CONFIG)).toEqual(state);
    const refused = (step: number, meta: unknown) => () => savedTrainerState(checkpoint(step, { trainer: { meta } }), CONFIG);
    expect(refused(4, { ...state, update: 2 })).toThrow(/extras\.trainer\.meta\.update: 2, but the checkpoint is of update 4/);
    expect(refused(4, null)).toThrow(/extras\.trainer\.meta: /);
    expect(() => savedTrainerState(checkpoint(4, {}), CONFIG)).toThrow(/extras\.trainer\.meta: /);
    expect(refused(4, { ...state, update: '4' })).toThrow(/extras\.trainer\.meta\.update: /);
    expect(refused(4, { ...state, snapshots: ['snapshot-u1', 'snapshot-u2', 'snapshot-u3'] })).toThrow(/extras\.trainer\.meta\.snapshots: /);
    expect(refused(4, { ...state, snapshots: ['../../x'] })).toThrow(/snapshots\[0\]: is not a league snapshot name/);
    expect(refused(4, { ...state, behaviourSnapshots: ['snapshot-u5'] })).toThrow(/behaviourSnapshots\[0\]: snapshot-u5 is later than the checkpoint's update 4/);
    expect(refused(4, { ...state, extra: 1 })).toThrow(/extras\.trainer\.meta\.extra: /);
  });
});

describe('savedArrays', () => {
  it('returns arrays of the sizes the model takes, and refuses damaged, misfitting or non-finite ones', () => {
    const arrays = [new Float32Array([1, 2, 3]), new Float32Array([4])];
    const loaded = (data: Uint8Array) => checkpoint(1, { critic: { data } });
    expect(savedArrays(loaded(encodeArrays(arrays)), 'critic', [3, 1])).toEqual(arrays);
    expect(() => savedArrays(loaded(encodeArrays(arrays).subarray(0, 20)), 'critic', [3, 1])).toThrow(/extras\.critic: array blob is truncated/);
    expect(() => savedArrays(loaded(new Uint8Array([1, 2, 3])), 'critic', [3, 1])).toThrow(/extras\.critic: array blob too short/);
    expect(() => savedArrays(loaded(encodeArrays(arrays)), 'critic', [3, 1, 5])).toThrow(/extras\.critic: 2 arrays, but the model takes 3 arrays of \[3,1,5\] values/);
    expect(() => savedArrays(loaded(encodeArrays(arrays)), 'critic', [2, 2])).toThrow(/extras\.critic: array 0 holds 3 values/);
    expect(() => savedArrays(loaded(encodeArrays([arrays[0]!, new Float32Array([Infinity])])), 'critic', [3, 1])).toThrow(/extras\.critic: array 1 holds Infinity at 0, not a finite number/);
  });
});
