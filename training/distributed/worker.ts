// `kratzen worker`: a BullMQ worker of the tournament queue whose jobs run in worker threads
// (one per unit of concurrency). A killed worker's job is retried elsewhere once its lock
// expires (`lockSeconds`): the coordinator merges by deal index, so nothing is lost or doubled.

import { Worker } from 'bullmq';
import { CONNECTION_ENV } from './tournament-processor.js';
import { KEY_PREFIX, TOURNAMENT_QUEUE, type RedisConnection } from './redis.js';

export interface WorkerOptions {
  connection: RedisConnection;
  /** Jobs at once, each in its own thread. @default 1 */
  concurrency?: number;
  /** How long a job's lock lasts without renewal: how soon a dead worker's job is retried. @default 30 */
  lockSeconds?: number;
}

export async function startTournamentWorker(options: WorkerOptions): Promise<Worker> {
  process.env[CONNECTION_ENV] = JSON.stringify(options.connection);
  const lockDuration = Math.round((options.lockSeconds ?? 30) * 1000);
  const worker = new Worker(TOURNAMENT_QUEUE, new URL('./tournament-processor.js', import.meta.url), {
    connection: options.connection,
    prefix: KEY_PREFIX,
    concurrency: options.concurrency ?? 1,
    useWorkerThreads: true,
    lockDuration,
    stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
    maxStalledCount: 5,
  });
  await worker.waitUntilReady();
  return worker;
}
