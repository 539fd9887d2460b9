// Keeps the event loop polling for a short while after a reply instead of letting the thread
// sleep: a client that steps in a loop sends its next request within tens of microseconds, and
// a thread asleep in epoll_wait takes longer than that to wake on this kind of machine (a
// virtual CPU that halted must be woken by the hypervisor). While a window is open, a chain of
// setImmediate callbacks makes libuv poll its sockets with a zero timeout, so the next request
// is read as soon as it arrives; other connections' events are handled as usual meanwhile.
//
// It pays only while a core is idle: the polling thread holds one for the whole window, so a
// client that needs that core waits, and beside a busy process unconditional polling made a
// Python client's round trips slower, not faster (docs/bridge.md, Speed, has the figures). So
// polling runs only while the machine has idle cores to spare (`IdleCores`, from the kernel's
// CPU times): it stops when they fall under a quarter of a core and starts again above three
// quarters.

import { cpus } from 'node:os';

/** How often the machine's idle time is sampled. */
const SAMPLE_MS = 200;
/** Polling stops below this many idle cores (its own core busy polling) ... */
const STOP_BELOW_IDLE_CORES = 0.25;
/** ... and starts again above this many (measured while it does not poll). */
const START_ABOVE_IDLE_CORES = 0.75;

/** Idle cores of the whole machine over the last sample period. */
export class IdleCores {
  private lastIdleMs = totalIdleMs();
  private lastAt = performance.now();
  private idle = cpus().length;

  /** Idle cores over the last period of at least SAMPLE_MS (the previous value until one has passed). */
  read(now = performance.now()): number {
    if (now - this.lastAt < SAMPLE_MS) return this.idle;
    const idleMs = totalIdleMs();
    this.idle = (idleMs - this.lastIdleMs) / (now - this.lastAt);
    this.lastIdleMs = idleMs;
    this.lastAt = now;
    return this.idle;
  }
}

function totalIdleMs(): number {
  let total = 0;
  for (const cpu of cpus()) total += cpu.times.idle;
  return total;
}

export class BusyPoll {
  private until = 0;
  private running = false;
  private allowed = true;

  /**
   * `microseconds` 0 turns polling off. `idleCores` says how many cores the machine leaves idle
   * (a source that always answers "plenty" makes polling unconditional, for tests).
   */
  constructor(
    readonly microseconds: number,
    private readonly idleCores: { read(now?: number): number } = new IdleCores(),
  ) {
    if (!Number.isFinite(microseconds) || microseconds < 0) throw new RangeError(`spinMicroseconds must be a finite number >= 0, got ${microseconds}`);
  }

  /** Keeps polling for the next `microseconds` (from now), while the machine has a core to spare. */
  extend(): void {
    if (this.microseconds <= 0) return;
    const now = performance.now();
    const idle = this.idleCores.read(now);
    this.allowed = this.allowed ? idle >= STOP_BELOW_IDLE_CORES : idle > START_ABOVE_IDLE_CORES;
    if (!this.allowed) return;
    this.until = now + this.microseconds / 1000;
    if (this.running) return;
    this.running = true;
    setImmediate(this.tick);
  }

  /** Whether a window is open (the loop is being kept awake). */
  get active(): boolean {
    return this.running;
  }

  /** Ends the window now (at shutdown). */
  stop(): void {
    this.until = 0;
  }

  private readonly tick = (): void => {
    if (performance.now() < this.until) setImmediate(this.tick);
    else this.running = false;
  };
}
