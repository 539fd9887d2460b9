// The main thread's turn-taking between connections. Every request a connection queues is handled
// here, one at a time, the connection that has used the least main-thread time lately first: a
// client whose requests are expensive (a 512-row policy.act the schema refuses costs ~19 ms, a
// 1 MiB frame's JSON ~5 ms, a 256-env JSON step ~8 ms) gets as much of the thread as one that
// pings, not as much per request. "Lately": a connection's use fades by half every
// USE_HALF_LIFE_MS, so one that was busy long ago is not held back and one that was idle banks no
// credit beyond none at all. Work runs in slices: past SLICE_MS the rest waits for a setImmediate,
// so the sockets are read in between (a ping that arrives meanwhile then goes first).

/** Milliseconds of a thread some client's work has used, faded to `usageAt` (addUsage keeps both). */
export interface RecentUse {
  usage: number;
  usageAt: number;
}

/** What the scheduler serves: a connection with requests queued; its use is of the main thread. */
export interface Servable extends RecentUse {
  /** Handles one queued request; true if another can be handled right away. */
  serveOne(): boolean;
}

/** How long requests run back to back before the sockets are read again. */
export const SLICE_MS = 10;
/**
 * How fast past use fades. Joining at a shared clock instead (start-time fair queueing) tied a
 * ping with every busy connection that had just drained its queue: 16 connections stepping
 * 256-env JSON sessions held pings up 0.1-0.17 s.
 */
export const USE_HALF_LIFE_MS = 100;

/** `c`'s use faded to `now`. */
export function usageAt(c: RecentUse, now: number): number {
  return c.usage * Math.pow(0.5, (now - c.usageAt) / USE_HALF_LIFE_MS);
}

/** Adds `ms` of main-thread time, ending `now`, to `c`'s use. */
export function addUsage(c: RecentUse, ms: number, now = performance.now()): void {
  c.usage = usageAt(c, now) + ms;
  c.usageAt = now;
}

/** Of `items`, the first whose use (`useOf`) faded to `now` is least; undefined when there are none. */
export function leastUsed<T>(items: Iterable<T>, useOf: (item: T) => RecentUse, now: number): T | undefined {
  let best: T | undefined;
  let bestUsage = Infinity;
  for (const item of items) {
    const usage = usageAt(useOf(item), now);
    if (usage < bestUsage) [best, bestUsage] = [item, usage];
  }
  return best;
}

const itself = <T>(item: T): T => item;

/**
 * A thread's turn of work: it starts when work begins in a turn of the event loop and stays open
 * until the loop has gone round once (the check phase after it), so runs within one poll phase
 * share it. Frames of one socket read arrive one by one, and with large frames the gaps between
 * them looked idle, so a gap in time did not mark a new turn.
 */
export class SliceClock {
  start = 0;
  isOpen = false;
  private readonly close = () => {
    this.isOpen = false;
  };

  /** Starts a slice now (a new turn's, or a resumed piece's own). */
  open(): void {
    this.start = performance.now();
    if (this.isOpen) return;
    this.isOpen = true;
    setImmediate(this.close);
  }

  /** The slice has run past `ms`. */
  usedUp(ms: number, now = performance.now()): boolean {
    return now - this.start > ms;
  }
}

export class FairScheduler {
  private readonly ready = new Set<Servable>();
  private running = false;
  private deferred = false;
  private readonly slice = new SliceClock();

  /** `c` has a request to handle: serves it now if the thread's slice allows, else in turn. */
  wake(c: Servable): void {
    this.ready.add(c);
    if (this.running || this.deferred) return;
    if (!this.slice.isOpen) this.slice.open();
    else if (this.slice.usedUp(SLICE_MS)) return this.defer();
    this.run();
  }

  /** `c` is gone (or has nothing to do). */
  forget(c: Servable): void {
    this.ready.delete(c);
  }

  private run(): void {
    this.running = true;
    try {
      while (this.ready.size > 0) {
        const started = performance.now();
        if (this.slice.usedUp(SLICE_MS, started)) return this.defer();
        const c = this.leastUsed(started);
        let more = false;
        try {
          more = c.serveOne();
        } finally {
          const ended = performance.now();
          addUsage(c, ended - started, ended);
          if (!more) this.ready.delete(c);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private defer(): void {
    this.deferred = true;
    setImmediate(() => {
      this.deferred = false;
      this.slice.open();
      this.run();
    });
  }

  private leastUsed(now: number): Servable {
    return leastUsed(this.ready, itself, now)!;
  }
}
