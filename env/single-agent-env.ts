// The single-agent view (Gymnasium style): one learning seat; every other seat is played by a
// given policy, so `step` returns only when the learner must act again or the episode ends.
// The reward is the learner's chip change since it last acted (see env.ts for the scale).

import seedrandom from 'seedrandom';
import { MAX_SEATS, NUM_ACTIONS } from './rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec, type ObservationSpec } from './observation.js';
import { RUNNING, TERMINATED, TRUNCATED, Table, parseEnvConfig, type EnvConfig, type EnvConfigInput } from './table.js';
import { randomLegalActions, type Policy } from './policy.js';

export interface SingleAgentEnvOptions {
  config?: EnvConfigInput;
  /** The learning seat. @default 0 */
  learnerSeat?: number;
  /** One policy for all other seats, or one per seat (the learner's entry is ignored). @default uniformly random */
  opponents?: Policy | (Policy | null)[];
}

export interface SingleAgentStep {
  obs: Float32Array;
  mask: Uint8Array;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: { balances: number[]; illegalAction?: boolean };
}

/** Uniformly random legal play, seeded. */
export class RandomPolicy implements Policy {
  private random: () => number;
  constructor(seed: number | string = 0) {
    this.random = seedrandom(`random-policy/${seed}`);
  }
  act(_observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    return randomLegalActions(masks, seats.length, NUM_ACTIONS, this.random, new Int32Array(seats.length));
  }
}

export class SingleAgentEnv {
  readonly config: EnvConfig;
  readonly learnerSeat: number;
  readonly numActions = NUM_ACTIONS;
  readonly observationSize = OBS_SIZE;
  private readonly table: Table;
  private readonly opponents: (Policy | null)[];
  private readonly rewards = new Float32Array(MAX_SEATS);
  private readonly obs = new Float32Array(OBS_SIZE);
  private readonly mask = new Uint8Array(NUM_ACTIONS);
  private readonly seatBuffer = new Int32Array(1);
  private done = true;

  constructor(options: SingleAgentEnvOptions = {}) {
    const { config, game } = parseEnvConfig(options.config);
    this.config = config;
    this.table = new Table(game, config);
    this.learnerSeat = options.learnerSeat ?? 0;
    if (!Number.isInteger(this.learnerSeat) || this.learnerSeat < 0 || this.learnerSeat >= game.numPlayers) {
      throw new RangeError(`learnerSeat must be a seat 0..${game.numPlayers - 1}`);
    }
    const given = options.opponents ?? new RandomPolicy();
    this.opponents = Array.from({ length: game.numPlayers }, (_, s) => (Array.isArray(given) ? given[s] ?? null : given));
    this.opponents.forEach((p, s) => {
      if (!p && s !== this.learnerSeat) throw new Error(`no opponent policy for seat ${s}`);
    });
  }

  observationSpec(): ObservationSpec {
    return observationSpec();
  }

  get state() {
    return this.table.state;
  }

  /** Starts an episode and plays the other seats until the learner must act. */
  reset(options: { seed?: number | string } = {}): { obs: Float32Array; mask: Uint8Array; info: { skippedReward: number } } {
    this.table.reset(options.seed);
    let skippedReward = 0;
    // An episode can end before the learner acts (a tavern5 walkover of a dealing learner);
    // such episodes are played through, their learner reward reported as `skippedReward`, and
    // the next one starts. What the learner gains or pays before its first action in the episode
    // it does act in is added to its first step's reward, so an episode's rewards sum to its net.
    for (let guard = 0; ; guard++) {
      const outcome = this.playOpponents();
      if (outcome === RUNNING) break;
      skippedReward += this.lastLearnerReward;
      if (guard > 1000) throw new Error('the learner never gets to act');
      this.table.reset();
    }
    this.pendingReward = this.lastLearnerReward;
    this.done = false;
    this.writeCurrent();
    return { obs: this.obs.slice(), mask: this.mask.slice(), info: { skippedReward } };
  }

  step(action: number): SingleAgentStep {
    if (this.done) throw new Error('step() called on a finished episode: call reset() first');
    let outcome = this.table.step(action, this.rewards, 0);
    let reward = this.rewards[this.learnerSeat]! + this.pendingReward;
    this.pendingReward = 0;
    if (outcome === RUNNING) {
      outcome = this.playOpponents();
      reward += this.lastLearnerReward;
    }
    this.done = outcome !== RUNNING;
    this.writeCurrent();
    const state = this.table.state;
    const info: SingleAgentStep['info'] = { balances: Array.from(state.balances, (b) => b / state.game.unitsPerChip) };
    if (this.table.illegalActionSeat >= 0) info.illegalAction = true;
    return {
      obs: this.obs.slice(),
      mask: this.mask.slice(),
      reward,
      terminated: outcome === TERMINATED,
      truncated: outcome === TRUNCATED,
      info,
    };
  }

  private lastLearnerReward = 0;
  private pendingReward = 0;

  /** Lets the opponents act until it is the learner's turn; sums the learner's rewards meanwhile. */
  private playOpponents(): number {
    this.lastLearnerReward = 0;
    const state = this.table.state;
    while (this.table.seatToAct >= 0 && this.table.seatToAct !== this.learnerSeat) {
      const seat = this.table.seatToAct;
      encodeObservation(state, seat, this.obs);
      state.legalActionMask(this.mask);
      this.seatBuffer[0] = seat;
      const action = this.opponents[seat]!.act(this.obs, this.mask, this.seatBuffer)[0]!;
      const outcome = this.table.step(action, this.rewards, 0);
      this.lastLearnerReward += this.rewards[this.learnerSeat]!;
      if (outcome !== RUNNING) return outcome;
    }
    return this.table.seatToAct < 0 ? TERMINATED : RUNNING;
  }

  private writeCurrent(): void {
    const state = this.table.state;
    encodeObservation(state, this.learnerSeat, this.obs);
    if (!this.done && state.currentSeat === this.learnerSeat) state.legalActionMask(this.mask);
    else this.mask.fill(0);
  }
}
