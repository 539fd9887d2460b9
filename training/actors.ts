// Rollouts on several cores: the envs of an update are split into `actors` blocks, each played by
// a RolloutActor (its own VecEnv, a copy of the learner's weights, its own league) in a worker
// thread; the blocks' batches are concatenated in block order. The trainer asks for update u+1's
// rollout before it learns from update u's (config `overlapRollouts`), so the actors play while
// the learner updates, with weights one version stale; a checkpoint keeps those weights and the
// actors' snapshot list, so a resumed run asks for the same rollout (training/trainer.ts).
//
// Reproducible for a given seed and number of actors: block k of update u draws only on the seed
// `<seed>/u<u>/a<k>`, the weights sent with it and the snapshots its actor holds, whichever
// thread plays it and whenever.

import { Worker } from 'node:worker_threads';
import { PhaseRoutedAgent, PimcAgent, PolicyAgent, selectBackend, tf, type Agent } from '../agents/index.js';
import { League } from './league.js';
import { LEARNER, RolloutCollector, type Batch, type RolloutStats, type SeatController } from './rollout.js';
import type { TrainConfig } from './config.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import type { SuitSymmetry } from '../env/suit-symmetry.js';
import { builtModule } from '../env/built-module.js';

/** What every actor needs to build its collector, learner copy and league. */
export interface ActorSetup {
  rules: Record<string, unknown>;
  /** Envs of this actor (the run's numEnvs / actors). */
  numEnvs: number;
  rolloutSteps: number;
  rewardScale: number;
  rewardNormalization: 'chips' | 'pot';
  hiddenSizes: number[];
  suitSymmetry: SuitSymmetry;
  backend: TrainConfig['backend'];
  league: TrainConfig['league'];
  imitationTeacher: TrainConfig['imitationTeacher'];
  teacherSamples: number;
  numPlayers: number;
}

/** One block of one update's rollout. */
export interface RolloutRequest {
  seed: string;
  steps: number;
  gamma: number;
  lambda: number;
  imitating: boolean;
  /** Record the other seats' hands and reward chains, for the learner's oracle critic. */
  recordOtherHands?: boolean;
}

export interface RolloutResult {
  batch: Batch;
  stats: RolloutStats;
}

/** The learner's weights as plain arrays, in the model's order (what travels to the actors). */
export function weightsOf(agent: PolicyAgent): Float32Array[] {
  return agent.model.getWeights().map((w) => new Float32Array(w.dataSync()));
}

/** Sets a policy's weights from arrays in the model's order (from `weightsOf`). */
export function setWeights(agent: PolicyAgent, weights: Float32Array[]): void {
  const shapes = agent.model.getWeights().map((w) => w.shape);
  if (shapes.length !== weights.length) throw new Error(`expected ${shapes.length} weight arrays, got ${weights.length}`);
  const tensors = weights.map((w, i) => tf.tensor(w, shapes[i]));
  agent.model.setWeights(tensors);
  tensors.forEach((t) => t.dispose());
}

/** The agent whose moves the learner clones in the imitation updates. */
export function imitationTeacher(kind: TrainConfig['imitationTeacher'], samples: number, seed: string, heuristic: Agent): Agent {
  return kind === 'heuristic' ? heuristic : new PhaseRoutedAgent(new PimcAgent({ samples, seed }), heuristic);
}

/** One actor: plays rollout blocks with the weights it was last given. Used in a thread or in-process. */
export class RolloutActor {
  private readonly collector: RolloutCollector;
  private readonly learner: PolicyAgent;
  private league: League;

  private constructor(private readonly setup: ActorSetup) {
    this.collector = new RolloutCollector(setup);
    this.learner = new PolicyAgent({ architecture: { hiddenSizes: setup.hiddenSizes }, name: 'learner', suitSymmetry: setup.suitSymmetry });
    this.league = new League(setup.league, setup.numPlayers);
  }

  static async create(setup: ActorSetup): Promise<RolloutActor> {
    await selectBackend(setup.backend);
    return new RolloutActor(setup);
  }

  setWeights(weights: Float32Array[]): void {
    setWeights(this.learner, weights);
  }

  /** A frozen copy of the learner joins this actor's league, as in the trainer's. */
  addSnapshot(name: string, weights: Float32Array[]): void {
    const agent = new PolicyAgent({ architecture: { hiddenSizes: this.setup.hiddenSizes }, name, mode: 'sample', suitSymmetry: this.setup.suitSymmetry });
    setWeights(agent, weights);
    this.league.addSnapshot(agent);
  }

  /** Empties the league of snapshots (a remote actor rebuilds it from each job's list). */
  clearSnapshots(): void {
    this.league.dispose();
    this.league = new League(this.setup.league, this.setup.numPlayers);
  }

  collect(request: RolloutRequest): RolloutResult {
    const { seed } = request;
    this.league.reseed(seed);
    const selfPlay = { seats: new Array<SeatController>(this.setup.numPlayers).fill(LEARNER) };
    const teacher = request.imitating ? imitationTeacher(this.setup.imitationTeacher, this.setup.teacherSamples, `${seed}/teacher`, this.league.heuristic) : undefined;
    return this.collector.collect(this.learner, request.imitating ? () => selfPlay : (random) => this.league.draw(random), {
      seed,
      steps: request.steps,
      gamma: request.gamma,
      lambda: request.lambda,
      teacher,
      recordOtherHands: request.recordOtherHands,
    });
  }

  dispose(): void {
    this.learner.dispose();
    this.league.dispose();
  }
}

/** Blocks' batches end to end, in block order; their statistics summed (returns weighted by seats). */
export function mergeRollouts(parts: RolloutResult[]): RolloutResult {
  const size = parts.reduce((sum, p) => sum + p.batch.size, 0);
  const concat = <T extends Float32Array | Int32Array | Uint8Array>(pick: (b: Batch) => T, make: (n: number) => T, width: number): T => {
    const out = make(size * width);
    let offset = 0;
    for (const { batch } of parts) {
      out.set(pick(batch).subarray(0, batch.size * width), offset);
      offset += batch.size * width;
    }
    return out;
  };
  const obsWidth = parts[0]!.batch.observations.length / Math.max(1, parts[0]!.batch.size);
  const maskWidth = parts[0]!.batch.masks.length / Math.max(1, parts[0]!.batch.size);
  const seats = parts.reduce((sum, p) => sum + p.stats.learnerEpisodeSeats, 0);
  const recorded = parts.every((p) => p.batch.otherHands && p.batch.rewards && p.batch.next);
  return {
    batch: {
      size,
      observations: concat((b) => b.observations, (n) => new Float32Array(n), obsWidth || 0),
      masks: concat((b) => b.masks, (n) => new Uint8Array(n), maskWidth || 0),
      actions: concat((b) => b.actions, (n) => new Int32Array(n), 1),
      logProbs: concat((b) => b.logProbs, (n) => new Float32Array(n), 1),
      values: concat((b) => b.values, (n) => new Float32Array(n), 1),
      advantages: concat((b) => b.advantages, (n) => new Float32Array(n), 1),
      returns: concat((b) => b.returns, (n) => new Float32Array(n), 1),
      ...(recorded
        ? { otherHands: concat((b) => b.otherHands!, (n) => new Float32Array(n), ORACLE_SIZE), rewards: concat((b) => b.rewards!, (n) => new Float32Array(n), 1), next: mergedChains(parts, size) }
        : {}),
    },
    stats: {
      envSteps: parts.reduce((sum, p) => sum + p.stats.envSteps, 0),
      learnerDecisions: parts.reduce((sum, p) => sum + p.stats.learnerDecisions, 0),
      episodes: parts.reduce((sum, p) => sum + p.stats.episodes, 0),
      learnerReturn: seats > 0 ? parts.reduce((sum, p) => sum + p.stats.learnerReturn * p.stats.learnerEpisodeSeats, 0) / seats : 0,
      learnerEpisodeSeats: seats,
    },
  };
}

/** The blocks' chains end to end: a block's rows point into the block, so they shift by the rows before it. */
function mergedChains(parts: RolloutResult[], size: number): Int32Array {
  const next = new Int32Array(size);
  let before = 0;
  for (const { batch } of parts) {
    for (let j = 0; j < batch.size; j++) next[before + j] = batch.next![j]! >= 0 ? batch.next![j]! + before : -1;
    before += batch.size;
  }
  return next;
}

/** The seed of block k of the rollout whose seed is `seed`. */
export function blockSeed(seed: string, block: number): string {
  return `${seed}/a${block}`;
}

function actorScript(): URL {
  return builtModule(new URL('./actor-worker.js', import.meta.url), new URL('../dist/training/actor-worker.js', import.meta.url));
}

/** Where the trainer's rollouts are collected: worker threads here, or workers through Redis. */
export interface RolloutActors {
  addSnapshot(name: string, weights: Float32Array[]): Promise<void>;
  collect(weights: Float32Array[], request: RolloutRequest): Promise<RolloutResult>;
  close(): Promise<void>;
}

type Reply = { id: number; result?: RolloutResult; error?: string };

/** `count` RolloutActors in worker threads. */
export class ActorPool implements RolloutActors {
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: RolloutResult | undefined) => void; reject: (e: Error) => void }>();

  private constructor(private readonly workers: Worker[]) {
    for (const worker of workers) {
      worker.on('message', (reply: Reply) => {
        const entry = this.waiting.get(reply.id);
        if (!entry) return;
        this.waiting.delete(reply.id);
        if (reply.error) entry.reject(new Error(`actor: ${reply.error}`));
        else entry.resolve(reply.result);
      });
      worker.on('error', (e) => this.failAll(e));
      worker.on('exit', (code) => code !== 0 && this.failAll(new Error(`actor thread exited with ${code}`)));
    }
  }

  static async start(setup: ActorSetup, count: number): Promise<ActorPool> {
    const workers = Array.from({ length: count }, () => new Worker(actorScript()));
    const pool = new ActorPool(workers);
    await Promise.all(workers.map((w) => pool.send(w, { kind: 'init', setup })));
    return pool;
  }

  get size(): number {
    return this.workers.length;
  }

  private failAll(error: Error): void {
    for (const entry of this.waiting.values()) entry.reject(error);
    this.waiting.clear();
  }

  private send(worker: Worker, message: Record<string, unknown>): Promise<RolloutResult | undefined> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  }

  async addSnapshot(name: string, weights: Float32Array[]): Promise<void> {
    await Promise.all(this.workers.map((w) => this.send(w, { kind: 'snapshot', name, weights })));
  }

  /** One update's rollout: block k (seed `blockSeed(seed, k)`) on actor k, with `weights`. */
  async collect(weights: Float32Array[], request: RolloutRequest): Promise<RolloutResult> {
    const parts = await Promise.all(
      this.workers.map((w, k) => this.send(w, { kind: 'collect', weights, request: { ...request, seed: blockSeed(request.seed, k) } })),
    );
    return mergeRollouts(parts as RolloutResult[]);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** The actors' setup for a training config. */
export function actorSetup(config: TrainConfig, numPlayers: number): ActorSetup {
  return {
    rules: config.rules,
    numEnvs: config.numEnvs / Math.max(1, config.actors),
    rolloutSteps: config.rolloutSteps,
    rewardScale: config.rewardScale,
    rewardNormalization: config.rewardNormalization,
    hiddenSizes: config.hiddenSizes,
    suitSymmetry: config.suitSymmetry,
    backend: config.backend,
    league: config.league,
    imitationTeacher: config.imitationTeacher,
    teacherSamples: config.teacherSamples,
    numPlayers,
  };
}
