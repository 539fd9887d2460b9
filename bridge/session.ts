// Environment sessions: N tables of one VecEnv stepped by one message. In multi-agent sessions
// the client acts for the seat to act of every env; in single-agent sessions it acts for the
// learner seat and the other seats are played on the server by agents from the registry (the
// VecEnv's single-agent mode). Both auto-reset in the same step, and both refuse a batch holding
// an illegal action before any env is stepped.
//
// What a client may see: a multi-agent client plays every seat, so it gets every seat's view and
// the full record of finished hands (never the deck of a hand in progress: it holds the talon). A
// single-agent client plays one seat against bots: it gets that seat's view and record only, and
// its seeds are mixed with the server's secret, its seat and the rules, so it can neither deal the
// bots' hands itself nor read them as its own hand in a session of another seat. A first reset
// without a seed plays a random one, so sessions that never chose a seed do not share deals.

import { createHmac, randomBytes } from 'node:crypto';
import { MAX_SEATS, NUM_ACTIONS, ValidationError, actionToString, drain, parseRuleSet, ruleSetToJson } from '../env/rules/index.js';
import { parseEnvConfig, type EnvConfig, type EnvConfigInput } from '../env/table.js';
import { VecEnv } from '../env/vec-env.js';
import type { HandRange, SeatRecord, TableView } from '../env/table-view.js';
import type { Agent } from '../agents/agent.js';
import { createAgent, type AgentLimits } from '../agents/registry.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { BridgeError, checkpointMessage } from './errors.js';
import type { BatchView, FinalEntry } from './codec.js';
import { SliceClock, addUsage, usageAt, type RecentUse } from './fair-scheduler.js';

export interface SessionOptions {
  id: string;
  mode: 'multi' | 'single';
  numEnvs: number;
  config?: EnvConfigInput;
  learnerSeat: number;
  opponents: string | (string | null)[];
  /**
   * The checkpoint folder an opponent spec names, as a key that is the same for every spelling
   * of it (the real path); throws for a spec that names none the session may load, naming
   * `field` (the opponents entry).
   */
  resolveCheckpoint: (spec: string, field: string) => Promise<string>;
  /** Loads a checkpoint folder resolveCheckpoint returned. */
  loadCheckpoint: (dir: string, context: { rules: unknown; seed: number | string }) => Promise<Agent>;
  /** Caps on the opponents' options (pimc samples, time budget). */
  limits: AgentLimits;
  /** Mixed into single-agent seeds (see the file header). */
  seedSecret: string;
  /** multi sessions: keep every seat's view of an episode's end (env.observe, episode "ended"). */
  finalObservationsOfEverySeat?: boolean;
}

/**
 * Lets a long step give way: `due()` says a slice of work is used up, `pause()` lets other work
 * run, and resolves rejected when the client is gone.
 */
export interface StepControl {
  due(): boolean;
  pause(): Promise<void>;
}

class ClientGone extends Error {}

interface PausedPiece {
  /** Its client's use of this thread when it paused: it does not fade while the work waits. */
  usage: number;
  resume: () => void;
}

// Paused sliced work of this thread (main or worker), resumed one piece per turn of the event
// loop, the piece whose owner has used least of the thread lately first (ties: in order of
// pausing). Not each piece on its own setImmediate: N pieces paused together would run N slices
// back to back. Not in turns of one piece each: a search client's long piece would count as much
// as a bystander's short one, and clients reconnecting to start new work would go first every
// time. Use is compared as it was at each pause: faded while waiting, the use of many clients
// each waiting for its next long piece would read as little as a bystander's, who would then
// wait behind them all.
const paused: PausedPiece[] = [];
/** The slice of this thread's sliced work (fair-scheduler.ts). */
const slice = new SliceClock();
let resumeQueued = false;

function resumeNext(): void {
  resumeQueued = false;
  slice.open();
  let next = -1;
  for (let k = 0; k < paused.length; k++) if (next < 0 || paused[k]!.usage < paused[next]!.usage) next = k;
  if (next >= 0) paused.splice(next, 1)[0]!.resume();
  if (paused.length > 0) queueResume();
}

function queueResume(): void {
  if (resumeQueued) return;
  resumeQueued = true;
  setImmediate(resumeNext);
}

/**
 * A control whose slices last `sliceMs`, for work of `owner`. A pause lets the event loop run
 * and puts the work among this thread's paused work; it resumes with a slice of its own when its
 * owner has used least of the thread lately, or rejected once `gone()`. A slice belongs to the
 * thread's sliced work, not to one piece: work that starts in a turn whose slice is used up
 * pauses after its first step; work that starts in a turn without one opens it. Each piece's
 * time is added to the owner's use (at its pause, and at `settle()` once the work is done), the
 * first from the control's creation, which may overlap the main thread's scheduler's own count of
 * the request by its synchronous start.
 */
export function slicedControl(sliceMs: number, owner: RecentUse, gone: () => boolean): StepControl & { settle(): void; start(): Promise<boolean> } {
  if (!slice.isOpen) slice.open();
  // From the start: work that awaits before its first pause (a reset's prepare) runs after the
  // scheduler's turn, which then does not count it.
  let resumedAt = performance.now();
  const settle = () => {
    if (resumedAt < 0) return;
    const now = performance.now();
    addUsage(owner, now - resumedAt, now);
    resumedAt = -1;
  };
  const pause = () => {
    settle();
    return new Promise<void>((resolve, reject) => {
      const resume = () => {
        if (gone()) return reject(new ClientGone('the client is gone'));
        resumedAt = performance.now();
        resolve();
      };
      paused.push({ usage: usageAt(owner, performance.now()), resume });
      queueResume();
    });
  };
  return {
    due: () => slice.usedUp(sliceMs),
    pause,
    settle,
    /**
     * Waits for the work's first turn among the paused work, if any waits or the slice is used
     * up; false once the client is gone. A request's first piece (a reset's deal and a search
     * opponent's decision, tens of ms) waits its turn too: run as soon as it reached a worker,
     * many clients resetting search sessions held a bystander's step for seconds.
     */
    start: () =>
      paused.length === 0 && !slice.usedUp(sliceMs)
        ? Promise.resolve(true)
        : pause().then(
            () => true,
            (e) => {
              if (e instanceof ClientGone) return false;
              throw e;
            },
          ),
  };
}

/**
 * Runs `steps` (work that yields between hands: a replay, a view) at once without a control (the
 * main thread's work is short), else giving way whenever the control says so (a 4000-hand
 * replay took 0.6 s).
 */
export function drive<T>(steps: Generator<void, T>, control: StepControl | undefined): T | Promise<T> {
  if (!control) return drain(steps);
  return (async () => {
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (control.due()) await control.pause();
    }
  })();
}

export type Episode = 'current' | 'ended';

/** What env.record answers: a page of the record, the count of finished hands, and whether the session is over. */
export type RecordPage = SessionRecord & { numHands: number; complete: boolean };

/** A full record (multi) or the seat's own (single, see table-view.ts). */
export type SessionRecord = { kind: 'full'; record: ReturnType<VecEnv['fullRecord']>['record'] } | { kind: 'seat'; record: SeatRecord };

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
  /** The table `seat` (default: the seat to act) may see in env `env`'s episode in progress or the last one it finished. */
  view(env: number, episode: Episode, seat: number | undefined, range: HandRange): Generator<void, TableView>;
  /** `seat`'s current observation and legal actions in env `env` (all zero unless it is to act), or its view of the last episode's end. */
  observe(env: number, seat: number | undefined, episode?: Episode): { seat: number; observation: Float32Array; mask: Uint8Array };
  /**
   * The record a client may have of env `env`'s session (see the file header), the hands in
   * `range`; `numHands` counts all its finished hands.
   */
  record(env: number, episode: Episode, range: HandRange): Generator<void, RecordPage>;
  close(): void;
}

/** The parsed env config of `env.create`; errors name `params.config.<field>`. */
export function checkSessionConfig(config: Parameters<typeof parseEnvConfig>[0]): ReturnType<typeof parseEnvConfig> {
  try {
    return parseEnvConfig(config);
  } catch (e) {
    if (e instanceof ValidationError) {
      const field = e.field ? `params.config.${e.field}` : 'params.config';
      throw new BridgeError('invalid_params', `${field}: ${e.reason}`, field);
    }
    throw e;
  }
}

/** Validates the config and builds the session; config errors name `params.config.<field>`. */
export async function createSession(options: SessionOptions): Promise<EnvSession> {
  const parsed = checkSessionConfig(options.config);
  const numPlayers = parsed.game.numPlayers;
  if (options.mode === 'multi') return new MultiSession(options, parsed.config, numPlayers);
  if (options.learnerSeat >= numPlayers) {
    throw new BridgeError('invalid_params', `params.learnerSeat: must be a seat 0..${numPlayers - 1}`, 'params.learnerSeat');
  }
  const session = new SingleSession(options, parsed.config, numPlayers);
  await session.buildOpponents(0); // refuses unknown specs and foreign checkpoints at create time
  return session;
}

/**
 * The seed a single-agent session really plays: the client's, keyed with the server's secret and
 * bound to the learner seat and the rules, so equal seeds deal alike only for the same seat. The
 * rules as a record writes them (ruleSetToJson): keyed with the config as the client spelt it,
 * rules in another key order, a default written out or another reward scale dealt other games,
 * and a session made from the rules its record gave back could not replay a deal.
 */
export function mixSeed(secret: string, seed: number | string, learnerSeat: number, rules: Record<string, unknown>): string {
  return createHmac('sha256', secret)
    .update(JSON.stringify([String(seed), learnerSeat, rules]))
    .digest('hex')
    .slice(0, 32);
}

/** Both kinds: a VecEnv, what the client was last sent, and which envs have finished an episode. */
abstract class BaseSession implements EnvSession {
  readonly id: string;
  readonly numEnvs: number;
  abstract readonly mode: 'multi' | 'single';
  abstract readonly learnerSeat: number | null;
  protected vec!: VecEnv;
  protected started = false;
  /** `fresh[i]` is 1 while env i has not been stepped in its episode. */
  protected readonly fresh: Uint8Array;
  /** `hasEnded[i]` is 1 once env i has finished an episode since the last seeded reset. */
  private readonly hasEnded: Uint8Array;
  protected final: FinalEntry[] = [];
  /** What a reset reports for every env's episode end: none. */
  private readonly noEpisodeEnds: Uint8Array;

  constructor(
    options: SessionOptions,
    readonly config: EnvConfig,
    readonly numPlayers: number,
  ) {
    this.id = options.id;
    this.numEnvs = options.numEnvs;
    this.fresh = new Uint8Array(options.numEnvs);
    this.hasEnded = new Uint8Array(options.numEnvs);
    this.noEpisodeEnds = new Uint8Array(options.numEnvs);
  }

  /** The rewards the client gets (copied from the VecEnv's seat columns). */
  protected abstract readonly rewards: Float32Array;
  protected abstract readonly rewardWidth: number;
  /** Builds the VecEnv for a seeded reset (single sessions rebuild their opponents). */
  protected abstract prepare(seed: number | string): Promise<void>;
  /** The seed the envs play for the client's seed. */
  protected abstract playedSeed(seed: number | string): number | string;
  /** What a finished episode's info tells the client. */
  protected abstract finalInfo(env: number): Record<string, unknown>;
  /** The seat the client may view in env `env` (checks a seat it names). */
  protected abstract viewer(env: number, episode: Episode, seat: number | undefined): number;
  abstract record(env: number, episode: Episode, range: HandRange): Generator<void, RecordPage>;

  async reset(seed: number | string | undefined, control?: StepControl): Promise<BatchView> {
    if (seed !== undefined || !this.started) {
      const played = this.playedSeed(seed ?? randomBytes(16).toString('hex'));
      await this.prepare(played);
      this.hasEnded.fill(0);
      await this.inPieces(control, (i) => this.vec.resetEnvSteps(i, played));
    } else {
      // Envs that just started an episode keep it; the others move on in their seed sequence.
      await this.inPieces(control, (i) => (this.fresh[i] ? null : this.vec.resetEnvSteps(i)));
    }
    this.rewards.fill(0);
    this.started = true;
    this.fresh.fill(1);
    this.final = [];
    // An env kept at an unseeded reset (fresh: its episode began in the last step) still has the
    // step's flags: the reply said terminated with no final info to go with it.
    return this.batchView(true);
  }

  step(actions: number[], control?: StepControl): BatchView | Promise<BatchView> {
    this.ensureStarted();
    this.checkBatch(actions);
    this.final = [];
    if (!control) {
      this.vec.step(actions);
      return this.afterStep();
    }
    return this.inPieces(control, (i) => this.vec.stepEnvSteps(actions, i)).then(() => this.afterStep());
  }

  *view(env: number, episode: Episode, seat: number | undefined, range: HandRange): Generator<void, TableView> {
    const viewer = this.viewer(env, episode, seat);
    return yield* this.vec.tableViewSteps(env, viewer, episode, range);
  }

  observe(env: number, seat: number | undefined, episode: Episode = 'current'): { seat: number; observation: Float32Array; mask: Uint8Array } {
    if (episode === 'ended' && !this.vec.keepsFinalObservationsOfEverySeat) {
      throw new BridgeError('invalid_params', 'params.episode: "ended" needs a multi session created with finalObservations "every-seat" (the final entries of a reply carry the observer\'s view)', 'params.episode');
    }
    const viewer = this.viewer(env, episode, seat);
    const observation = new Float32Array(this.vec.observationSize);
    const mask = new Uint8Array(NUM_ACTIONS);
    if (episode === 'ended') this.vec.finalObservationOf(env, viewer, observation);
    else this.vec.observe(env, viewer, observation, mask);
    return { seat: viewer, observation, mask };
  }

  close(): void {}

  protected ensureStarted(): void {
    if (!this.started) throw new BridgeError('not_reset', `session ${this.id} has no episode yet: call env.reset first`, 'params.session');
  }

  /** Checks `env` and that its `episode` exists. */
  protected checkEpisode(env: number, episode: Episode): void {
    this.ensureStarted();
    if (env >= this.numEnvs) throw new BridgeError('invalid_params', `params.env: must be an env 0..${this.numEnvs - 1}`, 'params.env');
    if (episode === 'ended' && !this.hasEnded[env]) {
      throw new BridgeError('invalid_params', `params.episode: env ${env} has not finished an episode yet`, 'params.episode');
    }
  }

  /**
   * Runs the work of every env (`pieces(i)`, null for none), giving way between any two of its
   * pieces (an opponent's decision) and between envs when a control asks to.
   */
  private async inPieces(control: StepControl | undefined, pieces: (env: number) => Generator<void, void> | null): Promise<void> {
    for (let i = 0; i < this.numEnvs; i++) {
      const envPieces = pieces(i);
      // Leaving the loop at a rejected pause (the client is gone) stops the env's work (its
      // generator's return), which leaves the env failed until reset (VecEnv.stepEnvSteps).
      if (envPieces) for (const _piece of envPieces) if (control?.due()) await control.pause();
      if (i + 1 < this.numEnvs && control?.due()) await control.pause();
    }
  }

  /** Every env is checked before any is stepped: a refused batch leaves the whole session unchanged. */
  private checkBatch(actions: number[]): void {
    if (actions.length !== this.numEnvs) {
      throw new BridgeError('invalid_params', `params.actions: expected ${this.numEnvs} actions (one per env), got ${actions.length}`, 'params.actions');
    }
    // The whole batch, before a slice of it moves (the VecEnv checks each range it steps), by
    // the env's illegal-action policy; the core explains a refusal.
    const refused = this.vec.refusedAction(actions);
    if (refused) {
      const { env, action, seat, reason } = refused;
      throw new BridgeError('illegal_action', `env ${env}: illegal action ${action} (${actionToString(action)}) for seat ${seat}: ${reason}`, `params.actions[${env}]`, {
        env,
        action,
        seat,
        reason,
      });
    }
  }

  private afterStep(): BatchView {
    const vec = this.vec;
    const width = this.rewardWidth;
    const first = this.learnerSeat ?? 0;
    for (let i = 0; i < this.numEnvs; i++) {
      for (let s = 0; s < width; s++) this.rewards[i * width + s] = vec.rewards[i * MAX_SEATS + first + s]!;
      const ended = vec.terminated[i]! | vec.truncated[i]!;
      this.fresh[i] = ended;
      if (ended) {
        this.hasEnded[i] = 1;
        this.final.push({ env: i, info: this.finalInfo(i) });
      }
    }
    return this.batchView();
  }

  private batchView(afterReset = false): BatchView {
    const vec = this.vec;
    return {
      session: this.id,
      numEnvs: this.numEnvs,
      observations: vec.observations,
      masks: vec.masks,
      seats: vec.seats,
      rewards: this.rewards,
      rewardWidth: this.rewardWidth,
      terminated: afterReset ? this.noEpisodeEnds : vec.terminated,
      truncated: afterReset ? this.noEpisodeEnds : vec.truncated,
      finalObservations: vec.finalObservations,
      final: this.final,
      observationRows: vec.rows,
    };
  }
}

class MultiSession extends BaseSession {
  readonly mode = 'multi' as const;
  readonly learnerSeat = null;
  protected readonly rewards: Float32Array;
  protected readonly rewardWidth: number;

  constructor(options: SessionOptions, config: EnvConfig, numPlayers: number) {
    super(options, config, numPlayers);
    this.vec = new VecEnv({ numEnvs: options.numEnvs, config, keepEndedStates: true, listObservationEntries: true, finalObservationsOfEverySeat: options.finalObservationsOfEverySeat ?? false });
    this.rewards = new Float32Array(options.numEnvs * numPlayers);
    this.rewardWidth = numPlayers;
  }

  protected async prepare(): Promise<void> {}

  protected playedSeed(seed: number | string): number | string {
    return seed;
  }

  protected finalInfo(env: number): Record<string, unknown> {
    return { ...this.vec.finalInfo(env)! };
  }

  protected viewer(env: number, episode: Episode, seat: number | undefined): number {
    this.checkEpisode(env, episode);
    const viewer = seat ?? Math.max(0, this.vec.seatToActIn(env, episode));
    if (viewer >= this.numPlayers) throw new BridgeError('invalid_params', `params.seat: must be a seat 0..${this.numPlayers - 1}`, 'params.seat');
    return viewer;
  }

  /** Finished hands in full, decks included; no seed, and nothing of the hand in progress. */
  // A generator like the seat record, though the full record needs no replay.
  *record(env: number, episode: Episode, range: HandRange): Generator<void, RecordPage> {
    this.checkEpisode(env, episode);
    const { record, complete, numHands } = this.vec.fullRecord(env, episode, range);
    return { kind: 'full', record, numHands, complete };
  }
}

class SingleSession extends BaseSession {
  readonly mode = 'single' as const;
  readonly learnerSeat: number;
  protected readonly rewards: Float32Array;
  protected readonly rewardWidth = 1;
  private readonly specs: (string | null)[];
  private readonly checkpoints = new Map<string, Agent>();
  /**
   * The folder each checkpoint spec named when the session was created: a seeded reset takes
   * the agent loaded then, even if the folder has since gone (resolving it again failed the
   * reset, naming params.opponents, which reset does not have).
   */
  private readonly checkpointDirs = new Map<string, string>();
  private readonly options: SessionOptions;
  /** The rules as a record writes them, which key the seeds (mixSeed). */
  private readonly recordedRules: Record<string, unknown>;

  constructor(options: SessionOptions, config: EnvConfig, numPlayers: number) {
    super(options, config, numPlayers);
    this.options = options;
    this.recordedRules = ruleSetToJson(parseRuleSet(config.rules));
    this.learnerSeat = options.learnerSeat;
    this.specs = Array.from({ length: numPlayers }, (_, s) =>
      s === this.learnerSeat ? null : Array.isArray(options.opponents) ? (options.opponents[s] ?? null) : options.opponents,
    );
    const missing = this.specs.findIndex((spec, s) => spec === null && s !== this.learnerSeat);
    if (missing >= 0) throw new BridgeError('invalid_params', `params.opponents[${missing}]: no agent for seat ${missing}`, `params.opponents[${missing}]`);
    // An agent named for a seat the table does not have would never play, nor be checked: a
    // mistake (a typo there went unseen), not a choice.
    const extra = Array.isArray(options.opponents) ? options.opponents.findIndex((spec, s) => s >= numPlayers && spec !== null) : -1;
    if (extra >= 0) {
      throw new BridgeError('invalid_params', `params.opponents[${extra}]: the table has ${numPlayers} seats (0-${numPlayers - 1}); leave further entries out or null`, `params.opponents[${extra}]`);
    }
    this.rewards = new Float32Array(options.numEnvs);
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
      // A list names the entry at fault (the field stopped at params.opponents, as for one spec for every seat).
      const field = Array.isArray(this.options.opponents) ? `params.opponents[${s}]` : 'params.opponents';
      const context = {
        rules,
        seed: `${seed}:seat${s}`,
        limits: this.options.limits,
        // One agent per checkpoint folder, however the specs spell it (`ck`, `ck/`, `ck/.`, a link).
        loadCheckpoint: async (spec: string) => {
          let dir = this.checkpointDirs.get(spec);
          if (dir === undefined) this.checkpointDirs.set(spec, (dir = await this.options.resolveCheckpoint(spec, field)));
          if (!this.checkpoints.has(dir)) this.checkpoints.set(dir, await this.options.loadCheckpoint(dir, { rules, seed: 0 }));
          return this.checkpoints.get(dir)!;
        },
      };
      try {
        agents.push(await createAgent(spec, context));
      } catch (e) {
        if (e instanceof BridgeError) throw e;
        const message = `${field} (seat ${s}): ${e instanceof CheckpointError ? checkpointMessage(e, spec) : (e as Error).message}`;
        if (e instanceof CheckpointError) throw new BridgeError('checkpoint_error', message, field, { reason: e.code });
        throw new BridgeError('invalid_params', message, field);
      }
    }
    return agents;
  }

  protected async prepare(seed: number | string): Promise<void> {
    const opponents = await this.buildOpponents(seed);
    this.vec = new VecEnv({ numEnvs: this.numEnvs, config: this.config, opponents, learnerSeat: this.learnerSeat, keepEndedStates: true, listObservationEntries: true });
  }

  protected playedSeed(seed: number | string): string {
    return mixSeed(this.options.seedSecret, seed, this.learnerSeat, this.recordedRules);
  }

  protected finalInfo(env: number): Record<string, unknown> {
    const { illegalActionSeat, ...info } = this.vec.finalInfo(env)!;
    return illegalActionSeat === undefined ? info : { ...info, illegalAction: true };
  }

  protected viewer(env: number, episode: Episode, seat: number | undefined): number {
    this.checkEpisode(env, episode);
    if (seat !== undefined && seat !== this.learnerSeat) {
      throw new BridgeError('invalid_params', `params.seat: a single session shows the learner seat ${this.learnerSeat} only`, 'params.seat');
    }
    return this.learnerSeat;
  }

  /** The learner seat's own record: no seed, no deck, nothing it did not see (table-view.ts). */
  *record(env: number, episode: Episode, range: HandRange): Generator<void, RecordPage> {
    this.checkEpisode(env, episode);
    const { record, complete, numHands } = yield* this.vec.seatRecordSteps(env, this.learnerSeat, episode, range);
    return { kind: 'seat', record, numHands, complete };
  }

  override close(): void {
    for (const agent of this.checkpoints.values()) agent.dispose?.();
    this.checkpoints.clear();
  }
}
