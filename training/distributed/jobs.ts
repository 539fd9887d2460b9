// Waiting for a set of BullMQ jobs: their return values by job id, from the queue's events with a
// poll behind them (events missed across a reconnect), failing on the first job that fails for
// good. Shared by tournament and rollout jobs.

import type { Queue, QueueEvents } from 'bullmq';

export interface JobSpec<T> {
  id: string;
  data: T;
}

export interface WaitOptions {
  attempts?: number;
  /** Called with a job's id and the progress number it reported. */
  onProgress?: (jobId: string, progress: number) => void;
}

/** Adds the jobs and resolves with their return values in the order given. */
export async function runJobs<T, R>(queue: Queue, events: QueueEvents, jobs: JobSpec<T>[], options: WaitOptions = {}): Promise<R[]> {
  const index = new Map(jobs.map((job, k) => [job.id, k]));
  const results: R[] = new Array(jobs.length);
  const pending = new Set(index.keys());
  let settle!: (error?: Error) => void;
  const finished = new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve())));
  const accept = (jobId: string, value: unknown) => {
    if (!pending.delete(jobId)) return;
    results[index.get(jobId)!] = value as R;
    if (pending.size === 0) settle();
  };
  const check = async (jobId: string) => {
    // The state first: a job read before it completes carries no return value.
    const state = await queue.getJobState(jobId);
    if (state !== 'completed' && state !== 'failed') return;
    const job = await queue.getJob(jobId);
    if (!job) return settle(new Error(`job ${jobId} disappeared from Redis`));
    if (state === 'completed') accept(jobId, job.returnvalue);
    else settle(new Error(`job ${jobId} failed after ${job.attemptsMade} attempts: ${job.failedReason}`));
  };
  // The result is read from the job itself, not from the event: one line added to the events
  // stream (XADD ... event completed jobId ... returnvalue ...) stood in for a job's result.
  const onCompleted = ({ jobId }: { jobId: string }) => void (pending.has(jobId) && check(jobId).catch(settle));
  const onFailed = ({ jobId }: { jobId: string }) => void (pending.has(jobId) && check(jobId).catch(settle));
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
  const poll = setInterval(() => [...pending].forEach((id) => check(id).catch(settle)), 2000);
  try {
    await queue.addBulk(
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
    await finished;
    return results;
  } finally {
    clearInterval(poll);
    events.off('completed', onCompleted);
    events.off('failed', onFailed);
    events.off('progress', onProgress);
    events.off('error', onError);
  }
}
