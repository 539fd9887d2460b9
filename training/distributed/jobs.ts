// Waiting for a set of BullMQ jobs: their return values by job id, from the queue's events with a
// poll behind them (events missed across a reconnect), failing on the first job that fails for
// good, on a job Redis no longer holds, or when Redis stops answering. Shared by tournament and
// rollout jobs.

import type { Queue, QueueEvents } from 'bullmq';
import { ValidationError } from '../../env/rules/index.js';
import { REDIS_SILENCE_LIMIT_MS } from './redis.js';

/** How often the waiting coordinator reads its jobs' states itself. */
const POLL_MS = 2000;

export interface JobSpec<T> {
  id: string;
  data: T;
}

export interface WaitOptions {
  attempts?: number;
  /** Called with a job's id and the progress number it reported. */
  onProgress?: (jobId: string, progress: number) => void;
  /** @default REDIS_SILENCE_LIMIT_MS */
  silenceLimitMs?: number;
  /** Stops waiting (the run is interrupted): runJobs rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Stalls of one job past which the run gives it up: workers fail a job after 5 (worker.ts). */
const MAX_STALLS = 10;

/**
 * How long taking a stopped run's jobs back may go without Redis answering a chunk of removals
 * (Redis may be why the run stopped), and how many go in a chunk. A bound of 5 s on the whole
 * took back none of 31,250 jobs: the removals queue behind the jobs still going in (one
 * connection, answered in order), which took longer.
 */
const WITHDRAW_SILENCE_MS = 5000;
const WITHDRAW_CHUNK = 1000;

/** `promise`'s value, or null when it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Takes the jobs of a run that stopped (failed or interrupted) off the queue, so that workers do
 * not play them for nobody, ahead of later runs' jobs. A job a worker holds is not removed: it
 * finishes and expires on its own. The jobs still going in are waited for (removed before, they
 * would come in after), as long as Redis may stay silent; then they go a chunk at a time while
 * Redis answers.
 */
async function withdrawJobs(queue: Queue, ids: string[], addition: Promise<unknown>, silenceLimitMs: number): Promise<void> {
  if ((await within(addition.then(() => true, () => true), silenceLimitMs)) === null) return;
  for (let start = 0; start < ids.length; start += WITHDRAW_CHUNK) {
    const chunk = ids.slice(start, start + WITHDRAW_CHUNK);
    if ((await within(Promise.allSettled(chunk.map((id) => queue.remove(id))), WITHDRAW_SILENCE_MS)) === null) return;
  }
}

/** The run cannot go on: Redis lost its jobs or stopped answering (field `redis`, exit 2). */
function redisLost(reason: string): ValidationError {
  return new ValidationError('redis failed', 'redis', `${reason}; the run stops (a training run resumes from its last checkpoint with --resume)`);
}

/**
 * `e` as the error of a distributed run that cannot go on (redisLost), unless it is one already:
 * a Redis that refused a command, a job that failed for good, a reply that is no batch or deal
 * list. They came out as stack traces with exit 1, where the run's other failures say what
 * stopped it (exit 2).
 */
export function distributedRunFailure(e: unknown): ValidationError {
  if (e instanceof ValidationError) return e;
  const message = e instanceof Error ? e.message : String(e);
  // ioredis's words for a command left unanswered past its timeout (a training run's blob
  // uploads): an evaluation said "Redis has not answered" of the same silence.
  return redisLost(message === 'Command timed out' ? 'Redis has not answered a command in time (it timed out)' : message);
}

/** Adds the jobs and resolves with their return values in the order given. */
export async function runJobs<T, R>(queue: Queue, events: QueueEvents, jobs: JobSpec<T>[], options: WaitOptions = {}): Promise<R[]> {
  const index = new Map(jobs.map((job, k) => [job.id, k]));
  const results: R[] = new Array(jobs.length);
  const pending = new Set(index.keys());
  let settle!: (error?: Error) => void;
  const finished = new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve())));
  // It may be settled (an interrupt) while the jobs are still being added, before it is awaited:
  // unhandled until then, that rejection ended the process.
  finished.catch(() => undefined);
  const accept = (jobId: string, value: unknown) => {
    if (!pending.delete(jobId)) return;
    results[index.get(jobId)!] = value as R;
    if (pending.size === 0) settle();
  };
  const check = async (jobId: string) => {
    // The state first: a job read before it completes carries no return value.
    const state = await queue.getJobState(jobId);
    // A Redis restarted without its data (or flushed) no longer holds the jobs: no worker will
    // ever take them, and the coordinator waited without end.
    if (state === 'unknown') return settle(redisLost(`job ${jobId} is no longer in Redis (restarted without its data, or flushed?)`));
    if (state === 'active') return checkActive(jobId);
    if (state !== 'completed' && state !== 'failed') return;
    const job = await queue.getJob(jobId);
    if (!job) return settle(redisLost(`job ${jobId} is no longer in Redis`));
    if (state === 'completed') accept(jobId, job.returnvalue);
    else {
      // Not taken back with the others: its record keeps the failure (removeOnFail's day).
      pending.delete(jobId);
      settle(redisLost(`job ${jobId} failed after ${job.attemptsMade} attempts: ${job.failedReason}`));
    }
  };
  // A job no worker can read (its data in Redis is no JSON) went from active to stalled and back
  // without end, BullMQ's stall limit never reached, and the run waited for it for good.
  const checkActive = async (jobId: string) => {
    let job;
    try {
      job = await queue.getJob(jobId);
    } catch (e) {
      return settle(redisLost(`job ${jobId} cannot be read from Redis (${(e as Error).message.slice(0, 80)})`));
    }
    if (job && job.stalledCounter > MAX_STALLS) settle(redisLost(`job ${jobId} stalled ${job.stalledCounter} times: no worker finishes it`));
  };
  // The result is read from the job itself, not from the event: one line added to the events
  // stream (XADD ... event completed jobId ... returnvalue ...) stood in for a job's result.
  const failed = (e: unknown) => settle(distributedRunFailure(e));
  const onCompleted = ({ jobId }: { jobId: string }) => void (pending.has(jobId) && check(jobId).catch(failed));
  const onFailed = ({ jobId }: { jobId: string }) => void (pending.has(jobId) && check(jobId).catch(failed));
  const onProgress = ({ jobId, data }: { jobId: string; data: unknown }) => {
    if (index.has(jobId) && typeof data === 'number') options.onProgress?.(jobId, data);
  };
  // An event BullMQ cannot parse (garbage in its stream) printed a stack trace; the poll below
  // reads every job's state anyway.
  const onError = () => undefined;
  events.on('error', onError);
  events.on('completed', onCompleted);
  events.on('failed', onFailed);
  events.on('progress', onProgress);
  const silenceLimitMs = options.silenceLimitMs ?? REDIS_SILENCE_LIMIT_MS;
  let lastAnswer = Date.now();
  let polling = false;
  // One poll at a time: while Redis is down each one waits, and they piled up.
  const pollOnce = () => {
    if (Date.now() - lastAnswer > silenceLimitMs) return settle(redisLost(`Redis has not answered for ${Math.round(silenceLimitMs / 1000)} s`));
    if (polling) return;
    polling = true;
    Promise.all([...pending].map(check)).then(
      () => ((lastAnswer = Date.now()), (polling = false)),
      (e: unknown) => settle(distributedRunFailure(e)),
    );
  };
  let poll: ReturnType<typeof setInterval> | undefined;
  // The catch below rethrows the signal's own reason.
  const onAbort = () => settle(new Error('interrupted'));
  // The jobs reach the queue one by one while addBulk runs: an interrupt or a failure then must
  // take back those already there.
  let addition: Promise<unknown> | null = null;
  let addingTimer: ReturnType<typeof setTimeout> | undefined;
  try {
    options.signal?.throwIfAborted();
    options.signal?.addEventListener('abort', onAbort);
    addition = queue.addBulk(
      jobs.map((job) => ({
        name: 'block',
        data: job.data,
        opts: {
          jobId: job.id,
          attempts: options.attempts ?? 5,
          backoff: { type: 'fixed', delay: 500 },
          removeOnComplete: { age: 3600 },
          removeOnFail: { age: 24 * 3600 },
        },
      })),
    );
    addition.catch(() => undefined);
    // A Redis that stops answering while the jobs go in (a paused one) held the run without end:
    // the silence limit counts from the first job sent.
    addingTimer = setTimeout(() => settle(redisLost(`Redis has not answered for ${Math.round(silenceLimitMs / 1000)} s (adding the jobs)`)), silenceLimitMs);
    await Promise.race([finished, addition]);
    clearTimeout(addingTimer);
    // Only once the jobs are in: before, a job not added yet read as lost.
    lastAnswer = Date.now();
    poll = setInterval(pollOnce, Math.min(POLL_MS, silenceLimitMs));
    await finished;
    return results;
  } catch (e) {
    throw options.signal?.aborted ? options.signal.reason : distributedRunFailure(e);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    clearTimeout(addingTimer);
    if (poll) clearInterval(poll);
    if (addition && pending.size > 0) await withdrawJobs(queue, [...pending], addition, silenceLimitMs);
    events.off('completed', onCompleted);
    events.off('failed', onFailed);
    events.off('progress', onProgress);
    events.off('error', onError);
  }
}
