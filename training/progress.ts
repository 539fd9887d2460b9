// A progress bar with ETA on stderr: redrawn in place on a terminal, a line every ~10% otherwise
// (so CI logs stay short).

export class ProgressBar {
  private readonly started = Date.now();
  private lastDecile = -1;

  /** `startAt`: work already done before this bar started (a resumed run); the ETA ignores it. */
  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly startAt = 0,
  ) {}

  update(done: number, extra = ''): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const elapsed = (Date.now() - this.started) / 1000;
    const doneHere = done - this.startAt;
    const eta = doneHere > 0 ? (elapsed / doneHere) * Math.max(0, this.total - done) : NaN;
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
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds - 60 * m)).padStart(2, '0')}s`;
}
