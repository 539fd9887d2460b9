// What the env needs from whoever chooses actions for seats it does not learn: a batched
// `act` (the same shape as the Agent interface of agents/, which builds on this).

/** Chooses one action per row: observations N x OBS_SIZE, masks N x NUM_ACTIONS, seats N. */
export interface Policy {
  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array;
}

/** Legal actions of the row being sampled: one pass over the mask instead of two. */
let legalScratch = new Int32Array(128);

/** A uniformly random legal action of `mask` row `row`; -1 when the row has none. */
export function randomLegalAction(mask: Uint8Array, row: number, numActions: number, random: () => number): number {
  if (legalScratch.length < numActions) legalScratch = new Int32Array(numActions);
  const legal = legalScratch;
  const base = row * numActions;
  let count = 0;
  for (let a = 0; a < numActions; a++) if (mask[base + a]) legal[count++] = a;
  if (count === 0) return -1;
  return legal[Math.floor(random() * count)]!;
}
