// slicedControl: the main thread's (and each worker's) long work gives way in slices that are
// the thread's, resumed one piece per turn of the event loop, and timed for the client's use.
import { describe, expect, it } from 'vitest';
import { slicedControl } from './session.js';

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Runs `pieces` slices of work under `control`, noting the turn of the event loop of each. */
async function work(name: string, control: ReturnType<typeof slicedControl>, pieces: number, log: string[], turn: () => number) {
  for (let i = 0; i < pieces; i++) {
    busy(3);
    log.push(`${name}@${turn()}`);
    if (i < pieces - 1 && control.due()) await control.pause();
  }
  control.settle();
}

describe('slicedControl', () => {
  it('resumes paused work one piece per turn of the event loop, in turn (N paused pieces used to run N slices back to back)', async () => {
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const log: string[] = [];
    const a = slicedControl(2, () => false);
    const b = slicedControl(2, () => false);
    const c = slicedControl(2, () => false);
    await Promise.all([work('a', a, 4, log, () => turns), work('b', b, 4, log, () => turns), work('c', c, 4, log, () => turns)]);
    counting = false;
    // Each piece outlasts a slice, so every piece after the first of each pauses, and no two
    // resumed pieces share a turn.
    const resumed = log.slice(3);
    const turnsOf = resumed.map((entry) => Number(entry.split('@')[1]));
    expect(new Set(turnsOf).size).toBe(turnsOf.length);
    // In turn: a, b, c, a, b, c, ...
    expect(resumed.map((entry) => entry[0]).join('')).toBe('abcabcabc');
  });

  it('resumes work that has not had a turn yet before work that has (a one-env step behind eight search sessions waited eight turns)', async () => {
    const log: string[] = [];
    const long = Array.from({ length: 4 }, (_, k) => work(`L${k}`, slicedControl(2, () => false), 6, log, () => 0));
    // Once the long pieces have each had a resumed turn, a newcomer arrives.
    while (log.length < 8) await new Promise((r) => setImmediate(r));
    const at = log.length;
    const newcomer = work('N', slicedControl(2, () => false), 2, log, () => 0);
    await newcomer;
    // Its first piece runs at once, its second after at most one other piece.
    expect(log.indexOf('N@0')).toBe(at);
    expect(log.indexOf('N@0', at + 1) - at).toBeLessThanOrEqual(2);
    await Promise.all(long);
  });

  it('charges the time of every piece, the first included (work that awaits before it runs outside the scheduler)', async () => {
    const charged: number[] = [];
    const control = slicedControl(1, () => false, (ms) => charged.push(ms));
    await work('a', control, 3, [], () => 0);
    expect(charged).toHaveLength(3);
    for (const ms of charged) expect(ms).toBeGreaterThanOrEqual(2.9);
  });

  it('opens a slice for work that starts in a turn without one, so short work never pauses', async () => {
    await new Promise((r) => setTimeout(r, 30));
    const control = slicedControl(10, () => false);
    expect(control.due()).toBe(false);
    busy(12);
    expect(control.due()).toBe(true);
    // A second piece of work starting in the same turn finds the slice used up.
    expect(slicedControl(10, () => false).due()).toBe(true);
  });

  it('rejects a paused piece whose client has gone', async () => {
    let gone = false;
    const control = slicedControl(0, () => gone);
    busy(1);
    const paused = control.pause();
    gone = true;
    await expect(paused).rejects.toThrow(/gone/);
  });
});
