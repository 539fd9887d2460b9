// The single-agent view (Gymnasium style): one learning seat; every other seat is played by a
// given policy, so `step` returns only when the learner must act again or the episode ends
// (single-agent-table.ts). The reward is the learner's chip change since it last acted (see
// env.ts for the scale).

import seedrandom from 'seedrandom';
import { MAX_SEATS, NUM_ACTIONS, checkOptionKeys, checkSeed, type StateReader } from './rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec, type ObservationSpec } from './observation.js';
import { RUNNING, TERMINATED, TRUNCATED, parseEnvConfig, type EnvConfig, type EnvConfigInput } from './table.js';
import { SingleAgentTable } from './single-agent-table.js';
import { randomLegalActions, type Policy } from './policy.js';
import { checkResetOptions } from './env.js';

export interface SingleAgentEnvOptions {
  config?: EnvConfigInput;
  /** The learning seat. @default 0 */
  learnerSeat?: number;
  /** One policy for all other seats, or one per seat (the learner's entry is ignored). @default uniformly random */
  opponents?: Policy | (Policy | null)[];
}

/** Every option SingleAgentEnv takes (complete by type, as VecEnv's). */
const SINGLE_AGENT_ENV_OPTIONS = Object.keys({ config: true, learnerSeat: true, opponents: true } satisfies Record<keyof SingleAgentEnvOptions, true>);

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
    this.random = RandomPolicy.generator(seed);
  }
  /** Restarts the generator as `new RandomPolicy(seed)` starts it. */
  reseed(seed: number | string): void {
    this.random = RandomPolicy.generator(seed);
  }
  private static generator(seed: number | string): () => number {
    checkSeed(seed);
    return seedrandom(`random-policy/${seed}`);
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
  private readonly table: SingleAgentTable;
  private readonly rewards = new Float32Array(MAX_SEATS);
  private readonly obs = new Float32Array(OBS_SIZE);
  private readonly mask = new Uint8Array(NUM_ACTIONS);
  private done = true;
  /**
   * The opponents this env made (no `opponents` given): a seeded reset reseeds them, so equal
   * seeds give equal episodes (their moves went on from one stream across resets). Opponents
   * the caller gives are the caller's to seed.
   */
  private readonly ownOpponents: RandomPolicy | null;
  /** True while reset or step runs: the opponents' policies are called then. */
  private busy = false;

  constructor(options: SingleAgentEnvOptions = {}) {
    checkOptionKeys(options, SINGLE_AGENT_ENV_OPTIONS, 'SingleAgentEnv');
    const { config, game } = parseEnvConfig(options.config);
    this.config = config;
    this.learnerSeat = options.learnerSeat ?? 0;
    // null, as undefined, asks for the default (it always did).
    this.ownOpponents = options.opponents == null ? new RandomPolicy() : null;
    const given = options.opponents ?? this.ownOpponents!;
    const opponents = Array.from({ length: game.numPlayers }, (_, s) => (Array.isArray(given) ? given[s] ?? null : given));
    this.table = new SingleAgentTable(game, config, this.learnerSeat, opponents);
  }

  observationSpec(): ObservationSpec {
    return observationSpec();
  }

  /** The table's state; before the first reset there is none, said as KratzenEnv says it (it was undefined). */
  get state(): StateReader {
    if (this.table.state === undefined) throw new Error('call reset() first');
    return this.table.state;
  }

  /**
   * Starts an episode and plays the other seats until the learner must act. `info.skippedReward`
   * is the learner's reward of episodes played through here without a decision of its own (see
   * single-agent-table.ts); the first step's reward includes it.
   */
  reset(options: { seed?: number | string } = {}): { obs: Float32Array; mask: Uint8Array; info: { skippedReward: number } } {
    checkResetOptions(options, ['seed']);
    this.whileBusy(() => {
      // reseed checks the seed as the table's reset does.
      if (options.seed !== undefined) this.ownOpponents?.reseed(options.seed);
      this.table.reset(options.seed);
    });
    this.done = false;
    this.writeCurrent();
    return { obs: this.obs.slice(), mask: this.mask.slice(), info: { skippedReward: this.table.skippedReward } };
  }

  step(action: number): SingleAgentStep {
    return this.whileBusy(() => this.stepNow(action));
  }

  private stepNow(action: number): SingleAgentStep {
    if (this.done) throw new Error('step() called on a finished episode: call reset() first');
    const outcome = this.table.step(action, this.rewards, 0);
    this.done = outcome !== RUNNING;
    this.writeCurrent();
    const state = this.table.state;
    const info: SingleAgentStep['info'] = { balances: Array.from(state.balances, (b) => state.game.toChips(b)) };
    if (this.table.illegalActionSeat >= 0) info.illegalAction = true;
    return {
      obs: this.obs.slice(),
      mask: this.mask.slice(),
      reward: this.rewards[this.learnerSeat]!,
      terminated: outcome === TERMINATED,
      truncated: outcome === TRUNCATED,
      info,
    };
  }

  /**
   * Runs `work` (which calls the opponents' policies) unless a reset or step already runs: an
   * opponent that stepped or reset its own env had its action applied as the learner's, and the
   * outer call then failed on a state changed under it (VecEnv refuses the same).
   */
  private whileBusy<T>(work: () => T): T {
    if (this.busy) throw new Error('SingleAgentEnv is stepping or resetting already (an opponent policy may not step or reset its own env)');
    this.busy = true;
    try {
      return work();
    } finally {
      this.busy = false;
    }
  }

  private writeCurrent(): void {
    const state = this.table.state;
    encodeObservation(state, this.learnerSeat, this.obs);
    if (!this.done && state.currentSeat === this.learnerSeat) state.legalActionMask(this.mask);
    else this.mask.fill(0);
  }
}
