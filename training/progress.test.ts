// The progress bar's ETA: from the pace of the work done since the bar started, so a resumed
// run does not count the updates of the run it continues as done in no time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProgressBar, formatSeconds } from './progress.js';

function fakeStream() {
  const lines: string[] = [];
  return { lines, stream: { isTTY: false, write: (text: string) => lines.push(text) } as unknown as NodeJS.WriteStream };
}

describe('ProgressBar', () => {
  afterEach(() => vi.useRealTimers());

  it('estimates the time left from the pace since it started', () => {
    vi.useFakeTimers({ now: 0 });
    const { lines, stream } = fakeStream();
    const bar = new ProgressBar('train', 100, stream);
    vi.setSystemTime(10_000);
    bar.update(10);
    expect(lines.at(-1)).toContain('10/100 10% 10s elapsed, ETA 1m30s');
  });

  it('a resumed run: the work done before the bar started does not count toward the pace', () => {
    vi.useFakeTimers({ now: 0 });
    const { lines, stream } = fakeStream();
    const bar = new ProgressBar('train', 100, stream, 50);
    vi.setSystemTime(10_000);
    bar.update(60); // 10 updates in 10 s, 40 to go
    expect(lines.at(-1)).toContain('60/100 60% 10s elapsed, ETA 40s');
  });

  it("a first report of under 1% of the work gives no ETA, and later ones count the pace from it: the start-up is not the work's pace [probe]", () => {
    // The final evaluation's first deal (worker threads loading) said "ETA 39m53s" of 30 s.
    vi.useFakeTimers({ now: 0 });
    const { lines, stream } = fakeStream();
    const bar = new ProgressBar('final eval', 3200, stream);
    vi.setSystemTime(30_000);
    bar.update(1);
    expect(lines.at(-1)).toContain('1/3200 0% 30s elapsed, ETA ?');
    vi.setSystemTime(31_000);
    bar.update(321); // 320 deals in 1 s after the first
    expect(lines.at(-1)).toContain('321/3200 10% 31s elapsed, ETA 9s');
  });

  it('redraws in place on a terminal, cut to its width (a longer line wrapped and left rows behind) [probe]', () => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns: 40, write: (text: string) => writes.push(text) } as unknown as NodeJS.WriteStream;
    const bar = new ProgressBar('train', 10, stream);
    bar.update(3, 'a long tail of figures that does not fit an 80-column terminal either');
    expect(writes).toHaveLength(1);
    expect(writes[0]!.startsWith('\rtrain [########')).toBe(true);
    expect(writes[0]).toHaveLength(1 + 39);
    bar.update(10);
    expect(writes.slice(1)).toEqual([expect.stringMatching(/^\rtrain \[#{28}\] 1/), '\n']);
    expect(writes[1]).toHaveLength(1 + 39);
  });
});

describe('formatSeconds', () => {
  it('rounds before it splits minutes from seconds ("1m60s" for 119.6 s) [eval probe, session 37]', () => {
    expect([0.4, 59.4, 59.6, 60, 119.6, 3599.7, 3600].map(formatSeconds)).toEqual(['0s', '59s', '1m00s', '1m00s', '2m00s', '60m00s', '60m00s']);
  });
});
