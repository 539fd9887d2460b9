// The main thread's turn-taking (fair-scheduler.ts): least main-thread time lately first, slices
// that end with the loop's turn, so a light request is served between heavy ones (a probe's
// 512-row requests that the schema refuses, ~19 ms each from six connections, held a ping up
// 0.6 s; sixteen connections stepping big JSON sessions 0.17 s while their use was reset on rejoin).
import { describe, expect, it } from 'vitest';
import { FairScheduler, SLICE_MS, USE_HALF_LIFE_MS, type Servable } from './fair-scheduler.js';

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin: a request's main-thread work
  }
}

/** A connection whose every request takes `costMs`, logging its name when served. */
function connection(name: string, costMs: number, requests: number, log: string[]): Servable & { left: number } {
  return {
    usage: 0,
    usageAt: 0,
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

  it('goes first with a light connection among busy ones that keep draining and refilling their queues', async () => {
    // Busy connections that empty their queue and send again must not tie with a new one.
    const scheduler = new FairScheduler();
    const log: string[] = [];
    const busy = Array.from({ length: 6 }, (_, k) => connection(`b${k}`, 4, 1_000, log));
    for (let round = 0; round < 4; round++) {
      for (const b of busy) scheduler.wake(b);
      while (log.length < (round + 1) * 6) await turn();
    }
    const light = connection('light', 0, 1, log);
    for (const b of busy) scheduler.wake(b);
    scheduler.wake(light);
    const before = log.length;
    while (!log.includes('light')) await turn();
    expect(log.indexOf('light') - before).toBeLessThanOrEqual(3);
  });

  it('lets past use fade: a connection busy long ago is not held back behind a new one', async () => {
    const scheduler = new FairScheduler();
    const log: string[] = [];
    const old = connection('old', 2, 40, log);
    scheduler.wake(old);
    while (log.length < 20) await turn();
    await new Promise((r) => setTimeout(r, 10 * USE_HALF_LIFE_MS));
    const fresh = connection('new', 2, 20, log);
    scheduler.wake(old);
    scheduler.wake(fresh);
    while (log.length < 30) await turn();
    expect(log.slice(20, 30).filter((n) => n === 'old').length).toBeGreaterThanOrEqual(3);
  });
});
