// The Agent interface: batched, observation-based, deterministic for a seed. Every player in the
// project (random, heuristic, pimc, TF.js policy, a checkpoint) is one, so tables, tournaments,
// training leagues and the bridge can seat any of them.

import type { Policy } from '../env/policy.js';

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
