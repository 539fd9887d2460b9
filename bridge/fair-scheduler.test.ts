// The main thread's turn-taking (fair-scheduler.ts): least main-thread time first, slices that
// end with the loop's turn, so a light request is served between heavy ones (a probe's 512-row
// requests that the schema refuses, ~19 ms each from six connections, held a ping up 0.6 s).
import { describe, expect, it } from 'vitest';
import { FairScheduler, SLICE_MS, type Servable } from './fair-scheduler.js';

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin: a request's main-thread work
  }
}

/** A connection whose every request takes `costMs`, logging its name when served. */
function connection(name: string, costMs: number, requests: number, log: string[]): Servable & { left: number } {
  return {
    usedMs: 0,
    left: requests,
    serveOne() {
      busyWait(costMs);
      log.push(name);
      this.left--;
      return this.left > 0;
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('FairScheduler', () => {
  it('serves a light request after at most one more heavy one, and gives the loop a turn every slice', async () => {
    const scheduler = new FairScheduler();
    const log: string[] = [];
    const heavy = connection('heavy', SLICE_MS * 1.5, 6, log);
    scheduler.wake(heavy);
    // The first slice ran at once and was used up by one request: the rest waits for a turn.
    expect(log).toEqual(['heavy']);
    const light = connection('light', 0, 1, log);
    scheduler.wake(light);
    expect(log).toEqual(['heavy']); // not inline: the slice is spent
    await turn();
    expect(log.slice(0, 2)).toEqual(['heavy', 'light']);
    while (log.length < 7) await turn();
    expect(log).toEqual(['heavy', 'light', 'heavy', 'heavy', 'heavy', 'heavy', 'heavy']);
  });

  it('shares the thread by time used, not by requests: a cheap connection goes several times per expensive request', async () => {
    const scheduler = new FairScheduler();
    const log: string[] = [];
    const expensive = connection('E', 20, 3, log);
    const cheap = connection('c', 0.5, 200, log);
    scheduler.wake(expensive);
    scheduler.wake(cheap);
    while (log.filter((n) => n === 'E').length < 3) await turn();
    // Turn by turn per request, E's third request would be the fifth served; by time, about the 80th.
    const thirdE = log.findIndex((n, i) => n === 'E' && log.slice(0, i + 1).filter((m) => m === 'E').length === 3);
    expect(thirdE).toBeGreaterThan(20);
  });

  it('a connection that waited banks no time: it joins at the clock of those served', async () => {
    const scheduler = new FairScheduler();
    const log: string[] = [];
    const a = connection('a', 2, 30, log);
    scheduler.wake(a);
    while (log.length < 30) await turn();
    const late = connection('late', 2, 10, log);
    const b = connection('b', 2, 10, log);
    b.usedMs = a.usedMs;
    scheduler.wake(late);
    scheduler.wake(b);
    expect(late.usedMs).toBeGreaterThan(0);
    while (log.length < 50) await turn();
    // Alternating, not `late` ten times first for the time it did not use.
    const order = log.slice(30);
    expect(order.slice(0, 6).filter((n) => n === 'late').length).toBeLessThanOrEqual(4);
  });
});
