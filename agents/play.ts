// Seats agents at a table and plays sessions: the loop that tournaments, tests and the terminal
// game share. Each decision goes through the agent's batched `act` with a batch of one.

import { NUM_ACTIONS, createGame, type KratzenState, type NewStateOptions, type StateReader } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { assertLegal, type Agent } from './agent.js';

export interface PlayOptions extends NewStateOptions {
  rules?: unknown;
  /** Called before each decision (for displays and logs). */
  onDecision?: (state: KratzenState, seat: number, action: number) => void;
}

/** Plays one session with `agents[s]` at seat s; returns the final state. */
export function playSession(agents: readonly Agent[], options: PlayOptions = {}): KratzenState {
  const state = createGame(options.rules ?? {}).newState(options);
  if (agents.length !== state.numPlayers) throw new Error(`need ${state.numPlayers} agents, got ${agents.length}`);
  const obs = new Float32Array(OBS_SIZE);
  const mask = new Uint8Array(NUM_ACTIONS);
  const seats = new Int32Array(1);
  while (!state.isTerminal) {
    if (state.phase === 'deal') state.dealNextHand();
    const seat = state.currentSeat;
    encodeObservation(state, seat, obs);
    state.legalActionMask(mask);
    seats[0] = seat;
    const agent = agents[seat]!;
    const actions = agent.act(obs, mask, seats);
    assertLegal(actions, mask, NUM_ACTIONS, agent.name);
    options.onDecision?.(state, seat, actions[0]!);
    state.apply(actions[0]!);
  }
  return state;
}

/** Net chips won by each seat over a finished session. */
export function sessionChips(state: StateReader): number[] {
  return Array.from(state.balances, (units) => state.game.toChips(units));
}

