// Learner threads for data-parallel updates: the learner cuts each minibatch into parts, sends
// each helper one part with its current weights, computes the first part's gradients meanwhile and
// averages them all, weighted by rows (training/ppo.ts). The helper keeps no state between minibatches
// (no optimizer, weights arrive with every job), so a resumed run and a run with a reloaded policy
// need nothing from it, and the result depends only on the rows and weights it is sent.
//
// The calls are synchronous, as the learner's minibatch loop is: the job goes out as a message,
// and a counter in shared memory wakes the helper and, with the gradients posted back, the learner
// (Atomics.wait), which then takes the reply with receiveMessageOnPort.

import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { builtModule } from '../env/built-module.js';
import type { PolicyAgent, PolicyArchitecture } from '../agents/policy-agent.js';
import type { SuitSymmetry } from '../env/suit-symmetry.js';
import { tf, type BackendChoice } from '../agents/tfjs.js';
import type { GatheredRows, LossKind, PpoHyperparameters } from './ppo.js';
import type { OracleCritic } from './critic.js';

/** What the helper needs to build replicas of the learner's networks. */
export interface GradientHelperSetup {
  /** The backend the learner runs on: the same kernels give the same gradients. */
  backend: BackendChoice;
  architecture: PolicyArchitecture;
  suitSymmetry: SuitSymmetry;
  hp: PpoHyperparameters;
  /** The oracle critic's shape, or null without one (training/critic.ts). */
  critic: { hiddenSizes: number[]; onTrunk: boolean; inputSize: number } | null;
}

/** The setup of helpers for a learner (`agent`, `critic`) on the active backend. */
export function helperSetup(agent: PolicyAgent, hp: PpoHyperparameters, critic: OracleCritic | null): GradientHelperSetup {
  return {
    backend: tf.getBackend() as BackendChoice,
    architecture: agent.architecture,
    suitSymmetry: agent.suitSymmetry,
    hp,
    critic: critic && { hiddenSizes: [...critic.hiddenSizes], onTrunk: critic.onTrunk, inputSize: critic.inputSize },
  };
}

/** One part of a minibatch: its rows, the loss to differentiate, and every trainable variable's value. */
export interface GradientJob {
  kind: LossKind;
  rows: GatheredRows;
  /** In the learner's variable order (PpoLearner.variables). */
  weights: Float32Array[];
}

/** The mean loss's gradients over the job's rows, in the variables' order, and the reported scalars. */
export interface GradientPart {
  grads: Float32Array[];
  report: number[];
}

export type GradientReply = GradientPart | { error: string };

/** Signal words in shared memory: jobs sent to the helper, and replies it posted. */
export const JOBS = 0;
export const REPLIES = 1;

/** A helper that takes this long over its part of a minibatch has died (a thread cannot be watched while the learner waits). */
const REPLY_TIMEOUT_MS = 600_000;

export class GradientHelper {
  private jobs = 0;
  private inFlight = false;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly signal: Int32Array,
  ) {}

  /** Starts the thread and waits until its replicas are built. */
  static async start(setup: GradientHelperSetup): Promise<GradientHelper> {
    const signal = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(helperScript(), { workerData: { setup, signal, port: port2 }, transferList: [port2] });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: { ready?: true; error?: string }) => (message.ready ? resolve() : reject(new Error(`gradient helper: ${message.error}`))));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`gradient helper thread exited with ${code} while starting`)));
    });
    worker.removeAllListeners();
    // A thread that fails later is noticed by the learner's next wait (it reports, or times out).
    worker.on('error', () => undefined);
    return new GradientHelper(worker, port1, signal);
  }

  /** `count` helpers, all started or none (the started ones are closed if one fails). */
  static async startMany(count: number, setup: GradientHelperSetup): Promise<GradientHelper[]> {
    const started = await Promise.allSettled(Array.from({ length: count }, () => GradientHelper.start(setup)));
    const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    const helpers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    if (failure) {
      await Promise.all(helpers.map((h) => h.close()));
      throw failure.reason;
    }
    return helpers;
  }

  /** Sends a job; `finish` waits for its gradients. One job at a time. */
  begin(job: GradientJob): void {
    if (this.inFlight) throw new Error('gradient helper: a job is already in flight');
    // The rows' arrays are gathered for this job alone: moved, not copied.
    this.port.postMessage(job, Object.values(job.rows).flatMap((a) => (a ? [a.buffer as ArrayBuffer] : [])));
    this.inFlight = true;
    this.wakeHelper();
  }

  /** Blocks until the helper has posted the gradients of the job in flight. */
  finish(): GradientPart {
    if (!this.inFlight) throw new Error('gradient helper: no job in flight');
    this.inFlight = false;
    this.jobs++;
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (received) {
        const reply = received.message as GradientReply;
        if ('error' in reply) throw new Error(`gradient helper: ${reply.error}`);
        return reply;
      }
      // Every reply raises REPLIES by one, so this waits only while this job's has not come.
      if (Atomics.wait(this.signal, REPLIES, this.jobs - 1, REPLY_TIMEOUT_MS) === 'timed-out') {
        throw new Error(`gradient helper: no reply within ${REPLY_TIMEOUT_MS / 1000} s`);
      }
    }
  }

  /** Stops the thread (a job still in flight is dropped). */
  async close(): Promise<void> {
    this.port.postMessage({ stop: true });
    this.wakeHelper();
    this.port.close();
    await this.worker.terminate();
  }

  /** Tells the thread a message is waiting: it blocks on JOBS between messages. */
  private wakeHelper(): void {
    Atomics.add(this.signal, JOBS, 1);
    Atomics.notify(this.signal, JOBS);
  }
}

function helperScript(): URL {
  return builtModule(new URL('./gradient-worker.js', import.meta.url), new URL('../dist/training/gradient-worker.js', import.meta.url));
}
