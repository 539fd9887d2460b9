// What the env needs from whoever chooses actions for seats it does not learn: a batched
// `act` (the same shape as the Agent interface of agents/, which builds on this).

/** Chooses one action per row: observations N x OBS_SIZE, masks N x NUM_ACTIONS, seats N. */
export interface Policy {
  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array;
}

/** A uniformly random legal action of `mask` row `row`; -1 when the row has none. */
export function randomLegalAction(mask: Uint8Array, row: number, numActions: number, random: () => number): number {
  const base = row * numActions;
  let count = 0;
  for (let a = 0; a < numActions; a++) count += mask[base + a]!;
  if (count === 0) return -1;
  let k = Math.floor(random() * count);
  for (let a = 0; a < numActions; a++) {
    if (mask[base + a] && k-- === 0) return a;
  }
  return -1;
}
