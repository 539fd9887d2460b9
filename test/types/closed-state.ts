// Compiled by test/closed-state.test.ts: every write below must fail to compile. A line that
// compiles makes its @ts-expect-error unused, which is itself an error.
import { createGame } from '../../env/rules/index.js';
// @ts-expect-error the live seat view writes into the state's memory: only the observation encoder reads it
import { liveSeatView } from '../../env/rules/index.js';
import { KratzenEnv, VecEnv } from '../../env/index.js';

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
  // @ts-expect-error finished hands are read only
  state.results[0]!.balances[0] = 123456;
  // @ts-expect-error their fields too
  state.results[0]!.kind = 'tie-break';
  // @ts-expect-error the profile's rules are the game's, shared by every state
  state.game.profile.settle = () => state.game.profile.settle as never;
  // @ts-expect-error an env hands out a reader: stepping its state would leave its rewards behind
  new KratzenEnv({}).state.apply(0);
  // @ts-expect-error so does a vector env
  new VecEnv({ numEnvs: 1, config: {} }).stateOf(0).restart('x');
  void liveSeatView;
}
