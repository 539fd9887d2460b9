// Seats agents at a table and plays sessions (tournaments, tests), and asks an agent for one
// decision (`decide`, which the terminal game's bots use too): through the agent's batched `act`
// with a batch of one.

import { NUM_ACTIONS, createGame, type KratzenState, type NewStateOptions, type StateReader } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { assertLegal, type Agent } from './agent.js';

export interface PlayOptions extends NewStateOptions {
  rules?: unknown;
  /** Called before each decision (for displays and logs). */
  onDecision?: (state: KratzenState, seat: number, action: number) => void;
}

/** The rows one decision at a time is asked in (reused: a decision allocates nothing here). */
export class DecisionRows {
  readonly observation = new Float32Array(OBS_SIZE);
  readonly mask = new Uint8Array(NUM_ACTIONS);
  readonly seats = new Int32Array(1);
}

/** `agent`'s action for `seat`, to act in `state`: its `act` on a batch of one, checked legal. */
export function decide(agent: Agent, state: StateReader, seat: number, rows: DecisionRows = new DecisionRows()): number {
  encodeObservation(state, seat, rows.observation);
  state.legalActionMask(rows.mask);
  rows.seats[0] = seat;
  const actions = agent.act(rows.observation, rows.mask, rows.seats);
  assertLegal(actions, rows.mask, NUM_ACTIONS, agent.name);
  return actions[0]!;
}

/** Plays one session with `agents[s]` at seat s; returns the final state. */
export function playSession(agents: readonly Agent[], options: PlayOptions = {}): KratzenState {
  const { rules, onDecision: _, ...stateOptions } = options;
  const state = createGame(rules ?? {}).newState(stateOptions);
  if (agents.length !== state.numPlayers) throw new Error(`need ${state.numPlayers} agents, got ${agents.length}`);
  const rows = new DecisionRows();
  while (!state.isTerminal) {
    if (state.phase === 'deal') state.dealNextHand();
    const seat = state.currentSeat;
    const action = decide(agents[seat]!, state, seat, rows);
    options.onDecision?.(state, seat, action);
    state.apply(action);
  }
  return state;
}

/** Net chips won by each seat over a finished session. */
export function sessionChips(state: StateReader): number[] {
  return Array.from(state.balances, (units) => state.game.toChips(units));
}

