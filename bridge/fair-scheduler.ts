// The main thread's turn-taking between connections. Every request a connection queues is handled
// here, one at a time, the connection that has used the least main-thread time first: a client
// whose requests are expensive (a 512-row policy.act the schema refuses costs ~19 ms, a 1 MiB
// frame's JSON ~5 ms) gets as much of the thread as one that pings, not as much per request.
// Work runs in slices: past SLICE_MS the rest waits for a setImmediate, so the sockets are read
// in between (a ping that arrives meanwhile then goes first). Each connection used to take its own
// 10 ms slices, so N busy connections held a ping up for N slices and more.

/** What the scheduler serves: a connection with requests queued. */
export interface Servable {
  /** Main-thread milliseconds its requests have used, on the scheduler's clock. */
  usedMs: number;
  /** Handles one queued request; true if another can be handled right away. */
  serveOne(): boolean;
}

/** How long requests run back to back before the sockets are read again. */
export const SLICE_MS = 10;

export class FairScheduler {
  private readonly ready = new Set<Servable>();
  /** The used time of the connection served last: a connection that waited joins at it, banking nothing. */
  private clock = 0;
  private running = false;
  private deferred = false;
  private sliceStart = 0;
  /**
   * True from a slice's start until the loop has gone round once (the check phase after it): runs
   * within one poll phase share that slice. Frames of one socket read arrive one by one, and with
   * large frames the gaps between them looked idle, so a gap in time did not mark a new turn.
   */
  private sliceOpen = false;
  private readonly closeSlice = () => {
    this.sliceOpen = false;
  };

  /** `c` has a request to handle: serves it now if the thread's slice allows, else in turn. */
  wake(c: Servable): void {
    if (!this.ready.has(c)) {
      c.usedMs = Math.max(c.usedMs, this.clock);
      this.ready.add(c);
    }
    if (this.running || this.deferred) return;
    if (!this.sliceOpen) this.openSlice();
    else if (performance.now() - this.sliceStart > SLICE_MS) return this.defer();
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
        if (performance.now() - this.sliceStart > SLICE_MS) return this.defer();
        const c = this.leastUsed();
        this.clock = c.usedMs;
        const started = performance.now();
        let more = false;
        try {
          more = c.serveOne();
        } finally {
          c.usedMs += performance.now() - started;
          if (!more) this.ready.delete(c);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private openSlice(): void {
    this.sliceStart = performance.now();
    this.sliceOpen = true;
    setImmediate(this.closeSlice);
  }

  private defer(): void {
    this.deferred = true;
    setImmediate(() => {
      this.deferred = false;
      this.openSlice();
      this.run();
    });
  }

  private leastUsed(): Servable {
    let best: Servable | undefined;
    for (const c of this.ready) if (!best || c.usedMs < best.usedMs) best = c;
    return best!;
  }
}
