// Privileged inputs for a critic that sees every hand, during training only (PerfectDou's
// "perfect-training, imperfect-execution"): the policy still acts on its seat's observation,
// but its advantages are measured against a value that knows where the cards are, so the luck
// of the deal no longer swamps the learning signal.
//
// Layout (ORACLE_SIZE floats): for relative seats 1..MAX_SEATS-1 (1 = the observer's left
// neighbour, as in the observation), NUM_CARDS entries, 1 for each card that seat holds now.
// Seats not at the table stay 0.
//
// This is the one place outside the rules core that reads other seats' cards. Nothing that acts
// (agents, the bridge, evaluation) may read it: only a training critic.

import { MAX_SEATS, NUM_CARDS, type KratzenState, type StateReader } from './rules/index.js';
import { checkFloatRows } from './observation.js';

export const ORACLE_SIZE = (MAX_SEATS - 1) * NUM_CARDS;

/**
 * Writes the other seats' hands, relative to `seat`, into `out` at `offset` (ORACLE_SIZE floats).
 * A seat off the table or a buffer short of the row is a RangeError, before anything is written.
 */
export function encodeOtherHands(state: StateReader, seat: number, out: Float32Array, offset = 0): void {
  checkFloatRows(out, offset, ORACLE_SIZE, "the other seats' hands");
  // Seat 9 of four wrote the hands around seat 1, and seat -1 around no seat at all.
  state.assertSeat(seat);
  out.fill(0, offset, offset + ORACLE_SIZE);
  const n = state.game.numPlayers;
  for (let r = 1; r < n; r++) {
    const base = offset + (r - 1) * NUM_CARDS;
    for (const card of state.handOf((seat + r) % n)) out[base + card] = 1;
  }
}
