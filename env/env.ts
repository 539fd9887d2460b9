// The single-table environment with Gymnasium/PettingZoo semantics in camelCase. Multi-agent
// (AEC-style): every seat acts in turn; `step` returns the observation and legal-action mask of
// the seat to act next.
//
// Rewards: `reward[s]` is seat s's chip change caused by this step (contributions, antes, fees,
// payouts, penalties), times `rewardScale`. Summed over an episode they equal each seat's net
// balance change over it (for a session episode, the final balances; for a hand episode, the
// hand's settlement including its contributions). `last()` gives the seat to act the sum of its
// rewards since it last acted, as PettingZoo's `_cumulative_rewards`.
//
// At the end of an episode (`terminated`), `seat` is -1, the mask is all zero and the observation
// is that of the seat that acted last.

import { NUM_ACTIONS, checkOptionKeys, replayResult, stateToRecord, type HandReport, type StateReader } from './rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec, type ObservationSpec } from './observation.js';
import { observationView, type ObservationView } from './observation-view.js';
import { TERMINATED, TRUNCATED, Table, parseEnvConfig, type EnvConfig, type EnvConfigInput } from './table.js';

export interface EnvStepInfo {
  /** Hands finished by this step (docs/rules.md §6 reports, chips). */
  hands?: HandReport[];
  /** Present when the session ended in this step. */
  session?: { balances: number[]; pot: number; winners: number[] };
  /** The offending seat, when the episode ended on an illegal action. */
  illegalActionSeat?: number;
}

export interface EnvReset {
  obs: Float32Array;
  mask: Uint8Array;
  seat: number;
  info: EnvStepInfo;
}

export interface EnvStep extends EnvReset {
  reward: Float32Array;
  terminated: boolean;
  truncated: boolean;
}

export interface EnvMetadata {
  obsVersion: number;
  numActions: number;
  observationSize: number;
  autoresetMode: 'same-step' | 'none';
  rewardScale: number;
}

export class KratzenEnv {
  readonly config: EnvConfig;
  readonly numPlayers: number;
  readonly numActions = NUM_ACTIONS;
  readonly observationSize = OBS_SIZE;
  readonly possibleAgents: number[];
  readonly metadata: EnvMetadata;
  private readonly table: Table;
  private readonly cumulative: Float32Array;
  private readonly stepReward: Float32Array;
  private resultsSeen = 0;
  private done = true;
  /** How the last episode ended: TERMINATED or TRUNCATED (while `done`), as `last()` reports it. */
  private endedBy = 0;

  constructor(config: EnvConfigInput = {}) {
    const { config: parsed, game } = parseEnvConfig(config);
    this.config = parsed;
    this.table = new Table(game, parsed);
    this.numPlayers = game.numPlayers;
    this.possibleAgents = Array.from({ length: game.numPlayers }, (_, s) => s);
    this.cumulative = new Float32Array(game.numPlayers);
    this.stepReward = new Float32Array(game.numPlayers);
    this.metadata = {
      obsVersion: observationSpec().version,
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      autoresetMode: 'none',
      rewardScale: parsed.rewardScale,
    };
  }

  observationSpec(): ObservationSpec {
    return observationSpec();
  }

  /** The underlying rules-core state, to read: stepping it past the env would leave the env's rewards and episodes behind. */
  get state(): StateReader {
    return this.startedState;
  }

  /** The table's state; before the first reset there is none (reading it failed inside the core). */
  private get startedState() {
    this.assertStarted();
    return this.table.state;
  }

  private assertStarted(): void {
    if (this.table.state === undefined) throw new Error('call reset() first');
  }

  /** PettingZoo's `agent_selection`: the seat to act, -1 when the episode is over. */
  get agentSelection(): number {
    return this.done ? -1 : this.table.seatToAct;
  }

  reset(options: { seed?: number | string; options?: Record<string, never> } = {}): EnvReset {
    checkResetOptions(options, ['seed', 'options']);
    if (options.options !== undefined && (typeof options.options !== 'object' || options.options === null || Object.keys(options.options).length > 0)) {
      throw new TypeError(`reset takes no options, got ${JSON.stringify(options.options)?.slice(0, 60)}`);
    }
    this.table.reset(options.seed);
    this.cumulative.fill(0);
    this.resultsSeen = this.startedState.results.length;
    this.done = false;
    return { ...this.current(), info: {} };
  }

  step(action: number): EnvStep {
    this.assertStarted();
    if (this.done) throw new Error('step() called on a finished episode: call reset() first');
    const outcome = this.table.step(action, this.stepReward, 0);
    // PettingZoo: the actor's running sum restarts when it acts, then every seat adds this step.
    this.cumulative[this.table.lastActor] = 0;
    for (let s = 0; s < this.numPlayers; s++) this.cumulative[s]! += this.stepReward[s]!;
    this.done = outcome !== 0;
    this.endedBy = outcome;
    const info = this.info();
    return {
      ...this.current(),
      reward: this.stepReward.slice(),
      terminated: outcome === TERMINATED,
      truncated: outcome === TRUNCATED,
      info,
    };
  }

  /** PettingZoo's `last()`: the seat to act, its observation, and its rewards since it last acted. */
  last(): { seat: number; obs: Float32Array; mask: Uint8Array; reward: number; terminated: boolean; truncated: boolean } {
    const seat = this.agentSelection;
    const { obs, mask } = this.current();
    // A time limit (maxSteps, an amount overflow) is a truncation here as in step(): it said terminated.
    return { seat, obs, mask, reward: seat >= 0 ? this.cumulative[seat]! : 0, terminated: this.done && this.endedBy === TERMINATED, truncated: this.done && this.endedBy === TRUNCATED };
  }

  /** The observation of any seat (what that seat may know), e.g. for PettingZoo's `observe`. */
  observe(seat: number): Float32Array {
    const obs = new Float32Array(OBS_SIZE);
    encodeObservation(this.startedState, seat, obs);
    return obs;
  }

  /** The structured view of a seat's observation. */
  view(seat?: number): ObservationView {
    // The default seat is read after the started check: before a reset it was a TypeError.
    const state = this.startedState;
    return observationView(state, seat === undefined ? this.table.observer : seat);
  }

  /** The record of the session so far (docs/rules.md §5). */
  record() {
    return stateToRecord(this.startedState);
  }

  private current(): { obs: Float32Array; mask: Uint8Array; seat: number } {
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    const seat = this.done ? -1 : this.table.seatToAct;
    encodeObservation(this.startedState, this.table.observer, obs);
    if (seat >= 0) this.startedState.legalActionMask(mask);
    return { obs, mask, seat };
  }

  private info(): EnvStepInfo {
    const state = this.startedState;
    const info: EnvStepInfo = {};
    if (state.results.length > this.resultsSeen) {
      const result = replayResult(state);
      info.hands = result.hands.slice(this.resultsSeen);
      this.resultsSeen = state.results.length;
      if (state.complete) {
        info.session = { balances: result.final.balances, pot: result.final.pot, winners: result.final.winners ?? [] };
      }
    }
    if (this.table.illegalActionSeat >= 0) info.illegalActionSeat = this.table.illegalActionSeat;
    return info;
  }
}

/**
 * `options` of a reset is an object of the `allowed` keys: reset(5) and reset({ sed: 5 }) played
 * an unseeded episode without a word.
 */
export function checkResetOptions(options: unknown, allowed: readonly string[]): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`reset takes an object ({ seed: 5 }), got ${JSON.stringify(options)?.slice(0, 40) ?? String(options)}`);
  }
  checkOptionKeys(options, allowed, 'reset');
}

