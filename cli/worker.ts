// `kratzen worker --redis URL [--concurrency N]`: takes tournament and rollout blocks from Redis until
// stopped (SIGINT/SIGTERM/SIGHUP finish the running jobs, then exit; a second signal, or a Redis
// silent for STOP_GRACE_MS meanwhile, exits at once).

import { availableParallelism } from 'node:os';
import type { Worker } from 'bullmq';
import { ValidationError } from '../env/rules/index.js';
import { answersWithin, type RedisConnection } from '../training/distributed/redis.js';
import { DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS, startWorkers } from '../training/distributed/worker.js';
import { integerFlag, parseFlags, redisFlag } from './flags.js';
import { STOP_SIGNALS, signalExitCode } from './signals.js';

/**
 * Prints a source's message unless it is the one that source printed last within a minute: a lost
 * server is retried many times a second (kept per source: the two queues' workers alternated).
 */
const lastReports = new Map<string, { text: string; at: number }>();
function reportOnce(source: string, text: string): void {
  const now = Date.now();
  const last = lastReports.get(source);
  if (last && text === last.text && now - last.at < 60_000) return;
  lastReports.set(source, { text, at: now });
  process.stderr.write(`${text}\n`);
}

/**
 * How long a stopping worker waits for its running jobs once Redis stops answering: its close
 * waited for Redis without end (a worker told to stop while Redis was down never exited).
 */
const STOP_GRACE_MS = 10_000;

export async function runWorker(args: string[]): Promise<void> {
  const { values } = parseFlags({
    args,
    options: { redis: { type: 'string' }, concurrency: { type: 'string' }, 'lock-seconds': { type: 'string' } },
  });
  if (!values.redis) throw new ValidationError('invalid arguments', 'redis', 'kratzen worker needs --redis redis://HOST:PORT');
  const connection = redisFlag(values.redis);
  const concurrency = integerFlag(values.concurrency, 'concurrency') ?? availableParallelism();
  if (concurrency < 1 || concurrency > 256) throw new ValidationError('invalid arguments', 'concurrency', '--concurrency must be 1 to 256');
  const lockSeconds = integerFlag(values['lock-seconds'], 'lock-seconds') ?? DEFAULT_LOCK_SECONDS;
  if (lockSeconds < 1 || lockSeconds > MAX_LOCK_SECONDS) throw new ValidationError('invalid arguments', 'lock-seconds', `--lock-seconds must be 1 to ${MAX_LOCK_SECONDS} (a day)`);
  let workers;
  let jobs = 0;
  const listen = (worker: Worker) => {
    worker.on('completed', () => jobs++);
    worker.on('failed', (job, error) => process.stderr.write(`${worker.name} job ${job?.id} failed: ${error.message}\n`));
    worker.on('error', (error) => reportOnce(worker.name, `${worker.name} worker error: ${error.message}`));
  };
  try {
    workers = await startWorkers({ connection, concurrency, lockSeconds, listen });
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new ValidationError('cannot start the worker', 'redis', (e as Error).message);
  }
  process.stderr.write(`kratzen worker ${process.pid}: ${connection.host}:${connection.port}, ${concurrency} threads per queue, ready\n`);
  let stopping = false;
  let closed = false;
  let stop: (signal: NodeJS.Signals) => void = () => undefined;
  await new Promise<void>((resolve) => {
    const finish = () => {
      closed = true;
      resolve();
    };
    // process.exit, not the signal's default: the checkpoint cache is removed on 'exit' (it stayed).
    stop = (signal) => {
      if (stopping) process.exit(signalExitCode(signal));
      stopping = true;
      process.stderr.write(`stopping: ${jobs} job${jobs === 1 ? '' : 's'} done; the running ones finish (a signal again quits at once)...\n`);
      Promise.all(workers.map((w) => w.close())).then(finish, finish);
      void exitOnceRedisIsSilent(connection, () => closed);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
  });
  for (const signal of STOP_SIGNALS) process.off(signal, stop);
}

/**
 * Exits the stopping worker once Redis has not answered for STOP_GRACE_MS in a row before its
 * running jobs are done (`closed`): their locks and results need Redis, so closing waited for it
 * without end. Asked once a second.
 */
async function exitOnceRedisIsSilent(connection: RedisConnection, closed: () => boolean): Promise<void> {
  let lastAnswer = Date.now();
  while (!closed()) {
    const asked = Date.now();
    if (await answersWithin(connection, 1000)) lastAnswer = Date.now();
    if (closed()) return;
    if (Date.now() - lastAnswer >= STOP_GRACE_MS) {
      process.stderr.write(`Redis has not answered for ${STOP_GRACE_MS / 1000} s: exiting now; jobs still running are retried by other workers once their locks expire\n`);
      // Its clients would retry Redis without end, keeping the process alive.
      process.exit(0);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - asked))));
  }
}
