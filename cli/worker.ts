// `kratzen worker --redis URL [--concurrency N]`: takes tournament and rollout blocks from Redis until
// stopped (SIGINT/SIGTERM finish the running jobs, then exit).

import { availableParallelism } from 'node:os';
import { ValidationError } from '../env/rules/index.js';
import { parseRedisUrl } from '../training/distributed/redis.js';
import { DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS, startWorkers } from '../training/distributed/worker.js';
import { integerFlag, parseFlags } from './flags.js';

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

export async function runWorker(args: string[]): Promise<void> {
  const { values } = parseFlags({
    args,
    options: { redis: { type: 'string' }, concurrency: { type: 'string' }, 'lock-seconds': { type: 'string' } },
  });
  if (!values.redis) throw new ValidationError('invalid arguments', 'redis', 'kratzen worker needs --redis redis://HOST:PORT');
  const connection = parseRedisUrl(values.redis);
  const concurrency = integerFlag(values.concurrency, 'concurrency') ?? availableParallelism();
  if (concurrency < 1 || concurrency > 256) throw new ValidationError('invalid arguments', 'concurrency', '--concurrency must be 1 to 256');
  const lockSeconds = integerFlag(values['lock-seconds'], 'lock-seconds') ?? DEFAULT_LOCK_SECONDS;
  if (lockSeconds < 1 || lockSeconds > MAX_LOCK_SECONDS) throw new ValidationError('invalid arguments', 'lock-seconds', `--lock-seconds must be 1 to ${MAX_LOCK_SECONDS} (a day)`);
  let workers;
  try {
    workers = await startWorkers({ connection, concurrency, lockSeconds });
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new ValidationError('cannot start the worker', 'redis', (e as Error).message);
  }
  let jobs = 0;
  for (const worker of workers) {
    worker.on('completed', () => jobs++);
    worker.on('failed', (job, error) => process.stderr.write(`${worker.name} job ${job?.id} failed: ${error.message}\n`));
    worker.on('error', (error) => reportOnce(worker.name, `${worker.name} worker error: ${error.message}`));
  }
  process.stderr.write(`kratzen worker ${process.pid}: ${connection.host}:${connection.port}, ${concurrency} threads per queue, ready\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.stderr.write(`stopping after ${jobs} jobs...\n`);
      Promise.all(workers.map((w) => w.close())).then(() => resolve(), () => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
