// The Agent interface: batched, observation-based, deterministic for a seed. Every player in the
// project (random, heuristic, pimc, TF.js policy, a checkpoint) is one, so tables, tournaments,
// training leagues and the bridge can seat any of them.

import type { Policy } from '../env/policy.js';
import { OBS_SIZE } from '../env/observation.js';
import { MAX_SEATS, NUM_ACTIONS, ValidationError } from '../env/rules/index.js';

export interface Agent extends Policy {
  /** A short name for reports (`random`, `heuristic`, `pimc`, `policy:<checkpoint>`). */
  readonly name: string;
  /**
   * One action per row: `observations` N x OBS_SIZE, `masks` N x NUM_ACTIONS (1 = legal),
   * `seats` N (the absolute seat each row acts for). Never returns an action whose mask is 0.
   */
  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array;
  /** Releases resources (tensors, workers); optional. */
  dispose?(): void;
}

/** Checks an agent's output against the masks; throws naming the first illegal row. */
export function assertLegal(actions: Int32Array, masks: Uint8Array, numActions: number, agent: string): void {
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    if (!(action >= 0 && action < numActions) || masks[i * numActions + action] !== 1) {
      throw new Error(`agent ${agent} chose illegal action ${action} for row ${i}`);
    }
  }
}

/**
 * The batch size N of an act() call, after checking its shape: observations N x OBS_SIZE, masks
 * N x NUM_ACTIONS, seats N seat indices. Throws a RangeError naming what does not fit (a batch
 * of 1 row with 2 seats was answered with 1 action; a short observation was read as a rule set).
 */
export function checkBatch(observations: Float32Array, masks: Uint8Array, seats?: Int32Array): number {
  const n = seats ? seats.length : masks.length / NUM_ACTIONS;
  if (!Number.isInteger(n) || observations.length !== n * OBS_SIZE || masks.length !== n * NUM_ACTIONS) {
    throw new RangeError(
      `batch shape mismatch: ${observations.length} observation floats, ${masks.length} mask bytes` +
        `${seats ? ` and ${n} seats` : ''} (expected N x ${OBS_SIZE}, N x ${NUM_ACTIONS}${seats ? ' and N' : ''})`,
    );
  }
  if (!seats) return n;
  for (let i = 0; i < n; i++) {
    if (!(seats[i]! >= 0 && seats[i]! < MAX_SEATS)) throw new RangeError(`seats[${i}] is ${seats[i]}, not a seat 0..${MAX_SEATS - 1}`);
  }
  return n;
}

/**
 * Reads row `row` of a batch through `decode`; an observation no env writes (garbage, NaN, all
 * zero) is a ValidationError naming `observations[row]`, not the rule set it failed to decode to.
 */
export function decodeRow<T>(row: number, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    throw new ValidationError('invalid observation', `observations[${row}]`, `not an observation an env writes (${(e as Error).message})`);
  }
}
