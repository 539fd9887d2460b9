// VecEnv over worker_threads: the envs are split into contiguous blocks, one per worker, each a
// VecEnv writing straight into SharedArrayBuffer-backed buffers. `step` is synchronous (Atomics),
// has the same API as VecEnv, and yields the same trajectories for the same seeds.

import { Worker } from 'node:worker_threads';
import { illegalActionEndsEpisode, parseEnvConfig, type EnvConfig, type EnvConfigInput } from './table.js';
import { VecEnvBuffers, allocateVecMemory, checkStepActions, vecMetadata, viewVecBuffers, type VecBuffers } from './vec-env.js';
import type { EnvMetadata } from './env.js';
import { builtModule } from './built-module.js';
import { ValidationError, checkOptionKeys, checkSeed } from './rules/index.js';

/**
 * Control words (Int32): command sequence, command, error flag, and the number of workers that
 * finished the current command (the last one to finish wakes the caller: one wake per step).
 */
export const CTRL_SEQUENCE = 0;
export const CTRL_COMMAND = 1;
export const CTRL_ERROR = 2;
export const CTRL_DONE = 3;
export const CTRL_WORDS = 4;
export const CMD_RESET = 1;
export const CMD_STEP = 2;
export const CMD_CLOSE = 3;
/** Bytes for a reset seed or an error message passed through shared memory. */
export const TEXT_BYTES = 1024;

export interface WorkerVecEnvOptions {
  numEnvs: number;
  /** Worker threads; default 2 (one per core here). */
  numWorkers?: number;
  config?: EnvConfigInput;
  /**
   * How long a worker polls for the next command before it sleeps, in microseconds (default
   * 200). The caller usually sends the next step within ~100 us (choosing actions); a polling
   * worker starts at once, a sleeping one must be woken by the kernel first. 0 never polls.
   */
  spinMicroseconds?: number;
}

/** Every option WorkerVecEnv takes (complete by type, as VecEnv's). */
const WORKER_VEC_ENV_OPTIONS = Object.keys({ numEnvs: true, numWorkers: true, config: true, spinMicroseconds: true } satisfies Record<keyof WorkerVecEnvOptions, true>);

export interface WorkerInit {
  config: EnvConfig;
  start: number;
  count: number;
  numEnvs: number;
  workerIndex: number;
  numWorkers: number;
  spinMicroseconds: number;
  shared: Record<keyof VecBuffers | 'actions' | 'control' | 'text', SharedArrayBuffer>;
}

function workerScript(): URL {
  return builtModule(new URL('./vec-worker.js', import.meta.url), new URL('../dist/env/vec-worker.js', import.meta.url));
}

/** Most worker threads a WorkerVecEnv starts. */
export const MAX_WORKERS = 64;

export class WorkerVecEnv extends VecEnvBuffers {
  readonly numEnvs: number;
  readonly numWorkers: number;
  readonly numPlayers: number;
  readonly config: EnvConfig;
  readonly metadata: EnvMetadata;
  readonly buffers: VecBuffers;
  private readonly actions: Int32Array;
  private readonly control: Int32Array;
  private readonly text: Uint8Array;
  private readonly workers: Worker[] = [];
  private sequence = 0;
  private closed = false;
  private broken: string | null = null;
  /** Whether a reset went through (every env then has an episode). */
  private started = false;

  constructor(options: WorkerVecEnvOptions) {
    super();
    // Single-agent options included: a WorkerVecEnv steps multi-agent tables only.
    checkOptionKeys(options, WORKER_VEC_ENV_OPTIONS, 'WorkerVecEnv');
    const { config, game } = parseEnvConfig(options.config);
    this.config = config;
    // Checked before any worker starts: numEnvs 0 threw inside a worker, taking the process down.
    if (!Number.isSafeInteger(options.numEnvs) || options.numEnvs < 1) throw new RangeError(`numEnvs must be a positive integer, got ${String(options.numEnvs).slice(0, 40)}`);
    const numWorkers = options.numWorkers ?? 2;
    // Capped: numWorkers 1000 started 1000 threads, each compiling the env on its own.
    if (!Number.isSafeInteger(numWorkers) || numWorkers < 1 || numWorkers > MAX_WORKERS) throw new RangeError(`numWorkers must be an integer from 1 to ${MAX_WORKERS}, got ${String(numWorkers).slice(0, 40)}`);
    this.numEnvs = options.numEnvs;
    this.numPlayers = game.numPlayers;
    // More workers than envs would leave some without any.
    this.numWorkers = Math.min(numWorkers, this.numEnvs);
    const memory = allocateVecMemory(this.numEnvs, (bytes) => new SharedArrayBuffer(bytes));
    this.buffers = viewVecBuffers(memory);
    const shared: Partial<WorkerInit['shared']> = { ...(memory as Record<keyof VecBuffers, SharedArrayBuffer>) };
    shared.actions = new SharedArrayBuffer(this.numEnvs * 4);
    shared.control = new SharedArrayBuffer(CTRL_WORDS * 4);
    shared.text = new SharedArrayBuffer(TEXT_BYTES + 4);
    this.actions = new Int32Array(shared.actions);
    this.control = new Int32Array(shared.control);
    this.text = new Uint8Array(shared.text);
    this.metadata = vecMetadata(config);

    const script = workerScript();
    const spinMicroseconds = options.spinMicroseconds ?? 200;
    // A number of at most a second: "200" and true were taken, and Infinity kept idle workers spinning for good.
    if (typeof spinMicroseconds !== 'number' || !(spinMicroseconds >= 0 && spinMicroseconds <= 1e6)) throw new RangeError(`spinMicroseconds must be a number from 0 to 1e6, got ${String(spinMicroseconds).slice(0, 40)}`);
    const base = Math.floor(this.numEnvs / this.numWorkers);
    let start = 0;
    for (let w = 0; w < this.numWorkers; w++) {
      const count = base + (w < this.numEnvs % this.numWorkers ? 1 : 0);
      const init: WorkerInit = {
        config,
        start,
        count,
        numEnvs: this.numEnvs,
        workerIndex: w,
        numWorkers: this.numWorkers,
        spinMicroseconds,
        shared: shared as WorkerInit['shared'],
      };
      const worker = new Worker(script, { workerData: init });
      worker.unref();
      // A worker that dies (out of memory) must not take the process down: this env breaks.
      worker.on('error', (e) => (this.broken ??= `worker ${w} failed: ${e.message}; this WorkerVecEnv can only be closed`));
      this.workers.push(worker);
      start += count;
    }
  }

  /**
   * VecEnv.reset: with a seed, env i starts `<seed>:<i>`; without, every env goes on to its next
   * episode. A string seed goes to the workers through shared memory: at most TEXT_BYTES of UTF-8.
   */
  reset(seed?: number | string): this {
    if (seed !== undefined) checkSeed(seed);
    const bytes = new TextEncoder().encode(seed === undefined ? '' : String(seed));
    // A bare RangeError that named no field, where VecEnv takes the seed.
    if (bytes.length > TEXT_BYTES) throw new ValidationError('invalid seed', 'seed', `a WorkerVecEnv takes seeds of at most ${TEXT_BYTES} bytes of UTF-8, got ${bytes.length}`);
    // A length of -1 says "no seed".
    new DataView(this.text.buffer).setInt32(TEXT_BYTES, seed === undefined ? -1 : bytes.length, true);
    this.text.set(bytes);
    this.command(CMD_RESET);
    this.started = true;
    return this;
  }

  /** Steps every env with `actions[i]`; refused actions (checkStepActions) throw before any env moves. */
  step(actions: ArrayLike<number>): this {
    // Before the actions: checked against the masks of no episode, they were refused as illegal.
    this.checkUsable();
    if (!this.started) throw new Error('WorkerVecEnv has not been reset: call reset() first');
    checkStepActions(actions, 0, this.numEnvs, this.numEnvs, this.buffers, illegalActionEndsEpisode(this.config));
    // Copied one by one: set() converted 1.5 to 1 and '39' to 39, and kept old entries past a short array.
    const shared = this.actions;
    for (let i = 0; i < this.numEnvs; i++) shared[i] = Number.isInteger(actions[i]) && Math.abs(actions[i]!) < 2 ** 31 ? actions[i]! : -1;
    this.command(CMD_STEP);
    return this;
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.control, CTRL_COMMAND, CMD_CLOSE);
    Atomics.add(this.control, CTRL_SEQUENCE, 1);
    Atomics.notify(this.control, CTRL_SEQUENCE);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private checkUsable(): void {
    if (this.closed) throw new Error('WorkerVecEnv is closed');
    if (this.broken) throw new Error(this.broken);
  }

  private command(command: number): void {
    this.checkUsable();
    const control = this.control;
    const workers = this.numWorkers;
    Atomics.store(control, CTRL_ERROR, 0);
    Atomics.store(control, CTRL_DONE, 0);
    Atomics.store(control, CTRL_COMMAND, command);
    Atomics.store(control, CTRL_SEQUENCE, ++this.sequence);
    Atomics.notify(control, CTRL_SEQUENCE);
    let deadline = 0;
    for (let done = Atomics.load(control, CTRL_DONE); done < workers; done = Atomics.load(control, CTRL_DONE)) {
      // Short waits, re-checking the count: measured here, about one step in 10,000 the main
      // thread's Atomics.wait slept through the worker's notify until its timeout (30 s then),
      // which turned a 0.5 ms step into a 30 s one. A missed wake-up now costs at most 1 ms.
      Atomics.wait(control, CTRL_DONE, done, 1);
      // 30 s without an answer means a worker died (its error would have been reported).
      const now = performance.now();
      if (deadline === 0) deadline = now + 30_000;
      else if (now > deadline) {
        // A late answer would be counted toward the next command: this env cannot be used again.
        this.broken = 'a worker did not answer within 30 s; this WorkerVecEnv can only be closed';
        throw new Error(this.broken);
      }
    }
    if (Atomics.load(control, CTRL_ERROR) !== 0) {
      const length = new DataView(this.text.buffer).getInt32(TEXT_BYTES, true);
      throw new Error(new TextDecoder().decode(this.text.slice(0, length)));
    }
  }
}
