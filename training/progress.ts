// A progress bar with ETA on stderr: redrawn in place on a terminal, a line every ~10% otherwise
// (so CI logs stay short).

/** Below this share of the work, a first report gives no ETA: start-up dominates its pace. */
const MIN_SHARE_FOR_FIRST_ETA = 0.01;

export class ProgressBar {
  private readonly started = Date.now();
  private lastDecile = -1;
  /** When the first report came and how much was done then: later paces count from it. */
  private first: { at: number; done: number } | null = null;

  /** `startAt`: work already done before this bar started (a resumed run); the ETA ignores it. */
  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly startAt = 0,
  ) {}

  update(done: number, extra = ''): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const now = Date.now();
    const elapsed = (now - this.started) / 1000;
    const left = Math.max(0, this.total - done);
    // The first unit carries the start-up (worker threads loading, code compiling): the final
    // evaluation's first deal said "ETA 39m53s" of 30 s. So the pace counts from the first
    // report once there is a later one, and a first report of under 1% of the work gives none.
    let eta = NaN;
    if (this.first && done > this.first.done) eta = ((now - this.first.at) / 1000 / (done - this.first.done)) * left;
    else if (!this.first && done - this.startAt >= Math.max(1, MIN_SHARE_FOR_FIRST_ETA * this.total)) eta = (elapsed / (done - this.startAt)) * left;
    this.first ??= { at: now, done };
    const width = 28;
    const filled = Math.round(fraction * width);
    const line =
      `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total} ` +
      `${(fraction * 100).toFixed(0)}% ${formatSeconds(elapsed)} elapsed, ETA ${Number.isFinite(eta) ? formatSeconds(eta) : '?'}` +
      (extra ? ` ${extra}` : '');
    if (this.stream.isTTY) {
      // Cut to the terminal's width: a longer line wrapped, and each redraw (\r goes back to the
      // start of the last row only) left the wrapped rows behind.
      const columns = this.stream.columns ? this.stream.columns - 1 : 100;
      this.stream.write(`\r${line.slice(0, columns).padEnd(columns)}`);
      if (done >= this.total) this.stream.write('\n');
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== this.lastDecile || done >= this.total) {
      this.lastDecile = decile;
      this.stream.write(`${line}\n`);
    }
  }
}

export function formatSeconds(seconds: number): string {
  // Rounded first: 119.6 s read "1m60s".
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  const m = Math.floor(whole / 60);
  return `${m}m${String(whole - 60 * m).padStart(2, '0')}s`;
}
