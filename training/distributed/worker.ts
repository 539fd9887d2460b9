// `kratzen worker`: BullMQ workers of the tournament and rollout queues whose jobs run in threads
// (one per unit of concurrency). A killed worker's job is retried elsewhere once its lock
// expires (`lockSeconds`): the coordinator merges by deal index, so nothing is lost or doubled.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import { BLOB_CACHE_ENV, BlobStore, CONNECTION_ENV, KEY_PREFIX, ROLLOUT_QUEUE, TOURNAMENT_QUEUE, type RedisConnection } from './redis.js';
import { ValidationError } from '../../env/rules/index.js';

export interface WorkerOptions {
  connection: RedisConnection;
  /**
   * Jobs of each queue at once, each in its own thread: a machine that serves tournaments and
   * rollouts at the same time runs up to twice this many. @default 1
   */
  concurrency?: number;
  /** How long a job's lock lasts without renewal: how soon a dead worker's job is retried. @default DEFAULT_LOCK_SECONDS */
  lockSeconds?: number;
  /**
   * Called with each worker as it is made, before it takes a job: listeners added later missed
   * the first job's events, and an 'error' no listener heard (a job whose data is no JSON) went
   * to the console as BullMQ's stack trace.
   */
  listen?: (worker: Worker) => void;
}

/**
 * The longest job lock a worker takes: a day. BullMQ renews a lock every half of it with a timer,
 * and past 2^31 ms (24.8 days) Node fires such a timer at once: the worker renewed its lock every
 * millisecond, flooding Redis.
 */
export const MAX_LOCK_SECONDS = 86_400;
/** The job lock a worker takes unless told otherwise. */
export const DEFAULT_LOCK_SECONDS = 30;

/** BullMQ workers of the tournament and the rollout queues, their jobs in worker threads. */
export async function startWorkers(options: WorkerOptions): Promise<Worker[]> {
  const lockSeconds = options.lockSeconds ?? DEFAULT_LOCK_SECONDS;
  if (!(lockSeconds >= 1 && lockSeconds <= MAX_LOCK_SECONDS)) throw new RangeError(`lockSeconds must be 1 to ${MAX_LOCK_SECONDS}, got ${lockSeconds}`);
  // BullMQ would wait for an unreachable server forever, retrying: fail at once, naming it.
  const probe = new BlobStore(options.connection);
  await probe.connect();
  await probe.close();
  process.env[CONNECTION_ENV] = JSON.stringify(options.connection);
  // The checkpoints fetched from Redis are cached in a folder of this process alone (mkdtemp makes
  // it 0700) and removed at exit: the cache trusts what it finds, and a folder with a fixed name in
  // the shared temp folder could be made first by another user, with checkpoints of their choosing.
  let cacheRoot: string;
  try {
    cacheRoot = mkdtempSync(join(tmpdir(), 'kratzen-blobs-'));
  } catch (e) {
    // The temp folder, not Redis: a TMPDIR that does not exist was blamed on --redis.
    throw new ValidationError('cannot start the worker', 'TMPDIR', `cannot make the checkpoint cache in ${tmpdir()}: ${(e as Error).message}`);
  }
  process.once('exit', () => rmSync(cacheRoot, { recursive: true, force: true }));
  process.env[BLOB_CACHE_ENV] = cacheRoot;
  const lockDuration = Math.round(lockSeconds * 1000);
  const make = (queue: string, processor: string) => {
    const worker = new Worker(queue, new URL(processor, import.meta.url), {
      connection: options.connection,
      prefix: KEY_PREFIX,
      concurrency: options.concurrency ?? 1,
      useWorkerThreads: true,
      lockDuration,
      stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
      maxStalledCount: 5,
    });
    options.listen?.(worker);
    return worker;
  };
  const workers = [make(TOURNAMENT_QUEUE, './tournament-processor.js'), make(ROLLOUT_QUEUE, './rollout-processor.js')];
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return workers;
}
