// Self-play PPO training: rollouts against a league (the learner itself, heuristic, random, past
// snapshots), PPO updates, periodic duplicate evaluation, checkpoints with optimizer state,
// metrics in JSONL and an HTML report rewritten as training goes. `resume` continues from the
// latest checkpoint and, for a fixed seed on the same backend, reproduces the uninterrupted run's
// metrics (timings aside): every update's randomness derives from (seed, update).

import { appendFileSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { OutputError, fsErrorReason, isFileSystemError, makeDirs } from '../checkpoints/durable-fs.js';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { loadCheckpoint as loadCheckpointAgent } from '../checkpoints/agent-loader.js';
import seedrandom from 'seedrandom';
import { createGame, isJsonObject, ValidationError } from '../env/rules/index.js';
import { PolicyAgent, sameArchitecture, selectBackend, type Agent } from '../agents/index.js';
import { CheckpointStore, OPTIMIZER_EXTRA, RUN_STORE_FOLDER, loadCheckpointOrLatest, decodeOptimizerState, encodeOptimizerState, type NamedArray } from '../checkpoints/index.js';
import { MAX_CONFIG_BYTES, criticHiddenSizesOf, criticInputSizeOf, parseTrainConfig, type TrainConfig } from './config.js';
import { readRunFile, removeLeftoverTemps, writeFileAtomic } from './files.js';
import { PpoLearner, checkLossesFinite } from './ppo.js';
import { GradientHelper, helperSetup } from './gradient-helper.js';
import { OracleCritic } from './critic.js';
import { LEARNER, RolloutCollector, revalue, type SeatController } from './rollout.js';
import { League } from './league.js';
import { ActorPool, actorSetup, imitationTeacher, setWeights, weightsOf, type RolloutActors, type RolloutRequest, type RolloutResult } from './actors.js';
import { RunLock } from './run-lock.js';
import { RESUMABLE_FIELDS, SNAPSHOT_NAME, TRAINER_EXTRA, checkSavedPolicy, checkTrainedWith, savedArrays, savedTrainerState, snapshotName, snapshotsNamedBy, trainedWith, type TrainerState } from './saved-run.js';
import { encodeArrays } from './distributed/arrays.js';
import { RedisActors } from './distributed/rollout-jobs.js';
import type { RedisConnection } from './distributed/redis.js';
import { TournamentStopped, dealsBetterText, runTournament, type RunOptions, type TournamentResult } from './tournament.js';
import { writeTournamentReport } from './eval-report.js';
import { FINAL_EVAL_FOLDERS, writeTrainingReport, type MetricsLine } from './train-report.js';
import { ProgressBar } from './progress.js';
import { builtModule } from '../env/built-module.js';

export interface TrainOptions {
  /** Continue the run in `<runsDir>/<name>` from its latest checkpoint. */
  resume?: boolean;
  /** Stop after this update (for tests of resume); the run is left resumable. */
  stopAfter?: number;
  /** Print progress (bar, summaries) to stderr/stdout. @default true */
  verbose?: boolean;
  /**
   * Checked after every update and every deal of the final evaluation; true stops the run (Ctrl-C
   * sets it). A run stopped in its final evaluation has every update saved: resuming it plays the evaluation.
   */
  shouldStop?: () => boolean;
  /**
   * Collect the rollouts on `kratzen worker`s through this Redis, `actors` blocks per update
   * (training/distributed/rollout-jobs.ts): the same metrics as `actors` local threads.
   */
  redis?: RedisConnection;
  /**
   * Ends a run on Redis at once (a second Ctrl-C): rollouts waiting for workers stop, their
   * queued jobs are taken back, and `train` rejects with the signal's reason.
   */
  interrupt?: AbortSignal;
}

export interface TrainResult {
  runDir: string;
  updates: number;
  checkpoint: string;
  metrics: MetricsLine[];
  finalEval?: { vsRandom: TournamentResult; vsHeuristic: TournamentResult };
  interrupted: boolean;
}

/** The checkpoint extra holding the weights the next update's rollout is collected with (overlapped rollouts). */
const BEHAVIOUR_EXTRA = 'behaviour';
/** The checkpoint extra holding the oracle critic's weights (config `critic: "oracle"`). */
const CRITIC_EXTRA = 'critic';
/**
 * Refuses, before any work, a run folder or store of it that is there as a file: the run folder
 * was "already exists (EEXIST)", exit 3, and a file in the league's place failed the run only at
 * its first snapshot, after that update's work. Absent ones are made when needed.
 */
function refuseFilesAsFolders(runDir: string): void {
  for (const path of [runDir, join(runDir, RUN_STORE_FOLDER), join(runDir, LEAGUE_FOLDER)]) {
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (!isFolder) throw new ValidationError('invalid training config', 'name', `${path} is there but is not a folder: choose another --name, or move it away`);
  }
}

/** The run's folder of league snapshots (a checkpoint store beside checkpoints/). */
const LEAGUE_FOLDER = 'league';

function hasLeagueSnapshots(runDir: string): boolean {
  try {
    return readdirSync(join(runDir, LEAGUE_FOLDER)).some((entry) => SNAPSHOT_NAME.test(entry));
  } catch {
    return false; // none there (a file in its place is the league store's to refuse)
  }
}

const TIMING_FIELDS = ['seconds', 'stepsPerSec', 'elapsed'];
/** Metrics fields that depend on the wall clock, not on the seed. */
export function withoutTimings(line: MetricsLine): MetricsLine {
  const copy = { ...line };
  for (const key of TIMING_FIELDS) delete copy[key];
  return copy;
}

/**
 * Trains a run. A file of the run that cannot be written (a full disk, no permission) throws an
 * OutputError naming `runsDir`; the run keeps its last checkpoint and can be resumed.
 */
export async function train(input: unknown, options: TrainOptions = {}): Promise<TrainResult> {
  const run = await TrainingRun.open(input, options);
  try {
    await run.restore();
    await run.loop();
    return await run.finish();
  } catch (e) {
    if (e instanceof ValidationError) run.discardUnsaved();
    throw run.outputError(e);
  } finally {
    await run.close();
  }
}

/** `e` as an OutputError when a file-system call failed writing the run at `runDir`; other errors as they are. */
function runOutputError(e: unknown, runDir: string, resumable: string | null): unknown {
  if (!isFileSystemError(e)) return e;
  const resume = resumable ? `; the run keeps checkpoint ${resumable}: free space (or fix the folder) and resume it` : '';
  return new OutputError('runsDir', `cannot write the run ${runDir}: ${fsErrorReason(e)}${resume}`);
}

/** The fields the caller set (a flag, a config file), with their values. */
function askedFields(input: unknown): Map<string, unknown> {
  return new Map(isJsonObject(input) ? Object.entries(input).filter(([, value]) => value !== undefined) : []);
}

/**
 * A resumed run keeps its saved config: a field the caller set to another value than the run was
 * trained with is refused, naming it, rather than silently ignored.
 */
function refuseChangedFields(asked: Map<string, unknown>, config: TrainConfig, saved: TrainConfig): void {
  for (const [field, value] of asked) {
    if (RESUMABLE_FIELDS.has(field)) continue;
    if (field === 'rules' && Object.keys(value as object).length === 0) continue;
    const want = JSON.stringify(config[field as keyof TrainConfig]);
    const had = JSON.stringify(saved[field as keyof TrainConfig]);
    if (want !== had) {
      // A field the run never had reads "without": `initialPolicy undefined` was printed.
      const started = had === undefined ? `without ${field}` : `with ${field} ${had}`;
      throw new ValidationError('cannot resume', field, `the run was started ${started}, not ${want ?? 'without it'}: a resumed run keeps its config (only updates may grow)`);
    }
  }
}

/** One training run, in the steps `train` takes: open, restore, loop over updates, finish. */
class TrainingRun {
  private readonly log: (text: string) => void;
  private readonly rules: Record<string, unknown>;
  private readonly store: CheckpointStore;
  private readonly leagueStore: CheckpointStore;
  private readonly metricsPath: string;
  private readonly reportPath: string;
  private readonly totalUpdates: number;
  private learner!: PolicyAgent;
  private critic: OracleCritic | null = null;
  private ppo!: PpoLearner;
  /** The other learner threads (`learnerThreads` - 1). */
  private helpers: GradientHelper[] = [];
  private league!: League;
  private collector: RolloutCollector | null = null;
  /** Rollouts in worker threads when `actors` > 0. */
  private actors: RolloutActors | null = null;
  /**
   * Overlapped rollouts: the next update's rollout, asked for before this update's learning
   * step, and the weights it was asked with (saved with a checkpoint, beside the snapshot list
   * in `state.behaviourSnapshots`).
   */
  private pending: Promise<RolloutResult> | null = null;
  private behaviour: Float32Array[] | null = null;
  private bar: ProgressBar | null = null;
  private state: TrainerState = { update: 0, snapshots: [] };
  private metrics: MetricsLine[] = [];
  private checkpointName = '';
  private savedUpdate = -1;
  private interrupted = false;
  private started = 0;
  private elapsedBefore = 0;

  private constructor(
    private readonly config: TrainConfig,
    private readonly options: TrainOptions,
    private readonly runDir: string,
    private readonly numPlayers: number,
    private readonly lock: RunLock,
  ) {
    const verbose = options.verbose ?? true;
    this.log = (text) => verbose && process.stderr.write(`${text}\n`);
    this.rules = config.rules;
    this.store = new CheckpointStore(join(runDir, RUN_STORE_FOLDER), { rules: this.rules, bestMetric: { name: 'evalVsHeuristic', higherIsBetter: true } });
    this.leagueStore = new CheckpointStore(join(runDir, LEAGUE_FOLDER), { rules: this.rules });
    this.metricsPath = join(runDir, 'metrics.jsonl');
    this.reportPath = join(runDir, 'report.html');
    this.totalUpdates = config.imitationUpdates + config.updates;
  }

  private get verbose(): boolean {
    return this.options.verbose ?? true;
  }

  /** Validates the config and claims the run directory; a resumed run keeps its saved config (only `updates` may grow). */
  static async open(input: unknown, options: TrainOptions): Promise<TrainingRun> {
    let config = parseTrainConfig(input);
    const runDir = resolve(config.runsDir, config.name);
    const configPath = join(runDir, 'config.json');
    refuseFilesAsFolders(runDir);
    if (options.resume) {
      if (!existsSync(configPath)) throw new ValidationError('cannot resume', 'name', `nothing to resume: ${configPath} does not exist`);
      let savedJson: unknown;
      try {
        savedJson = JSON.parse(readRunFile(configPath, MAX_CONFIG_BYTES));
      } catch (e) {
        throw new ValidationError('cannot resume', 'config.json', `${configPath} is not a readable JSON config: ${(e as Error).message}`);
      }
      // Defaults must not stand in for a damaged saved config: the run would go on with other
      // settings than its checkpoints were trained with (and prune them as if they were its own).
      if (!isJsonObject(savedJson) || !('name' in savedJson) || !('rules' in savedJson)) {
        throw new ValidationError('cannot resume', 'config.json', `${configPath} is not the config this run saved (a JSON object with its name, rules and settings)`);
      }
      // Runs saved before the oracle critic existed learned with the policy's value head, and
      // those saved before the gradient helper existed in one thread. Critic widths saved beside
      // the shared critic built nothing (such configs are refused now, but were saved before).
      const { criticHiddenSizes: _, ...withoutCriticWidths } = savedJson;
      const sharedCritic = (savedJson.critic ?? 'shared') === 'shared';
      const saved = parseTrainConfig({ critic: 'shared', learnerThreads: 1, ...(sharedCritic ? withoutCriticWidths : savedJson) });
      const asked = askedFields(input);
      refuseChangedFields(asked, config, saved);
      // A linear schedule is drawn over the run's length: more updates would bend it mid-run.
      if (saved.learningRateDecay === 'linear' && asked.has('updates') && config.updates > saved.updates) {
        throw new ValidationError('cannot resume', 'updates', `the run's learning rate falls linearly over its ${saved.updates} updates (learningRateDecay "linear"): it cannot grow to ${config.updates}; start a new run (initialPolicy) instead`);
      }
      // Taking the saved length instead would ignore the flag without a word.
      if (asked.has('updates') && config.updates < saved.updates) {
        throw new ValidationError('cannot resume', 'updates', `the run was started for ${saved.updates} updates: a resume may make it longer, not shorter (${config.updates}); stop it early with Ctrl-C instead, which saves a checkpoint`);
      }
      // It lives where it is asked to (a renamed folder); the backend and a longer run only when asked.
      config = {
        ...saved,
        name: config.name,
        runsDir: config.runsDir,
        backend: asked.has('backend') ? config.backend : saved.backend,
        updates: asked.has('updates') ? config.updates : saved.updates,
      };
    } else if (existsSync(join(runDir, RUN_STORE_FOLDER))) {
      throw new ValidationError('run exists', 'name', `${runDir} already holds a run: pass --resume to continue it, or choose another --name`);
    } else if (hasLeagueSnapshots(runDir)) {
      // A run stopped between its first league snapshot and its first checkpoint: started afresh
      // here, it emptied the run's metrics and then failed at the snapshot already there.
      throw new ValidationError(
        'run exists',
        'name',
        `${runDir} holds a run stopped before its first checkpoint (it has league snapshots): pass --resume to start it again from update 0, or choose another --name`,
      );
    }
    let lock: RunLock;
    try {
      lock = RunLock.acquire(runDir);
    } catch (e) {
      throw runOutputError(e, runDir, null);
    }
    try {
      // Half-written files of a run that was stopped (only this process writes here now).
      removeLeftoverTemps(runDir);
      const { backend } = await selectBackend(config.backend).catch((e: Error) => {
        // An explicit backend that cannot load (tfjs-node absent): the flag's error, not a stack trace.
        throw new ValidationError('invalid training config', 'backend', e.message);
      });
      const run = new TrainingRun(config, options, runDir, createGame(config.rules).numPlayers, lock);
      run.log(`training ${config.name}: rules ${JSON.stringify(config.rules)}, TF.js backend ${backend}, ${config.updates} update${config.updates === 1 ? '' : 's'}`);
      // A run may warm the critic alone (to be resumed for more updates), but it should not do so unawares.
      if (config.criticWarmupUpdates >= config.updates) run.log(`criticWarmupUpdates ${config.criticWarmupUpdates}: every update of this run trains the critic alone, the policy held still`);
      return run;
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /** The learner, its optimizer, the league and the metrics: from the latest checkpoint when resuming, else fresh. */
  async restore(): Promise<void> {
    const { config } = this;
    /** Adam's state from the checkpoint resumed, and that checkpoint's folder (for errors). */
    let savedOptimizer: { state: NamedArray[]; dir: string } | null = null;
    const hidden = criticHiddenSizesOf(config);
    if (hidden) {
      const onTrunk = config.critic === 'oracle-head';
      this.critic = new OracleCritic(hidden, hashSeed(config.seed), onTrunk, criticInputSizeOf(config));
    }
    let latest = this.options.resume ? await this.store.pointer('latest') : null;
    /** The newest checkpoint, resumed from when latest.json is missing; pointed at once it has passed every check. */
    let adopted: string | null = null;
    if (this.options.resume && latest === null && existsSync(this.store.root) && readdirSync(this.store.root).some((name) => name.startsWith('step-'))) {
      // A run stopped between its first checkpoint and the pointer (a kill, a full disk) could
      // neither resume nor start again; starting afresh would drop the run's metrics and collide
      // with its checkpoints. Its newest checkpoint, whole, is what the pointer would have named;
      // an older one is not (the run would redo updates whose checkpoint exists).
      adopted = await this.store.newestIfReadable();
      if (adopted === null) throw new ValidationError('cannot resume', 'checkpoints/latest.json', `${this.store.root} holds checkpoints but no latest.json, and its newest checkpoint cannot be read: restore them or start another run`);
      latest = adopted;
    }
    if (latest !== null) {
      // Checked before any update: a damaged best.json failed each resumed run after its first save.
      await this.store.verifyPointer('best');
      const loaded = await this.store.load(adopted ?? 'latest');
      checkSavedPolicy(loaded, config);
      // Only name and rules of the saved config are required: an edited one (its seed deleted
      // or changed) resumed under other settings than the checkpoints were trained with.
      if (loaded.manifest.seed !== hashSeed(config.seed)) {
        throw new ValidationError('cannot resume', 'seed', `the run's config says seed ${JSON.stringify(config.seed)}, but its checkpoint ${loaded.dir} was trained with another (restore config.json or start another run)`);
      }
      // An oracle critic's weights beside a config of the shared one blamed the optimizer state as damaged.
      if (!this.critic && loaded.extras.has(CRITIC_EXTRA)) {
        throw new ValidationError('cannot resume', 'critic', `the run's config says critic ${JSON.stringify(config.critic)}, but its checkpoint ${loaded.dir} holds a critic of its own (restore config.json or start another run)`);
      }
      this.state = savedTrainerState(loaded, config);
      checkTrainedWith(this.state, config, loaded.dir);
      // The run's seed, as a fresh start has it: the checkpoints' manifests record it.
      this.learner = loaded.toAgent({ name: 'learner', seed: hashSeed(config.seed) });
      const blob = loaded.extras.get(OPTIMIZER_EXTRA);
      if (blob) savedOptimizer = { state: decodeOptimizerState(blob, loaded.dir), dir: loaded.dir };
      if (loaded.extras.has(BEHAVIOUR_EXTRA)) this.behaviour = savedArrays(loaded, BEHAVIOUR_EXTRA, this.learner.model.getWeights().map((w) => w.size));
      if (this.critic) {
        if (!loaded.extras.has(CRITIC_EXTRA)) {
          throw new ValidationError('cannot resume', 'critic', `the run's config says critic ${JSON.stringify(config.critic)}, but its checkpoint ${loaded.dir} holds no critic weights`);
        }
        this.critic.setWeights(savedArrays(loaded, CRITIC_EXTRA, this.critic.weightSizes()));
      }
      this.metrics = readMetrics(this.metricsPath).filter((line) => line.update <= this.state.update);
      // A torn last line that was the checkpoint's own (left by runs before the line came first):
      // the checkpoint's manifest holds its numbers.
      if (this.metrics.at(-1)?.update === this.state.update - 1 && Object.keys(loaded.manifest.metrics).length > 0) {
        this.metrics.push({ update: this.state.update, ...loaded.manifest.metrics } as MetricsLine);
      }
      // Each line goes in before its checkpoint, so a crash leaves every update up to the
      // checkpoint's: lines missing below it were lost otherwise, and resuming would keep the gap.
      const gap = this.metrics.findIndex((line, k) => line.update !== k + 1);
      if (gap >= 0 || this.metrics.length !== this.state.update) {
        const found = gap >= 0 ? `update ${gap + 1} is missing` : `it ends at update ${this.metrics.length}`;
        throw new ValidationError('cannot resume', 'metrics.jsonl', `${this.metricsPath} must hold a line for every update up to the checkpoint's (${this.state.update}), but ${found}: restore the file or start another run`);
      }
      if (adopted !== null) {
        await this.store.setLatest(adopted);
        this.log(`checkpoints/latest.json was missing (as a run stopped between a checkpoint and its pointer leaves it): it now names ${adopted}, the newest checkpoint`);
      }
      if (await this.store.catchUpBest(latest)) {
        this.log(`checkpoints/best.json now names ${latest}, the best so far (the run stopped before pointing it there)`);
      }
      this.log(`resuming after update ${this.state.update}`);
    } else {
      if (this.options.resume) this.log('no checkpoint to resume from: the run starts again from update 0');
      this.learner = new PolicyAgent({ architecture: { hiddenSizes: config.hiddenSizes }, seed: hashSeed(config.seed), name: 'learner', suitSymmetry: config.suitSymmetry });
      if (config.initialPolicy) await this.startFrom(config.initialPolicy);
    }
    this.helpers = await GradientHelper.startMany(config.learnerThreads - 1, helperSetup(this.learner, config, this.critic));
    this.ppo = new PpoLearner(this.learner, config, this.critic, this.helpers);
    if (savedOptimizer) await this.ppo.restoreOptimizer(savedOptimizer.state, savedOptimizer.dir);
    this.league = new League(config.league, this.numPlayers);
    for (const name of this.state.snapshots) this.league.addSnapshot((await this.leagueStore.load(name)).toAgent({ name, mode: 'sample' }));
    // In this thread unless actors collect (their buffers are theirs).
    this.collector = config.actors > 0 ? null : new RolloutCollector(config);
    if (this.options.redis && config.actors === 0) throw new ValidationError('invalid training config', 'actors', 'training on Redis needs actors > 0: the rollout blocks per update');
    if (config.actors > 0) {
      const setup = actorSetup(config, this.numPlayers);
      this.actors = this.options.redis ? await RedisActors.start(setup, config.actors, this.options.redis, this.options.interrupt) : await ActorPool.start(setup, config.actors);
      await this.restoreActors();
    }
    if (this.options.resume) {
      // A crash between a league snapshot (or a checkpoint write) and the trainer state leaves
      // entries from updates this run will redo; so does one before the first checkpoint (a
      // snapshot every 10 updates, a checkpoint every 40), where the run starts again from 0.
      // Removed only once everything the resume needs has loaded.
      for (const store of [this.leagueStore, this.store]) {
        const stale = await store.removeAfter(this.state.update);
        if (stale.length) this.log(`removed ${stale.join(', ')}: written after update ${this.state.update}, redone now`);
      }
    }
    this.checkpointName = latest ?? '';
    this.elapsedBefore = this.metrics.length ? Number(this.metrics[this.metrics.length - 1]!.elapsed ?? 0) : 0;
    // Written only once everything loaded: a refused config or a damaged checkpoint leaves the
    // run folder as it was.
    makeDirs(this.runDir);
    writeFileAtomic(join(this.runDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
    writeFileAtomic(this.metricsPath, this.metrics.map((m) => `${JSON.stringify(m)}\n`).join(''));
  }

  /** Copies the policy weights of the checkpoint at `dir` (same rules and hidden sizes) into the fresh learner. */
  private async startFrom(dir: string): Promise<void> {
    let initial;
    try {
      // A store or a training run's folder stands for its latest, as wherever an agent is named.
      initial = await loadCheckpointOrLatest(dir, { rules: this.rules });
    } catch (e) {
      throw new ValidationError('invalid training config', 'initialPolicy', (e as Error).message);
    }
    const agent = initial.toAgent(); // owns the loaded model
    try {
      if (!sameArchitecture(agent.architecture, this.learner.architecture)) {
        const found = agent.architecture.hiddenSizes;
        throw new ValidationError('invalid training config', 'initialPolicy', `${dir} has hidden layers [${found.join(', ')}], the config [${this.config.hiddenSizes.join(', ')}]`);
      }
      if (agent.suitSymmetry !== this.learner.suitSymmetry) {
        throw new ValidationError('invalid training config', 'suitSymmetry', `${dir} was trained with suitSymmetry ${agent.suitSymmetry}, the config says ${this.learner.suitSymmetry}`);
      }
      setWeights(this.learner, weightsOf(agent));
    } finally {
      agent.dispose();
    }
  }

  /**
   * The actors' leagues, and with overlapped rollouts the rollout the saved run had asked for:
   * asked again with the same weights and the snapshots the actors held then, before the
   * snapshots that came later join, as in the uninterrupted run.
   */
  private async restoreActors(): Promise<void> {
    const actors = this.actors!;
    const resumedOverlap = this.behaviour !== null && this.config.overlapRollouts;
    const early = resumedOverlap ? (this.state.behaviourSnapshots ?? []) : [];
    const byName = new Map(this.league.snapshots.map((agent) => [agent.name, agent]));
    for (const name of early) {
      const agent = byName.get(name) ?? (await this.leagueStore.load(name)).toAgent({ name, mode: 'sample' });
      await actors.addSnapshot(name, weightsOf(agent));
      if (!byName.has(name)) agent.dispose();
    }
    if (resumedOverlap) this.requestRollout(this.state.update + 1, this.behaviour!);
    for (const snapshot of this.league.snapshots) if (!early.includes(snapshot.name)) await actors.addSnapshot(snapshot.name, weightsOf(snapshot));
  }

  /** What the rollout of `update` asks for: its seed and length; imitation or PPO. */
  private rolloutRequest(update: number): RolloutRequest {
    const { config } = this;
    const imitating = update <= config.imitationUpdates;
    return {
      seed: `${config.seed}/u${update}`,
      steps: config.rolloutSteps,
      gamma: config.gamma,
      lambda: imitating ? 1 : config.lambda,
      imitating,
      recordOtherHands: config.critic !== 'shared',
    };
  }

  /** Asks the actors for the rollout of `update` with `weights`; it runs while this thread learns. */
  private requestRollout(update: number, weights: Float32Array[]): void {
    this.pending = this.actors!.collect(weights, this.rolloutRequest(update));
    // Awaited by the next update; a run that stops first must not leave an unhandled rejection.
    this.pending.catch(() => undefined);
  }

  /** Updates until the last one, `stopAfter`, or a stop request (which saves a checkpoint first). */
  async loop(): Promise<void> {
    this.bar = this.verbose ? new ProgressBar('train', this.totalUpdates, process.stderr, this.state.update) : null;
    this.started = Date.now();
    for (let update = this.state.update + 1; update <= this.totalUpdates; update++) {
      const line = await this.learn(update);
      if (update % this.config.league.snapshotEvery === 0) await this.snapshot(update);
      this.state.update = update;
      const evaluate = this.config.evalEvery > 0 && update % this.config.evalEvery === 0;
      if (evaluate) await this.evaluate(update, line);
      const last = update === this.totalUpdates || update === this.options.stopAfter;
      // The line goes in before its checkpoint: a crash between the two leaves a line that the
      // resume drops and redoes, never a checkpoint whose update has no line.
      this.record(line);
      if (evaluate || last || update % this.config.checkpointEvery === 0) await this.save(update, line);
      if (update === this.options.stopAfter) break;
      // An update's awaits settle as microtasks, so a signal's handler (a macrotask) ran only at
      // the next real I/O: Ctrl-C at update 2 stopped the run after update 10.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.options.shouldStop?.()) {
        this.interrupted = true;
        await this.save(update, line);
        break;
      }
    }
    if (!this.checkpointName) await this.save(this.state.update, this.metrics[this.metrics.length - 1]);
  }

  /**
   * One update: a rollout, then behaviour cloning (the first `imitationUpdates`: the teacher
   * plays every seat, recorded as the learner's) or a PPO step. Every draw derives from (seed, update).
   */
  private async learn(update: number): Promise<MetricsLine> {
    const { config } = this;
    const t0 = Date.now();
    const request = this.rolloutRequest(update);
    const { seed, imitating } = request;
    let rollout;
    if (this.actors) {
      const pending = this.pending ?? this.actors.collect(weightsOf(this.learner), request);
      this.pending = null;
      this.behaviour = null;
      rollout = await pending;
      // The next rollout is played with the weights this update starts from, while it learns.
      // After the last update of this process the request is only remembered (and saved), so a
      // resumed or extended run asks for the same rollout.
      if (config.overlapRollouts) {
        const last = Math.min(this.totalUpdates, this.options.stopAfter ?? Infinity);
        this.behaviour = weightsOf(this.learner);
        this.state.behaviourSnapshots = this.league.snapshots.map((agent) => agent.name);
        if (update < last) this.requestRollout(update + 1, this.behaviour);
      }
    } else {
      this.league.reseed(seed);
      const selfPlay = { seats: new Array<SeatController>(this.numPlayers).fill(LEARNER) };
      rollout = this.collector!.collect(this.learner, imitating ? () => selfPlay : (random) => this.league.draw(random), {
        ...request,
        // Made for each update from its seed, as actors make theirs: one made for the run carried
        // its generator across updates, so a resumed run's teacher drew other samples.
        teacher: imitating ? imitationTeacher(config.imitationTeacher, config.teacherSamples, `${seed}/teacher`, this.league.heuristic) : undefined,
      });
    }
    const { batch, stats } = rollout;
    // Only finished hands are learned from: a rollout too short to finish one trained on nothing,
    // logged losses of 0 and saved the untrained policy, with exit 0.
    if (batch.size === 0) {
      throw new ValidationError('invalid training config', 'rolloutSteps', `update ${update}: no hand finished in ${config.rolloutSteps} steps per env over ${config.numEnvs} envs, so there is nothing to learn from: raise rolloutSteps`);
    }
    // The oracle critic values the decisions here, wherever they were played.
    if (this.critic) revalue(batch, this.critic.batchValues(batch, this.learner), request.gamma, request.lambda);
    const warmingUp = update - config.imitationUpdates <= config.criticWarmupUpdates;
    this.ppo.setLearningRate(learningRateAt(config, update));
    const losses = imitating ? this.ppo.imitate(batch, seed) : this.ppo.update(batch, seed, warmingUp && this.critic !== null);
    // A loss that is no longer a number means the weights are gone too: stop before they reach a
    // checkpoint (whose metrics would be refused, far from the cause), naming the likely culprit.
    checkLossesFinite(losses, update, config, '; the last checkpoint is intact');
    const seconds = (Date.now() - t0) / 1000;
    const previousSteps = this.metrics.length ? this.metrics[this.metrics.length - 1]!.envSteps : 0;
    return {
      update,
      envSteps: previousSteps + stats.envSteps,
      learnerDecisions: stats.learnerDecisions,
      batchSize: batch.size,
      episodes: stats.episodes,
      learnerReturn: round(stats.learnerReturn),
      ...Object.fromEntries(Object.entries(losses).map(([k, v]) => [k, round(v)])),
      seconds: round(seconds),
      stepsPerSec: Math.round(stats.envSteps / Math.max(seconds, 1e-6)),
      elapsed: round(this.elapsedBefore + (Date.now() - this.started) / 1000),
    };
  }

  /** A frozen copy of the learner joins the league (saved, so a resumed run has the same league). */
  private async snapshot(update: number): Promise<void> {
    const name = snapshotName(update);
    await this.leagueStore.save(this.learner, { step: update, name });
    this.state.snapshots = [...this.state.snapshots, name].slice(-this.config.league.maxSnapshots);
    const agent = (await this.leagueStore.load(name)).toAgent({ name, mode: 'sample' });
    this.league.addSnapshot(agent);
    await this.actors?.addSnapshot(name, weightsOf(agent));
  }

  private async evaluate(update: number, line: MetricsLine): Promise<void> {
    const [vsRandom, vsHeuristic] = await evaluateAgainst(this.learner, this.rules, this.config.evalDeals, `${this.config.seed}/eval/u${update}`);
    line.evalVsRandom = round(vsRandom.headToHead[0]!.meanDifference);
    line.evalVsRandomCi95 = round(vsRandom.headToHead[0]!.ci95);
    line.evalVsHeuristic = round(vsHeuristic.headToHead[0]!.meanDifference);
    line.evalVsHeuristicCi95 = round(vsHeuristic.headToHead[0]!.ci95);
  }

  /** A checkpoint with the optimizer and trainer state, once per update at most. */
  private async save(update: number, line: MetricsLine | undefined): Promise<void> {
    if (update === this.savedUpdate) return;
    this.savedUpdate = update;
    const numeric = Object.fromEntries(Object.entries(line ?? {}).filter(([, v]) => typeof v === 'number')) as Record<string, number>;
    const saved = await this.store.save(this.learner, {
      step: update,
      metrics: numeric,
      extras: {
        [OPTIMIZER_EXTRA]: encodeOptimizerState(await this.ppo.optimizerState()),
        [TRAINER_EXTRA]: {
          data: new Uint8Array(0),
          meta: {
            update,
            snapshots: this.state.snapshots,
            ...(this.behaviour ? { behaviourSnapshots: this.state.behaviourSnapshots } : {}),
            trainedWith: trainedWith(this.config),
          },
        },
        ...(this.behaviour ? { [BEHAVIOUR_EXTRA]: { data: encodeArrays(this.behaviour) } } : {}),
        ...(this.critic ? { [CRITIC_EXTRA]: { data: encodeArrays(this.critic.weights()) } } : {}),
      },
    });
    this.checkpointName = saved.name;
    await this.store.prune(this.config.keepCheckpoints);
    // League snapshots that no kept checkpoint names are needed by no resume, from the latest or
    // an older one: 12 were kept on disk for a league of 4 after 120 updates.
    const named = new Set([...this.state.snapshots, ...(this.state.behaviourSnapshots ?? [])]);
    for (const checkpoint of await this.store.list()) for (const name of snapshotsNamedBy(checkpoint)) named.add(name);
    await this.leagueStore.keepOnly(named);
  }

  /** Appends the metrics line and redraws the report and the progress bar. */
  private record(line: MetricsLine): void {
    this.metrics.push(line);
    appendFileSync(this.metricsPath, `${JSON.stringify(line)}\n`);
    writeTrainingReport(this.reportPath, `Kratzen training: ${this.config.name}`, this.config, this.metrics);
    this.bar?.update(
      line.update,
      `${line.stepsPerSec} steps/s` + (line.evalVsHeuristic !== undefined ? `, vs heuristic ${line.evalVsHeuristic}, vs random ${line.evalVsRandom}` : ''),
    );
  }

  /** The final duplicate evaluation of a finished run, and where its checkpoint and report are. */
  async finish(): Promise<TrainResult> {
    const { config } = this;
    let finalEval: TrainResult['finalEval'];
    const finished = this.state.update >= this.totalUpdates && !this.interrupted;
    if (finished && config.finalEvalDeals > 0) {
      this.log(`final duplicate evaluation: ${config.finalEvalDeals} deals against each opponent`);
      const shouldStop = this.options.shouldStop;
      let matches: Awaited<ReturnType<typeof evaluateCheckpoint>>;
      try {
        // A stop asked for before or during the evaluation ends it: the checkpoint is saved, and
        // resuming the run plays the evaluation (it ran to its end and the run exited 0).
        if (shouldStop?.()) throw new TournamentStopped(0);
        const dir = join(this.store.root, this.checkpointName);
        // Two matches of finalEvalDeals deals each: minutes with many deals, so a bar shows them.
        const bar = this.verbose ? new ProgressBar('final eval', 2 * config.finalEvalDeals) : null;
        let dealsPlayed = 0;
        const onDeal = bar ? () => bar.update(++dealsPlayed) : undefined;
        matches = await evaluateCheckpoint(dir, this.rules, config.finalEvalDeals, `${config.seed}/final-eval`, { shouldStop, onDeal });
      } catch (e) {
        if (!(e instanceof TournamentStopped)) throw e;
        this.interrupted = true;
        return this.result(undefined);
      }
      const [vsRandom, vsHeuristic] = matches;
      finalEval = { vsRandom, vsHeuristic };
      const [[, randomFolder], [, heuristicFolder]] = FINAL_EVAL_FOLDERS;
      writeTournamentReport(vsRandom, join(this.runDir, randomFolder));
      writeTournamentReport(vsHeuristic, join(this.runDir, heuristicFolder));
      const summary = [vsRandom, vsHeuristic].map(describeMatch).join('\n');
      writeTrainingReport(this.reportPath, `Kratzen training: ${config.name}`, config, this.metrics, summary);
      if (this.verbose) process.stdout.write(`${summary}\n`);
    }
    return this.result(finalEval);
  }

  private result(finalEval: TrainResult['finalEval']): TrainResult {
    const checkpoint = join(this.store.root, this.checkpointName);
    if (this.verbose) process.stdout.write(`checkpoint: ${checkpoint}\nreport: ${this.reportPath}\n`);
    return { runDir: this.runDir, updates: this.state.update, checkpoint, metrics: this.metrics, finalEval, interrupted: this.interrupted };
  }

  /** `e` as train() reports it: a failed write of the run as an OutputError, saying which checkpoint resumes it. */
  outputError(e: unknown): unknown {
    return runOutputError(e, this.runDir, this.checkpointName || null);
  }

  /**
   * A new run refused before its first update was recorded (its config cannot train: rolloutSteps
   * too short to finish a hand, say) takes back the files it wrote, as a refused config leaves
   * nothing; the lock's release then removes a folder it made. It had left config.json and an
   * empty metrics.jsonl behind.
   */
  discardUnsaved(): void {
    // Only a run refused before it learned anything: one that failed after some updates (Redis
    // lost in update 3, before the first checkpoint) lost its metrics and config, so that
    // --resume said there was nothing to resume and its league snapshots blocked the name.
    if (this.options.resume || this.checkpointName || this.metrics.length > 0) return;
    for (const file of [join(this.runDir, 'config.json'), this.metricsPath]) rmSync(file, { force: true });
  }

  async close(): Promise<void> {
    this.learner?.dispose();
    this.critic?.dispose();
    this.league?.dispose();
    await this.actors?.close();
    await Promise.all(this.helpers.map((h) => h.close()));
    this.lock.release();
  }
}

/** "learner beats heuristic: +1.23 ± 0.45 chips per hand (better in 30 of 40 deals, tied in 2, 160 hands)". */
export function describeMatch(result: TournamentResult): string {
  const h = result.headToHead[0]!;
  const verdict = h.meanDifference - h.ci95 > 0 ? 'beats' : h.meanDifference + h.ci95 < 0 ? 'loses to' : 'ties with';
  return (
    `learner ${verdict} ${result.agents[1]!.name}: ${h.meanDifference >= 0 ? '+' : ''}${h.meanDifference.toFixed(3)} ± ${h.ci95.toFixed(3)} ` +
    `chips per hand (${dealsBetterText(h)}, ${result.hands} hands)`
  );
}

/** Duplicate matches of the learner (greedy, in this thread) against random and heuristic players. */
async function evaluateAgainst(learner: PolicyAgent, rules: Record<string, unknown>, deals: number, seed: string) {
  learner.mode = 'greedy';
  const run = (opponent: string) =>
    runTournament({ agents: ['learner', opponent], rules, deals, seed, workers: 1 }, { preloaded: new Map([['learner', learner as Agent]]) });
  return [await run('random'), await run('heuristic')] as const;
}

/**
 * The final duplicate matches of the learner's last checkpoint against random and heuristic
 * players, on up to two worker threads: a deal's result depends on its seed alone, so this is the
 * match `evaluateAgainst` plays in this thread (the checkpoint holds the same weights, played
 * greedily), in about half the time. The learner is named `learner` in the results.
 */
async function evaluateCheckpoint(dir: string, rules: Record<string, unknown>, deals: number, seed: string, watch: Pick<RunOptions, 'shouldStop' | 'onDeal'> = {}) {
  const workers = Math.min(2, availableParallelism());
  const options: RunOptions = { loadCheckpoint: loadCheckpointAgent, checkpointModule: checkpointLoaderModule(), ...watch };
  const run = async (opponent: string) => asLearner(await runTournament({ agents: [dir, opponent], rules, deals, seed, workers }, options), dir);
  return [await run('random'), await run('heuristic')] as const;
}

/** The checkpoint loader module, for tournament workers. */
function checkpointLoaderModule(): string {
  return builtModule(new URL('../checkpoints/agent-loader.js', import.meta.url), new URL('../dist/checkpoints/agent-loader.js', import.meta.url)).href;
}

/** `result` with the agent `spec` renamed `learner`. */
function asLearner(result: TournamentResult, spec: string): TournamentResult {
  const name = (n: string) => (n === spec ? 'learner' : n);
  return {
    ...result,
    config: { ...result.config, agents: result.config.agents.map(name) },
    agents: result.agents.map((a) => ({ ...a, name: name(a.name) })),
    headToHead: result.headToHead.map((h) => ({ ...h, a: name(h.a), b: name(h.b) })),
  };
}

/** Largest metrics.jsonl read on resume (a line per update, a few hundred bytes each). */
const MAX_METRICS_BYTES = 256 << 20;

function readMetrics(path: string): MetricsLine[] {
  if (!existsSync(path)) return [];
  let text: string;
  try {
    text = readRunFile(path, MAX_METRICS_BYTES);
  } catch (e) {
    throw new ValidationError('cannot resume', 'metrics.jsonl', `cannot read ${path}: ${(e as Error).message}`);
  }
  const lines = text.split('\n').filter(Boolean);
  return lines.flatMap((line, i) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      // A crash while appending leaves at most a torn last line, of an update after the last
      // checkpoint (its line is appended before it is saved): dropped, and the update redone.
      if (i === lines.length - 1) return [];
      throw new ValidationError('cannot resume', 'metrics.jsonl', `line ${i + 1} of ${path} is not JSON: ${(e as Error).message}`);
    }
    if (!isJsonObject(parsed) || !Number.isInteger(parsed.update)) {
      throw new ValidationError('cannot resume', 'metrics.jsonl', `line ${i + 1} of ${path} is not a metrics line (an object with an integer "update")`);
    }
    return [parsed as MetricsLine];
  });
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

/** A numeric seed for weight initialization from any run seed. */
export function hashSeed(seed: number | string): number {
  return typeof seed === 'number' ? seed : Math.floor(seedrandom(String(seed))() * 2 ** 31);
}

/** The step size of `update` (1-based, imitation updates first) under the config's schedule. */
export function learningRateAt(config: Pick<TrainConfig, 'learningRate' | 'learningRateDecay' | 'imitationUpdates' | 'updates'>, update: number): number {
  const ppoUpdate = update - config.imitationUpdates;
  if (config.learningRateDecay === 'none' || ppoUpdate < 1) return config.learningRate;
  return config.learningRate * (1 - (ppoUpdate - 1) / config.updates);
}
