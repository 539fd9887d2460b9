// Keeps the event loop polling for a short while after a reply instead of letting the thread
// sleep: a client that steps in a loop sends its next request within tens of microseconds, and
// a thread asleep in epoll_wait takes longer than that to wake on this kind of machine (a
// virtual CPU that halted must be woken by the hypervisor). While a window is open, a chain of
// setImmediate callbacks makes libuv poll its sockets with a zero timeout, so the next request
// is read as soon as it arrives; other connections' events are handled as usual meanwhile.
//
// It pays only while the polling thread has a core to itself: it holds that core for the whole
// window, so a client on the same machine that needs it waits. Measured here (two cores), a
// Python client's ping round trips: 14,000-14,900/s with a 200 us window against 9,100-9,600/s
// without on a quiet machine, but 13,000-14,500/s against 23,000-24,400/s beside one busy
// process. Hence off by default (`spinMicroseconds` 0), for setups with a core to spare.

export class BusyPoll {
  private until = 0;
  private running = false;

  /** `microseconds` 0 turns polling off. */
  constructor(readonly microseconds: number) {
    if (!Number.isFinite(microseconds) || microseconds < 0) throw new RangeError(`spinMicroseconds must be a finite number >= 0, got ${microseconds}`);
  }

  /** Keeps polling for the next `microseconds` (from now). */
  extend(): void {
    if (this.microseconds <= 0) return;
    this.until = performance.now() + this.microseconds / 1000;
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
