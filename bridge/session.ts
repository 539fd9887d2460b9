// Environment sessions: N tables stepped by one message. Multi-agent sessions wrap a VecEnv (the
// client acts for the seat to act of every env); single-agent sessions hold N SingleAgentEnvs
// whose other seats are played on the server by agents from the registry. Both auto-reset in the
// same step, and both refuse a batch holding an illegal action before any env is stepped.
//
// What a client may see: a multi-agent client plays every seat, so it gets every seat's view and
// the full record of finished hands (never the deck of a hand in progress: it holds the talon). A
// single-agent client plays one seat against bots: it gets that seat's view and record only, and
// its seeds are mixed with the server's secret, so it cannot deal the bots' hands itself.

import { createHmac } from 'node:crypto';
import { MAX_SEATS, NUM_ACTIONS, ValidationError, actionToString, stateToRecord, type KratzenState } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { parseEnvConfig, type EnvConfig, type EnvConfigInput } from '../env/table.js';
import { VecEnv } from '../env/vec-env.js';
import { SingleAgentEnv } from '../env/single-agent-env.js';
import type { Agent } from '../agents/agent.js';
import { createAgent, type AgentLimits } from '../agents/registry.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { BridgeError } from './errors.js';
import type { BatchView, FinalEntry } from './codec.js';
import { seatRecord } from '../env/table-view.js';

export interface SessionOptions {
  id: string;
  mode: 'multi' | 'single';
  numEnvs: number;
  config?: EnvConfigInput;
  learnerSeat: number;
  opponents: string | (string | null)[];
  /** Loads checkpoint directories named as opponents. */
  loadCheckpoint: (dir: string, context: { rules: unknown; seed: number | string }) => Promise<Agent>;
  /** Caps on the opponents' options (pimc samples, time budget). */
  limits: AgentLimits;
  /** Mixed into single-agent seeds (see the file header). */
  seedSecret: string;
}

/**
 * Lets a long step give way: `due()` says a slice of work is used up, `pause()` lets other work
 * run, and resolves rejected when the client is gone.
 */
export interface StepControl {
  due(): boolean;
  pause(): Promise<void>;
}

/** What env.record answers: a full record (multi) or the seat's own (single, see table-view.ts). */
export type SessionRecord = { kind: 'full'; record: ReturnType<typeof stateToRecord> } | { kind: 'seat'; record: ReturnType<typeof seatRecord> };

export interface EnvSession {
  readonly id: string;
  readonly mode: 'multi' | 'single';
  readonly numEnvs: number;
  readonly numPlayers: number;
  readonly config: EnvConfig;
  /** single sessions: the learner seat; multi: null. */
  readonly learnerSeat: number | null;
  reset(seed: number | string | undefined, control?: StepControl): Promise<BatchView>;
  step(actions: number[], control?: StepControl): BatchView | Promise<BatchView>;
  /** The rules-core state of env `env` (read only): its episode in progress, or the last one it finished. */
  tableState(env: number, episode: 'current' | 'ended'): KratzenState;
  /** The seat a client may view in env `env`: the learner seat of a single session, any seat of a multi one. */
  viewerSeat(env: number, episode: 'current' | 'ended', seat: number | undefined): number;
  /** The record a client may have of env `env`'s session (see the file header). */
  record(env: number, episode: 'current' | 'ended'): SessionRecord & { numHands: number; complete: boolean };
  close(): void;
}

/** Validates the config and builds the session; config errors name `params.config.<field>`. */
export async function createSession(options: SessionOptions): Promise<EnvSession> {
  let parsed: ReturnType<typeof parseEnvConfig>;
  try {
    parsed = parseEnvConfig(options.config);
  } catch (e) {
    if (e instanceof ValidationError) {
      const field = e.field ? `params.config.${e.field}` : 'params.config';
      throw new BridgeError('invalid_params', `${field}: ${e.reason}`, field);
    }
    throw e;
  }
  const numPlayers = parsed.game.numPlayers;
  if (options.mode === 'multi') return new MultiSession(options, parsed.config, numPlayers);
  if (options.learnerSeat >= numPlayers) {
    throw new BridgeError('invalid_params', `params.learnerSeat: must be a seat 0..${numPlayers - 1}`, 'params.learnerSeat');
  }
  const session = new SingleSession(options, parsed.config, numPlayers);
  await session.buildOpponents(0); // refuses unknown specs and foreign checkpoints at create time
  return session;
}

/** The seed a single-agent session really plays: the client's, keyed with the server's secret. */
export function mixSeed(secret: string, seed: number | string): string {
  return createHmac('sha256', secret).update(String(seed)).digest('hex').slice(0, 32);
}

/** Reason an action is illegal; `apply` throws before changing anything when it is. */
function illegalReason(state: KratzenState, action: number): string {
  try {
    state.apply(action);
  } catch (e) {
    return (e as { reason?: string }).reason ?? (e as Error).message;
  }
  throw new Error('illegalReason called with a legal action');
}

function checkBatch(actions: number[], numEnvs: number, stateOf: (i: number) => KratzenState, enforce: boolean): void {
  if (actions.length !== numEnvs) {
    throw new BridgeError('invalid_params', `params.actions: expected ${numEnvs} actions (one per env), got ${actions.length}`, 'params.actions');
  }
  if (!enforce) return;
  // Every env is checked before any is stepped: a refused batch leaves the whole session unchanged.
  for (let i = 0; i < numEnvs; i++) {
    const state = stateOf(i);
    const action = actions[i]!;
    if (state.isLegal(action)) continue;
    const seat = state.currentSeat;
    const reason = illegalReason(state, action);
    throw new BridgeError('illegal_action', `env ${i}: illegal action ${action} (${actionToString(action)}) for seat ${seat}: ${reason}`, `params.actions[${i}]`, {
      env: i,
      action,
      seat,
      reason,
    });
  }
}

/** What the client sees of both kinds; `fresh[i]` is 1 while env i has not been stepped in its episode. */
abstract class BaseSession implements EnvSession {
  readonly id: string;
  readonly numEnvs: number;
  abstract readonly mode: 'multi' | 'single';
  protected started = false;
  protected seed: number | string = 0;
  protected resets = 0;
  protected readonly fresh: Uint8Array;
  protected final: FinalEntry[] = [];
  /** The state of the last episode each env finished (auto-reset replaces it in the env). */
  protected readonly ended: (KratzenState | null)[];
  abstract readonly learnerSeat: number | null;

  constructor(
    options: SessionOptions,
    readonly config: EnvConfig,
    readonly numPlayers: number,
  ) {
    this.id = options.id;
    this.numEnvs = options.numEnvs;
    this.fresh = new Uint8Array(options.numEnvs);
    this.ended = new Array<KratzenState | null>(options.numEnvs).fill(null);
  }

  abstract view(): BatchView;
  protected abstract resetAll(seed: number | string, control?: StepControl): Promise<void>;
  protected abstract resetStale(control?: StepControl): Promise<void>;
  abstract step(actions: number[], control?: StepControl): BatchView | Promise<BatchView>;
  protected abstract currentState(env: number): KratzenState;

  tableState(env: number, episode: 'current' | 'ended'): KratzenState {
    this.ensureStarted();
    if (env >= this.numEnvs) throw new BridgeError('invalid_params', `params.env: must be an env 0..${this.numEnvs - 1}`, 'params.env');
    const state = episode === 'current' ? this.currentState(env) : this.ended[env];
    if (!state) throw new BridgeError('invalid_params', `params.episode: env ${env} has not finished an episode yet`, 'params.episode');
    return state;
  }

  abstract viewerSeat(env: number, episode: 'current' | 'ended', seat: number | undefined): number;
  abstract record(env: number, episode: 'current' | 'ended'): SessionRecord & { numHands: number; complete: boolean };

  /** The seed the envs play for the client's seed. */
  protected playedSeed(seed: number | string): number | string {
    return seed;
  }

  async reset(seed: number | string | undefined, control?: StepControl): Promise<BatchView> {
    if (seed !== undefined || !this.started) {
      this.seed = this.playedSeed(seed ?? 0);
      this.resets = 0;
      this.ended.fill(null);
      await this.resetAll(this.seed, control);
    } else if (!this.fresh.every((f) => f === 1)) {
      await this.resetStale(control);
    }
    this.started = true;
    this.fresh.fill(1);
    this.final = [];
    return this.view();
  }

  protected ensureStarted(): void {
    if (!this.started) throw new BridgeError('not_reset', `session ${this.id}: call env.reset before env.step`);
  }

  close(): void {}
}

class MultiSession extends BaseSession {
  readonly mode = 'multi' as const;
  readonly learnerSeat = null;
  private readonly vec: VecEnv;
  private readonly rewards: Float32Array;
  /** States before a step: VecEnv resets a finished env inside `step`. */
  private readonly before: KratzenState[] = [];

  constructor(options: SessionOptions, config: EnvConfig, numPlayers: number) {
    super(options, config, numPlayers);
    this.vec = new VecEnv({ numEnvs: options.numEnvs, config, keepEndedStates: true });
    this.rewards = new Float32Array(options.numEnvs * numPlayers);
  }

  protected async resetAll(seed: number | string): Promise<void> {
    this.vec.reset(seed);
    this.rewards.fill(0);
  }

  /** A VecEnv row cannot be reset alone: every env moves on to a seed derived from the last one. */
  protected async resetStale(): Promise<void> {
    // The reset recycles the state objects of the last finished episodes.
    this.ended.fill(null);
    await this.resetAll(`${this.seed}/reset${++this.resets}`);
  }

  step(actions: number[]): BatchView {
    this.ensureStarted();
    const vec = this.vec;
    checkBatch(actions, this.numEnvs, (i) => vec.stateOf(i), this.config.illegalAction === 'throw');
    for (let i = 0; i < this.numEnvs; i++) this.before[i] = vec.stateOf(i);
    vec.step(actions);
    const n = this.numPlayers;
    this.final = [];
    for (let i = 0; i < this.numEnvs; i++) {
      for (let s = 0; s < n; s++) this.rewards[i * n + s] = vec.rewards[i * MAX_SEATS + s]!;
      const ended = vec.terminated[i]! | vec.truncated[i]!;
      this.fresh[i] = ended;
      if (ended) {
        this.final.push({ env: i, info: { ...vec.finalInfo(i)! } });
        this.ended[i] = this.before[i]!;
      }
    }
    return this.view();
  }

  protected currentState(env: number): KratzenState {
    return this.vec.stateOf(env);
  }

  viewerSeat(env: number, episode: 'current' | 'ended', seat: number | undefined): number {
    const state = this.tableState(env, episode);
    const viewer = seat ?? Math.max(0, state.currentSeat);
    if (viewer >= this.numPlayers) throw new BridgeError('invalid_params', `params.seat: must be a seat 0..${this.numPlayers - 1}`, 'params.seat');
    return viewer;
  }

  /** Finished hands in full, decks included; no seed, and nothing of the hand in progress. */
  record(env: number, episode: 'current' | 'ended'): SessionRecord & { numHands: number; complete: boolean } {
    const state = this.tableState(env, episode);
    const record = stateToRecord(state);
    delete record.seed;
    record.hands = record.hands?.slice(0, state.results.length);
    return { kind: 'full', record, numHands: record.hands?.length ?? 0, complete: state.complete };
  }

  view(): BatchView {
    const vec = this.vec;
    return {
      session: this.id,
      numEnvs: this.numEnvs,
      observations: vec.observations,
      masks: vec.masks,
      seats: vec.seats,
      rewards: this.rewards,
      rewardWidth: this.numPlayers,
      terminated: vec.terminated,
      truncated: vec.truncated,
      finalObservations: vec.finalObservations,
      final: this.final,
      observationRows: vec.rows,
    };
  }
}

class SingleSession extends BaseSession {
  readonly mode = 'single' as const;
  private envs: SingleAgentEnv[] = [];
  readonly learnerSeat: number;
  private readonly specs: (string | null)[];
  private readonly checkpoints = new Map<string, Agent>();
  private readonly loadCheckpoint: SessionOptions['loadCheckpoint'];
  private readonly limits: AgentLimits;
  private readonly seedSecret: string;
  private readonly observations: Float32Array;
  private readonly masks: Uint8Array;
  private readonly seats: Int32Array;
  private readonly rewards: Float32Array;
  private readonly terminated: Uint8Array;
  private readonly truncated: Uint8Array;
  private readonly finalObservations: Float32Array;

  constructor(options: SessionOptions, config: EnvConfig, numPlayers: number) {
    super(options, config, numPlayers);
    this.learnerSeat = options.learnerSeat;
    this.loadCheckpoint = options.loadCheckpoint;
    this.limits = options.limits;
    this.seedSecret = options.seedSecret;
    this.specs = Array.from({ length: numPlayers }, (_, s) =>
      s === this.learnerSeat ? null : Array.isArray(options.opponents) ? (options.opponents[s] ?? null) : options.opponents,
    );
    const missing = this.specs.findIndex((spec, s) => spec === null && s !== this.learnerSeat);
    if (missing >= 0) throw new BridgeError('invalid_params', `params.opponents[${missing}]: no agent for seat ${missing}`, `params.opponents[${missing}]`);
    const n = options.numEnvs;
    this.observations = new Float32Array(n * OBS_SIZE);
    this.masks = new Uint8Array(n * NUM_ACTIONS);
    this.seats = new Int32Array(n).fill(this.learnerSeat);
    this.rewards = new Float32Array(n);
    this.terminated = new Uint8Array(n);
    this.truncated = new Uint8Array(n);
    this.finalObservations = new Float32Array(n * OBS_SIZE);
  }

  /**
   * Opponents are rebuilt from their specs for every seeded reset, so equal seeds give equal
   * trajectories whatever the agents' generators went through before. Checkpoint agents are
   * greedy and stateless: loaded once and kept.
   */
  async buildOpponents(seed: number | string): Promise<(Agent | null)[]> {
    const rules = this.config.rules;
    const agents: (Agent | null)[] = [];
    for (let s = 0; s < this.specs.length; s++) {
      const spec = this.specs[s];
      if (!spec) {
        agents.push(null);
        continue;
      }
      const context = {
        rules,
        seed: `${seed}:seat${s}`,
        limits: this.limits,
        loadCheckpoint: async (dir: string) => {
          if (!this.checkpoints.has(dir)) this.checkpoints.set(dir, await this.loadCheckpoint(dir, { rules, seed: 0 }));
          return this.checkpoints.get(dir)!;
        },
      };
      try {
        agents.push(await createAgent(spec, context));
      } catch (e) {
        if (e instanceof BridgeError) throw e;
        const message = `params.opponents (seat ${s}): ${(e as Error).message}`;
        if (e instanceof CheckpointError) throw new BridgeError('checkpoint_error', message, 'params.opponents', { reason: e.code });
        throw new BridgeError('invalid_params', message, 'params.opponents');
      }
    }
    return agents;
  }

  protected override playedSeed(seed: number | string): string {
    return mixSeed(this.seedSecret, seed);
  }

  protected async resetAll(seed: number | string, control?: StepControl): Promise<void> {
    const agents = await this.buildOpponents(seed);
    this.envs = Array.from(
      { length: this.numEnvs },
      () => new SingleAgentEnv({ config: this.config, learnerSeat: this.learnerSeat, opponents: agents }),
    );
    for (let i = 0; i < this.numEnvs; i++) {
      this.write(i, this.envs[i]!.reset({ seed: `${seed}:${i}` }));
      if (control?.due()) await control.pause();
    }
    this.rewards.fill(0);
    this.terminated.fill(0);
    this.truncated.fill(0);
  }

  /** Envs in the middle of an episode move on to their next one (the seed sequence continues). */
  protected async resetStale(control?: StepControl): Promise<void> {
    for (let i = 0; i < this.numEnvs; i++) {
      if (!this.fresh[i]) this.write(i, this.envs[i]!.reset());
      if (control?.due()) await control.pause();
    }
    this.rewards.fill(0);
    this.terminated.fill(0);
    this.truncated.fill(0);
  }

  viewerSeat(env: number, episode: 'current' | 'ended', seat: number | undefined): number {
    this.tableState(env, episode);
    if (seat !== undefined && seat !== this.learnerSeat) {
      throw new BridgeError('invalid_params', `params.seat: a single session shows the learner seat ${this.learnerSeat} only`, 'params.seat');
    }
    return this.learnerSeat;
  }

  /** The learner seat's own record: no seed, no deck, nothing it did not see (table-view.ts). */
  record(env: number, episode: 'current' | 'ended'): SessionRecord & { numHands: number; complete: boolean } {
    const state = this.tableState(env, episode);
    const record = seatRecord(state, this.learnerSeat);
    return { kind: 'seat', record, numHands: record.hands.length, complete: state.complete };
  }

  step(actions: number[], control?: StepControl): BatchView | Promise<BatchView> {
    this.ensureStarted();
    checkBatch(actions, this.numEnvs, (i) => this.envs[i]!.state, this.config.illegalAction === 'throw');
    this.final = [];
    if (!control) {
      for (let i = 0; i < this.numEnvs; i++) this.stepEnv(i, actions[i]!);
      return this.view();
    }
    return this.stepWithPauses(actions, control);
  }

  private async stepWithPauses(actions: number[], control: StepControl): Promise<BatchView> {
    for (let i = 0; i < this.numEnvs; i++) {
      this.stepEnv(i, actions[i]!);
      if (control.due()) await control.pause();
    }
    return this.view();
  }

  private stepEnv(i: number, action: number): void {
    {
      const env = this.envs[i]!;
      const result = env.step(action);
      this.rewards[i] = result.reward;
      this.terminated[i] = result.terminated ? 1 : 0;
      this.truncated[i] = result.truncated ? 1 : 0;
      const ended = result.terminated || result.truncated;
      this.fresh[i] = ended ? 1 : 0;
      if (!ended) {
        this.write(i, result);
        return;
      }
      this.finalObservations.set(result.obs, i * OBS_SIZE);
      this.final.push({ env: i, info: { ...result.info } });
      this.ended[i] = env.state;
      this.write(i, env.reset());
    }
  }

  protected currentState(env: number): KratzenState {
    return this.envs[env]!.state;
  }

  private write(i: number, current: { obs: Float32Array; mask: Uint8Array }): void {
    this.observations.set(current.obs, i * OBS_SIZE);
    this.masks.set(current.mask, i * NUM_ACTIONS);
  }

  view(): BatchView {
    return {
      session: this.id,
      numEnvs: this.numEnvs,
      observations: this.observations,
      masks: this.masks,
      seats: this.seats,
      rewards: this.rewards,
      rewardWidth: 1,
      terminated: this.terminated,
      truncated: this.truncated,
      finalObservations: this.finalObservations,
      final: this.final,
    };
  }

  override close(): void {
    for (const agent of this.checkpoints.values()) agent.dispose?.();
    this.checkpoints.clear();
  }
}
