// Self-play rollouts on workers through Redis: the learner stays in the trainer's process; each
// update publishes its weights as a blob (by content hash, so the hash is the version) and puts
// one job per block of envs on the `rollout` queue; workers play the block with a RolloutActor
// and store the batch as a blob. The trainer waits for every block of the update before learning,
// so no rollout is ever stale: each job names the weights it must use and a worker plays with
// exactly those. A job retried after a worker died plays the same block again with the same
// weights and seed, gives the same batch, and is taken once: nothing lost, nothing doubled. For a
// seed and a number of blocks, a run gives the metrics a run with that many local actor threads
// gives.

import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { blockSeed, mergeRollouts, type ActorSetup, type RolloutActors, type RolloutRequest, type RolloutResult } from '../actors.js';
import type { Batch, RolloutStats } from '../rollout.js';
import { NUM_ACTIONS, ValidationError } from '../../env/rules/index.js';
import { OBS_SIZE } from '../../env/observation.js';
import { ORACLE_SIZE } from '../../env/oracle.js';
import { decodeArrays, encodeArrays } from './arrays.js';
import { distributedRunFailure, runJobs } from './jobs.js';
import { BlobStore, KEY_PREFIX, ROLLOUT_QUEUE, closeRedisClients, quietErrors, type RedisConnection } from './redis.js';

export interface RolloutBlock {
  setup: ActorSetup;
  /** Hash of the learner's weights blob. */
  weights: string;
  /** The league's snapshots, oldest first: names and weight blob hashes. */
  snapshots: { name: string; weights: string }[];
  request: RolloutRequest;
}

export interface RolloutReply {
  /** Hash of the batch blob (encodeBatch) and its rows. */
  batch: string;
  size: number;
  stats: RolloutStats;
}

/** The batch's arrays in one blob; the oracle critic's three (other hands, rewards, chains) last when recorded. */
export function encodeBatch(b: Batch): Buffer {
  const oracle = b.otherHands && b.rewards && b.next ? [b.otherHands, b.rewards, b.next] : [];
  return encodeArrays([b.observations, b.masks, b.actions, b.logProbs, b.values, b.advantages, b.returns, ...oracle]);
}

/**
 * The batch of a rollout blob, refused unless it is one a worker could have collected: arrays of
 * the right kinds and lengths for `size` rows, finite numbers, masks of 0 and 1, each action legal
 * in its row's mask, chains that only point to later rows. A forged or damaged blob (Redis is
 * shared: docs/scale-out.md) had trained on NaN advantages, or on actions past the policy's
 * outputs, without a word; `job` names it in the error.
 */
export function decodeBatch(data: Buffer, size: number, job = 'a rollout job', recorded = false): Batch {
  const arrays = decodeArrays(data);
  const fail = (what: string): never => {
    throw new Error(`${job} returned a batch whose ${what}`);
  };
  if (!Number.isSafeInteger(size) || size < 0) fail(`size ${JSON.stringify(size)?.slice(0, 40)} is no row count`);
  // The oracle critic's arrays come exactly when the request recorded the other hands.
  const expected = recorded ? 10 : 7;
  if (arrays.length !== expected) fail(`blob holds ${arrays.length} arrays, not ${expected}`);
  type Shape = readonly [string, new (n: number) => Float32Array | Int32Array | Uint8Array, number];
  const shapes: Shape[] = [
    ['observations', Float32Array, OBS_SIZE],
    ['masks', Uint8Array, NUM_ACTIONS],
    ['actions', Int32Array, 1],
    ['logProbs', Float32Array, 1],
    ['values', Float32Array, 1],
    ['advantages', Float32Array, 1],
    ['returns', Float32Array, 1],
    ...(recorded ? ([['otherHands', Float32Array, ORACLE_SIZE], ['rewards', Float32Array, 1], ['next', Int32Array, 1]] satisfies Shape[]) : []),
  ];
  shapes.forEach(([name, Kind, width], k) => {
    const array = arrays[k]!;
    if (!(array instanceof Kind) || array.length !== size * width) fail(`${name} is not ${size} x ${width} of ${Kind.name}`);
    const bad = array instanceof Float32Array ? array.findIndex((x) => !Number.isFinite(x)) : -1;
    if (bad >= 0) fail(`${name} holds ${array[bad]} at ${bad}`);
  });
  const [observations, masks, actions, logProbs, values, advantages, returns, otherHands, rewards, next] = arrays as [
    Float32Array,
    Uint8Array,
    Int32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array?,
    Float32Array?,
    Int32Array?,
  ];
  for (let j = 0; j < masks.length; j++) if (masks[j]! > 1) fail(`masks hold ${masks[j]} at ${j}`);
  for (let row = 0; row < size; row++) {
    const action = actions[row]!;
    if (!(action >= 0 && action < NUM_ACTIONS && masks[row * NUM_ACTIONS + action] === 1)) fail(`action ${action} of row ${row} is not legal in its mask`);
    if (next && next[row] !== -1 && !(next[row]! > row && next[row]! < size)) fail(`chain of row ${row} points to row ${next[row]}`);
  }
  return { size, observations, masks, actions, logProbs, values, advantages, returns, ...(otherHands ? { otherHands, rewards, next } : {}) };
}

/** A rollout reply's stats, refused unless they are counts and a finite mean (they are summed into the run's metrics). */
export function checkedRolloutStats(stats: unknown, job: string): RolloutStats {
  const s = (stats ?? {}) as Record<string, unknown>;
  for (const name of ['envSteps', 'learnerDecisions', 'episodes', 'learnerEpisodeSeats'] as const) {
    if (!Number.isSafeInteger(s[name]) || (s[name] as number) < 0) throw new Error(`${job} returned stats whose ${name} ${JSON.stringify(s[name])?.slice(0, 40)} is no count`);
  }
  if (typeof s.learnerReturn !== 'number' || !Number.isFinite(s.learnerReturn)) throw new Error(`${job} returned stats whose learnerReturn ${JSON.stringify(s.learnerReturn)?.slice(0, 40)} is not a finite number`);
  return { envSteps: s.envSteps as number, learnerDecisions: s.learnerDecisions as number, episodes: s.episodes as number, learnerReturn: s.learnerReturn, learnerEpisodeSeats: s.learnerEpisodeSeats as number };
}

export class RedisActors implements RolloutActors {
  /** The league's snapshots, oldest first, with their weights blobs (stored again if Redis loses them). */
  private readonly snapshots: { name: string; weights: string; blob: Buffer }[] = [];
  private readonly run = randomUUID();

  private constructor(
    private readonly setup: ActorSetup,
    private readonly blocks: number,
    private readonly blobs: BlobStore,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly interrupt: AbortSignal | undefined,
  ) {}

  /** `interrupt` ends a collect at once, its queued jobs taken back; it then rejects with the signal's reason. */
  static async start(setup: ActorSetup, blocks: number, connection: RedisConnection, interrupt?: AbortSignal): Promise<RedisActors> {
    const blobs = new BlobStore(connection);
    await blobs.connect();
    const queue = quietErrors(new Queue(ROLLOUT_QUEUE, { connection, prefix: KEY_PREFIX }));
    const events = quietErrors(new QueueEvents(ROLLOUT_QUEUE, { connection, prefix: KEY_PREFIX }));
    await events.waitUntilReady();
    return new RedisActors(setup, blocks, blobs, queue, events, interrupt);
  }

  async addSnapshot(name: string, weights: Float32Array[]): Promise<void> {
    const blob = encodeArrays(weights);
    let hash: string;
    try {
      hash = await this.blobs.put(blob);
    } catch (e) {
      throw distributedRunFailure(e);
    }
    this.snapshots.push({ name, weights: hash, blob });
    while (this.snapshots.length > this.setup.league.maxSnapshots) this.snapshots.shift();
  }

  /**
   * One update's rollouts from the workers. Whatever stops it (Redis refusing a command, a job
   * failing for good, a reply that is no batch) is a `redis failed` error naming the cause: the
   * run stops and resumes from its last checkpoint (it printed a stack trace, exit 1).
   */
  async collect(weights: Float32Array[], request: RolloutRequest): Promise<RolloutResult> {
    try {
      return await this.collectOnce(weights, request);
    } catch (e) {
      throw this.interrupt?.aborted ? this.interrupt.reason : distributedRunFailure(e);
    }
  }

  private async collectOnce(weights: Float32Array[], request: RolloutRequest): Promise<RolloutResult> {
    // The league as of this call: a snapshot added while the weights upload must not join it.
    const league = [...this.snapshots];
    const snapshots = league.map(({ name, weights }) => ({ name, weights }));
    // Weights an update left without numbers (its loss, taken before the step, still finite) made
    // batches of NaN, which the checks below then blamed on Redis: say what a local run says.
    const broken = weights.findIndex((w) => w.some((x) => !Number.isFinite(x)));
    if (broken >= 0) throw new ValidationError('training diverged', 'learningRate', `weights array ${broken} no longer holds numbers before the rollout of ${request.seed}; the last checkpoint is intact`);
    const hash = await this.blobs.put(encodeArrays(weights));
    await this.refreshSnapshots(league);
    const jobs = Array.from({ length: this.blocks }, (_, k) => ({
      id: `${this.run}-${request.seed.replace(/[^\w.-]/g, '_')}-${k}`,
      data: { setup: this.setup, weights: hash, snapshots, request: { ...request, seed: blockSeed(request.seed, k) } } satisfies RolloutBlock,
    }));
    const replies = await runJobs<RolloutBlock, RolloutReply>(this.queue, this.events, jobs, { signal: this.interrupt });
    const parts = await Promise.all(
      replies.map(async (reply, k) => {
        if (reply === null || typeof reply !== 'object' || typeof reply.batch !== 'string') throw new Error(`job ${jobs[k]!.id} returned no batch`);
        const job = `job ${jobs[k]!.id}`;
        return { batch: decodeBatch(await this.blobs.take(reply.batch, jobs[k]!.id), reply.size, job, request.recordOtherHands === true), stats: checkedRolloutStats(reply.stats, job) };
      }),
    );
    return mergeRollouts(parts);
  }

  /**
   * Keeps the snapshots' blobs in Redis for another TTL, storing any it lost again: a snapshot is
   * uploaded once, and a run that kept one past the blobs' TTL (7 days), or whose Redis evicted
   * it, failed every rollout job from then on (its blob "not in Redis").
   */
  async refreshSnapshots(league = this.snapshots): Promise<void> {
    await this.blobs.refresh(league.map(({ weights, blob }) => ({ hash: weights, data: blob })));
  }

  async close(): Promise<void> {
    await closeRedisClients([this.events, this.queue, this.blobs]);
  }
}
