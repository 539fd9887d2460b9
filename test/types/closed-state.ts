// Compiled by test/closed-state.test.ts: every write below must fail to compile. A line that
// compiles makes its @ts-expect-error unused, which is itself an error.
import { createGame } from '../../env/rules/index.js';

export function closed(): void {
  const state = createGame({}).newState({ seed: 1 });
  // @ts-expect-error the pot is read only
  state.pot = 100;
  // @ts-expect-error so is the phase
  state.phase = 'over';
  // @ts-expect-error and the seat to act
  state.currentSeat = 2;
  // @ts-expect-error balances are read through a read-only view
  state.balances[0] = 5;
  // @ts-expect-error the quotas too
  state.quotas[0] = 0;
  // @ts-expect-error tricks won
  state.tricksWon[1] = 5;
  // @ts-expect-error the data is private
  state.d.pot = 1;
  // @ts-expect-error the trump
  state.trump = 0;
  // @ts-expect-error the dealer
  state.dealer = 1;
  // @ts-expect-error the session's end
  state.complete = true;
}
