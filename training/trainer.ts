// Self-play PPO training: rollouts against a league (the learner itself, heuristic, random, past
// snapshots), PPO updates, periodic duplicate evaluation, checkpoints with optimizer state,
// metrics in JSONL and an HTML report rewritten as training goes. `resume` continues from the
// latest checkpoint and, for a fixed seed on the same backend, reproduces the uninterrupted run's
// metrics (timings aside): every update's randomness derives from (seed, update).

import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import seedrandom from 'seedrandom';
import { createGame } from '../env/rules/index.js';
import { HeuristicAgent, PhaseRoutedAgent, PimcAgent, PolicyAgent, RandomAgent, selectBackend, type Agent } from '../agents/index.js';
import { CheckpointStore, type LoadedCheckpoint } from '../checkpoints/index.js';
import { parseTrainConfig, type TrainConfig } from './config.js';
import { writeFileAtomic } from './files.js';
import { PpoLearner, type UpdateMetrics } from './ppo.js';
import { LEARNER, RolloutCollector, type LeagueDraw } from './rollout.js';
import { runTournament, type TournamentResult } from './tournament.js';
import { writeTournamentReport } from './eval-report.js';
import { writeTrainingReport, type MetricsLine } from './train-report.js';
import { ProgressBar } from './progress.js';

export interface TrainOptions {
  /** Continue the run in `<runsDir>/<name>` from its latest checkpoint. */
  resume?: boolean;
  /** Stop after this update (for tests of resume); the run is left resumable. */
  stopAfter?: number;
  /** Print progress (bar, summaries) to stderr/stdout. @default true */
  verbose?: boolean;
  /** Checked after every update; true stops training (Ctrl-C sets it). */
  shouldStop?: () => boolean;
}

export interface TrainResult {
  runDir: string;
  updates: number;
  checkpoint: string;
  metrics: MetricsLine[];
  finalEval?: { vsRandom: TournamentResult; vsHeuristic: TournamentResult };
  interrupted: boolean;
}

interface TrainerState {
  update: number;
  snapshots: string[];
}

const TIMING_FIELDS = ['seconds', 'stepsPerSec', 'elapsed'];
/** Metrics fields that depend on the wall clock, not on the seed. */
export function withoutTimings(line: MetricsLine): MetricsLine {
  const copy = { ...line };
  for (const key of TIMING_FIELDS) delete copy[key];
  return copy;
}

export async function train(input: unknown, options: TrainOptions = {}): Promise<TrainResult> {
  const verbose = options.verbose ?? true;
  let config = parseTrainConfig(input);
  const runDir = resolve(config.runsDir, config.name);
  const configPath = join(runDir, 'config.json');
  if (options.resume) {
    if (!existsSync(configPath)) throw new Error(`nothing to resume: ${configPath} does not exist`);
    // The saved config wins (a resumed run must be the same run); only `updates` may grow.
    const saved = parseTrainConfig(JSON.parse(readFileSync(configPath, 'utf8')));
    config = { ...saved, updates: Math.max(saved.updates, config.updates) };
  } else if (existsSync(join(runDir, 'checkpoints'))) {
    throw new Error(`${runDir} already holds a run: pass --resume to continue it, or choose another --name`);
  }
  mkdirSync(runDir, { recursive: true });
  writeFileAtomic(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const log = (text: string) => verbose && process.stderr.write(`${text}\n`);

  const { backend } = await selectBackend(config.backend);
  log(`training ${config.name}: rules ${JSON.stringify(config.rules)}, TF.js backend ${backend}, ${config.updates} updates`);
  const rules = config.rules;
  const numPlayers = createGame(rules).numPlayers;
  const store = new CheckpointStore(join(runDir, 'checkpoints'), { rules, bestMetric: { name: 'evalVsHeuristic', higherIsBetter: true } });
  const leagueStore = new CheckpointStore(join(runDir, 'league'), { rules });
  const metricsPath = join(runDir, 'metrics.jsonl');
  const reportPath = join(runDir, 'report.html');

  let learner: PolicyAgent;
  let state: TrainerState = { update: 0, snapshots: [] };
  let metrics: MetricsLine[] = [];
  let optimizerState: { name: string; shape: number[]; data: Float32Array }[] | null = null;
  if (options.resume && (await store.pointer('latest'))) {
    const loaded = await store.load('latest');
    learner = loaded.toAgent({ name: 'learner', seed: 0 });
    state = JSON.parse(JSON.stringify(loaded.extras.get('trainer')?.meta ?? state)) as TrainerState;
    optimizerState = decodeOptimizer(loaded);
    metrics = readMetrics(metricsPath).filter((line) => line.update <= state.update);
    log(`resuming after update ${state.update}`);
  } else {
    learner = new PolicyAgent({ architecture: { hiddenSizes: config.hiddenSizes }, seed: hashSeed(config.seed), name: 'learner' });
  }
  writeFileAtomic(metricsPath, metrics.map((m) => `${JSON.stringify(m)}\n`).join(''));
  const ppo = new PpoLearner(learner, config);
  if (optimizerState) await ppo.restoreOptimizer(optimizerState);

  const snapshots: PolicyAgent[] = [];
  for (const name of state.snapshots) snapshots.push(snapshotAgent((await leagueStore.load(name)).toAgent({ name, mode: 'sample' })));
  const collector = new RolloutCollector({ rules, numEnvs: config.numEnvs, rolloutSteps: config.rolloutSteps, rewardScale: config.rewardScale, rewardNormalization: config.rewardNormalization });
  const bar = verbose ? new ProgressBar('train', config.imitationUpdates + config.updates, process.stderr, state.update) : null;
  const started = Date.now();
  let interrupted = false;
  let checkpointName = (await store.pointer('latest')) ?? '';
  const elapsedBefore = metrics.length ? Number(metrics[metrics.length - 1]!.elapsed ?? 0) : 0;

  let savedUpdate = -1;
  const saveCheckpoint = async (update: number, line: MetricsLine | undefined) => {
    if (update === savedUpdate) return;
    savedUpdate = update;
    const numeric = Object.fromEntries(Object.entries(line ?? {}).filter(([, v]) => typeof v === 'number')) as Record<string, number>;
    const optimizer = encodeOptimizer(await ppo.optimizerState());
    const saved = await store.save(learner, {
      step: update,
      metrics: numeric,
      extras: { optimizer, trainer: { data: new Uint8Array(0), meta: { update, snapshots: state.snapshots } } },
    });
    checkpointName = saved.name;
    await store.prune(config.keepCheckpoints);
  };

  const totalUpdates = config.imitationUpdates + config.updates;
  const teacher: Agent =
    config.imitationTeacher === 'heuristic'
      ? new HeuristicAgent()
      : new PhaseRoutedAgent(new PimcAgent({ samples: config.teacherSamples, seed: `${config.seed}/teacher` }), new HeuristicAgent());
  for (let update = state.update + 1; update <= totalUpdates; update++) {
    const t0 = Date.now();
    const seed = `${config.seed}/u${update}`;
    // The first `imitationUpdates` updates clone the heuristic (every seat is the learner's,
    // played by the teacher); PPO follows.
    const imitating = update <= config.imitationUpdates;
    const opponents: Agent[] = [new HeuristicAgent(), new RandomAgent({ seed }), ...snapshots];
    snapshots.forEach((agent, k) => agent.reseed(`${seed}/snapshot${k}`));
    const draw = imitating
      ? () => ({ seats: new Array<number>(numPlayers).fill(LEARNER) })
      : (random: () => number) => drawSeats(config, numPlayers, snapshots.length, random);
    const { batch, stats } = collector.collect(learner, opponents, draw, {
      seed,
      steps: config.rolloutSteps,
      gamma: config.gamma,
      lambda: imitating ? 1 : config.lambda,
      teacher: imitating ? teacher : undefined,
    });
    const losses: UpdateMetrics | ReturnType<PpoLearner['imitate']> = imitating ? ppo.imitate(batch, seed) : ppo.update(batch, seed);
    const seconds = (Date.now() - t0) / 1000;
    const previousSteps = metrics.length ? metrics[metrics.length - 1]!.envSteps : 0;
    const line: MetricsLine = {
      update,
      envSteps: previousSteps + stats.envSteps,
      learnerDecisions: stats.learnerDecisions,
      batchSize: batch.size,
      episodes: stats.episodes,
      learnerReturn: round(stats.learnerReturn),
      ...Object.fromEntries(Object.entries(losses).map(([k, v]) => [k, round(v)])),
      seconds: round(seconds),
      stepsPerSec: Math.round(stats.envSteps / Math.max(seconds, 1e-6)),
      elapsed: round(elapsedBefore + (Date.now() - started) / 1000),
    };

    if (update % config.league.snapshotEvery === 0) {
      const name = `snapshot-u${update}`;
      await leagueStore.save(learner, { step: update, name });
      state.snapshots = [...state.snapshots, name].slice(-config.league.maxSnapshots);
      snapshots.push(snapshotAgent((await leagueStore.load(name)).toAgent({ name, mode: 'sample' })));
      while (snapshots.length > config.league.maxSnapshots) snapshots.shift()!.dispose();
    }
    state.update = update;
    const evaluate = config.evalEvery > 0 && update % config.evalEvery === 0;
    const last = update === totalUpdates || update === options.stopAfter;
    if (evaluate) {
      const [vsRandom, vsHeuristic] = await evaluateAgainst(learner, rules, config.evalDeals, `${config.seed}/eval/u${update}`);
      line.evalVsRandom = round(vsRandom.headToHead[0]!.meanDifference);
      line.evalVsHeuristic = round(vsHeuristic.headToHead[0]!.meanDifference);
    }
    if (evaluate || last || update % config.checkpointEvery === 0) await saveCheckpoint(update, line);
    metrics.push(line);
    appendFileSync(metricsPath, `${JSON.stringify(line)}\n`);
    writeTrainingReport(reportPath, `Kratzen training: ${config.name}`, config, metrics);
    bar?.update(
      update,
      `${line.stepsPerSec} steps/s` + (line.evalVsHeuristic !== undefined ? `, vs heuristic ${line.evalVsHeuristic}, vs random ${line.evalVsRandom}` : ''),
    );
    if (update === options.stopAfter) break;
    if (options.shouldStop?.()) {
      interrupted = true;
      await saveCheckpoint(update, line);
      break;
    }
  }
  if (!checkpointName) await saveCheckpoint(state.update, metrics[metrics.length - 1]);

  let finalEval: TrainResult['finalEval'];
  const finished = state.update >= totalUpdates && !interrupted;
  if (finished && config.finalEvalDeals > 0) {
    log(`final duplicate evaluation: ${config.finalEvalDeals} deals against each opponent`);
    const [vsRandom, vsHeuristic] = await evaluateAgainst(learner, rules, config.finalEvalDeals, `${config.seed}/final-eval`);
    finalEval = { vsRandom, vsHeuristic };
    writeTournamentReport(vsRandom, join(runDir, 'eval-vs-random'));
    writeTournamentReport(vsHeuristic, join(runDir, 'eval-vs-heuristic'));
    const summary = [vsRandom, vsHeuristic].map(describeMatch).join('\n');
    writeTrainingReport(reportPath, `Kratzen training: ${config.name}`, config, metrics, summary);
    if (verbose) process.stdout.write(`${summary}\n`);
  }
  if (verbose) process.stdout.write(`checkpoint: ${join(store.root, checkpointName)}\nreport: ${reportPath}\n`);
  learner.dispose();
  snapshots.forEach((s) => s.dispose());
  return { runDir, updates: state.update, checkpoint: join(store.root, checkpointName), metrics, finalEval, interrupted };
}

/** "learner vs heuristic: +1.23 ± 0.45 chips per hand (better in 30 of 40 deals)". */
export function describeMatch(result: TournamentResult): string {
  const h = result.headToHead[0]!;
  const verdict = h.meanDifference - h.ci95 > 0 ? 'beats' : h.meanDifference + h.ci95 < 0 ? 'loses to' : 'ties with';
  return (
    `learner ${verdict} ${result.agents[1]!.name}: ${h.meanDifference >= 0 ? '+' : ''}${h.meanDifference.toFixed(3)} ± ${h.ci95.toFixed(3)} ` +
    `chips per hand (better in ${h.aWins} of ${h.deals} deals, ${result.hands} hands)`
  );
}

/** Duplicate matches of the learner (greedy, in this thread) against random and heuristic players. */
async function evaluateAgainst(learner: PolicyAgent, rules: Record<string, unknown>, deals: number, seed: string) {
  learner.mode = 'greedy';
  const run = (opponent: string) =>
    runTournament({ agents: ['learner', opponent], rules, deals, seed, workers: 1 }, { preloaded: new Map([['learner', learner as Agent]]) });
  return [await run('random'), await run('heuristic')] as const;
}

/** Seats for one episode: all learner (self-play), or the learner at some seats against one kind of opponent. */
function drawSeats(config: TrainConfig, numPlayers: number, numSnapshots: number, random: () => number): LeagueDraw {
  const w = config.league;
  const weights = [w.selfPlay, w.heuristic, w.random, numSnapshots > 0 ? w.snapshots : 0];
  const total = weights.reduce((a, b) => a + b, 0);
  let u = random() * total;
  let kind = 0;
  while (kind < weights.length - 1 && (u -= weights[kind]!) >= 0) kind++;
  if (kind === 0) return { seats: new Array<number>(numPlayers).fill(LEARNER) };
  const opponent = kind === 1 ? 0 : kind === 2 ? 1 : 2 + Math.floor(random() * numSnapshots);
  const learners = 1 + Math.floor(random() * (numPlayers - 1));
  const seats = new Array<number>(numPlayers).fill(opponent);
  const order = Array.from({ length: numPlayers }, (_, s) => s);
  for (let k = order.length - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    [order[k], order[j]] = [order[j]!, order[k]!];
  }
  for (let k = 0; k < learners; k++) seats[order[k]!] = LEARNER;
  return { seats };
}

function snapshotAgent(agent: PolicyAgent): PolicyAgent {
  agent.model.trainable = false;
  return agent;
}

function encodeOptimizer(state: { name: string; shape: number[]; data: Float32Array }[]) {
  const total = state.reduce((n, w) => n + w.data.length, 0);
  const data = new Float32Array(total);
  let offset = 0;
  for (const w of state) {
    data.set(w.data, offset);
    offset += w.data.length;
  }
  return { data: new Uint8Array(data.buffer), meta: state.map((w) => ({ name: w.name, shape: w.shape })) };
}

function decodeOptimizer(loaded: LoadedCheckpoint): { name: string; shape: number[]; data: Float32Array }[] | null {
  const blob = loaded.extras.get('optimizer');
  if (!blob) return null;
  const floats = new Float32Array(blob.data.buffer.slice(blob.data.byteOffset, blob.data.byteOffset + blob.data.byteLength));
  let offset = 0;
  return (blob.meta as { name: string; shape: number[] }[]).map((w) => {
    const size = w.shape.reduce((a, b) => a * b, 1);
    const data = floats.slice(offset, offset + size);
    offset += size;
    return { name: w.name, shape: w.shape, data };
  });
}

function readMetrics(path: string): MetricsLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricsLine);
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

/** A numeric seed for weight initialization from any run seed. */
function hashSeed(seed: number | string): number {
  return typeof seed === 'number' ? seed : Math.floor(seedrandom(String(seed))() * 2 ** 31);
}
