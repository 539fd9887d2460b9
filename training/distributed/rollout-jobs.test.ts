// A rollout batch read back from Redis is checked before the learner trains on it: Redis is
// shared (docs/scale-out.md), and a forged blob had trained on NaN advantages or on actions
// past the policy's outputs without a word [session 33].
import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS } from '../../env/rules/index.js';
import { OBS_SIZE } from '../../env/observation.js';
import { ORACLE_SIZE } from '../../env/oracle.js';
import type { Batch } from '../rollout.js';
import { checkedRolloutStats, decodeBatch, encodeBatch } from './rollout-jobs.js';

/** Two decisions of one seat, the first's chain pointing to the second. */
function batch(): Batch {
  const size = 2;
  const masks = new Uint8Array(size * NUM_ACTIONS);
  masks[3] = 1;
  masks[NUM_ACTIONS + 5] = 1;
  masks[NUM_ACTIONS + 6] = 1;
  return {
    size,
    observations: new Float32Array(size * OBS_SIZE).fill(0.5),
    masks,
    actions: Int32Array.of(3, 6),
    logProbs: Float32Array.of(0, -0.7),
    values: Float32Array.of(0.1, 0.2),
    advantages: Float32Array.of(0.3, -0.3),
    returns: Float32Array.of(0.4, -0.1),
    otherHands: new Float32Array(size * ORACLE_SIZE),
    rewards: Float32Array.of(0, 1),
    next: Int32Array.of(1, -1),
  };
}

describe('decodeBatch', () => {
  it('gives back the batch a worker encoded', () => {
    const b = batch();
    expect(decodeBatch(encodeBatch(b), b.size, 'job r-1', true)).toEqual(b);
    const { otherHands: _o, rewards: _r, next: _n, ...plain } = b;
    expect(decodeBatch(encodeBatch(plain), b.size)).toEqual(plain);
  });

  it('refuses a batch without the oracle arrays a recording request asked for, or with them unasked', () => {
    const b = batch();
    const { otherHands: _o, rewards: _r, next: _n, ...plain } = b;
    expect(() => decodeBatch(encodeBatch(plain), b.size, 'job r-2', true)).toThrow(/^job r-2 returned a batch whose blob holds 7 arrays, not 10$/);
    expect(() => decodeBatch(encodeBatch(b), b.size, 'job r-2')).toThrow(/blob holds 10 arrays, not 7/);
  });

  it.each<[string, (b: Batch) => void, RegExp]>([
    ['a NaN advantage', (b) => (b.advantages[1] = Number.NaN), /advantages holds NaN at 1/],
    ['an infinite observation', (b) => (b.observations[7] = Number.POSITIVE_INFINITY), /observations holds Infinity at 7/],
    ['an action its mask does not allow', (b) => (b.actions[1] = 4), /action 4 of row 1 is not legal/],
    ['an action past the policy outputs', (b) => (b.actions[0] = NUM_ACTIONS + 9), /action \d+ of row 0 is not legal/],
    ['a mask entry of 2', (b) => (b.masks[10] = 2), /masks hold 2 at 10/],
    ['a chain pointing back', (b) => (b.next![1] = 0), /chain of row 1 points to row 0/],
    ['observations one row short', (b) => (b.observations = b.observations.subarray(0, OBS_SIZE)), /observations is not 2 x/],
    ['masks of another kind', (b) => (b.masks = new Float32Array(b.masks) as unknown as Uint8Array), /masks is not 2 x \d+ of Uint8Array/],
  ])('refuses a batch with %s, naming the job', (_, forge, reason) => {
    const b = batch();
    forge(b);
    expect(() => decodeBatch(encodeBatch(b), b.size, 'job r-7', true)).toThrow(/^job r-7 returned a batch whose /);
    expect(() => decodeBatch(encodeBatch(b), b.size, 'job r-7', true)).toThrow(reason);
  });

  it('refuses a size that is not the rows of the blob', () => {
    const b = batch();
    expect(() => decodeBatch(encodeBatch(b), 3, 'job', true)).toThrow(/is not 3 x/);
    expect(() => decodeBatch(encodeBatch(b), Number.NaN, 'job', true)).toThrow(/size null is no row count/);
  });
});

describe('checkedRolloutStats', () => {
  const stats = { envSteps: 80, learnerDecisions: 40, episodes: 3, learnerReturn: -0.25, learnerEpisodeSeats: 3 };
  it('keeps the stats of a reply, and only them', () => {
    expect(checkedRolloutStats({ ...stats, extra: 1 }, 'job a')).toEqual(stats);
  });
  it.each([
    [{ ...stats, episodes: -1 }, /episodes -1 is no count/],
    [{ ...stats, envSteps: 1.5 }, /envSteps 1.5 is no count/],
    [{ ...stats, learnerReturn: 1e400 }, /learnerReturn null is not a finite number/],
    [{ ...stats, learnerReturn: '3' }, /learnerReturn "3" is not a finite number/],
    [null, /envSteps undefined is no count/],
  ])('refuses %j', (forged, reason) => {
    expect(() => checkedRolloutStats(forged, 'job a')).toThrow(reason);
  });
});
