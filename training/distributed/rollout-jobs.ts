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

export function decodeBatch(data: Buffer, size: number): Batch {
  const arrays = decodeArrays(data);
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
  if ((arrays.length !== 7 && arrays.length !== 10) || actions.length !== size) throw new Error(`batch blob holds ${arrays.length} arrays of ${actions?.length} rows, not 7 or 10 of ${size}`);
  return { size, observations, masks, actions, logProbs, values, advantages, returns, ...(otherHands ? { otherHands, rewards, next } : {}) };
}

export class RedisActors implements RolloutActors {
  private readonly snapshots: { name: string; weights: string }[] = [];
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
    let hash: string;
    try {
      hash = await this.blobs.put(encodeArrays(weights));
    } catch (e) {
      throw distributedRunFailure(e);
    }
    this.snapshots.push({ name, weights: hash });
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
    const snapshots = [...this.snapshots];
    const hash = await this.blobs.put(encodeArrays(weights));
    const jobs = Array.from({ length: this.blocks }, (_, k) => ({
      id: `${this.run}-${request.seed.replace(/[^\w.-]/g, '_')}-${k}`,
      data: { setup: this.setup, weights: hash, snapshots, request: { ...request, seed: blockSeed(request.seed, k) } } satisfies RolloutBlock,
    }));
    const replies = await runJobs<RolloutBlock, RolloutReply>(this.queue, this.events, jobs, { signal: this.interrupt });
    const parts = await Promise.all(
      replies.map(async (reply, k) => {
        if (reply === null || typeof reply !== 'object' || typeof reply.batch !== 'string') throw new Error(`job ${jobs[k]!.id} returned no batch`);
        return { batch: decodeBatch(await this.blobs.get(reply.batch), reply.size), stats: reply.stats };
      }),
    );
    return mergeRollouts(parts);
  }

  async close(): Promise<void> {
    await closeRedisClients([this.events, this.queue, this.blobs]);
  }
}
