// slicedControl: the main thread's (and each worker's) long work gives way in slices that are
// the thread's, resumed one piece per turn of the event loop, least used client first, and timed for the client's use.
import { describe, expect, it } from 'vitest';
import { createSession, slicedControl, type SessionOptions } from './session.js';
import { RandomAgent } from '../agents/random.js';
import { HeuristicAgent } from '../agents/heuristic.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { DEFAULT_AGENT_LIMITS } from '../agents/registry.js';
import type { RecentUse } from './fair-scheduler.js';

/** A client that has used none of the thread lately. */
const fresh = (): RecentUse => ({ usage: 0, usageAt: performance.now() });

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Runs `pieces` slices of work under `control`, noting the turn of the event loop of each. */
async function work(name: string, control: ReturnType<typeof slicedControl>, pieces: number, log: string[], turn: () => number, pieceMs = 3) {
  for (let i = 0; i < pieces; i++) {
    busy(pieceMs);
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
    // Each control made as its work starts: a piece counts from its control's making.
    await Promise.all(['a', 'b', 'c'].map((name) => work(name, slicedControl(2, fresh(), () => false), 4, log, () => turns)));
    counting = false;
    // Each piece outlasts a slice, so every piece after the first of each pauses, and no two
    // resumed pieces share a turn.
    const resumed = log.slice(3);
    const turnsOf = resumed.map((entry) => Number(entry.split('@')[1]));
    expect(new Set(turnsOf).size).toBe(turnsOf.length);
    // Equal pieces of equal clients take turns. The scheduler charges each piece's measured time,
    // so a piece preempted on a busy machine costs its client more and can swap two pieces of a
    // round (CI saw "abb" once while tests ran beside it): no client gets two pieces ahead of
    // another, where the old behaviour ran each client's pieces back to back.
    const order = resumed.map((entry) => entry[0]).join('');
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (const name of order) {
      counts[name]!++;
      expect(Math.max(...Object.values(counts)) - Math.min(...Object.values(counts))).toBeLessThanOrEqual(2);
    }
    expect(counts).toEqual({ a: 3, b: 3, c: 3 });
  });

  it('resumes the piece of the client that used least of the thread lately, not pieces in turn (a search client\'s 50 ms pieces held a 2 ms one) [probe F4]', async () => {
    const log: string[] = [];
    const heavy = Array.from({ length: 3 }, (_, k) => work(`H${k}`, slicedControl(1, fresh(), () => false), 12, log, () => 0, 6));
    while (log.length < 6) await new Promise((r) => setImmediate(r));
    const light = work('L', slicedControl(1, fresh(), () => false), 8, log, () => 0, 1);
    await light;
    // In turn, each of the light client's pieces waited for one of each heavy client's: 21
    // heavy pieces between its first and last. By use, it runs while it has used least.
    const first = log.indexOf('L@0');
    const last = log.lastIndexOf('L@0');
    const heavyBetween = log.slice(first, last).filter((entry) => entry.startsWith('H')).length;
    expect(heavyBetween).toBeLessThanOrEqual(3);
    await Promise.all(heavy);
  });

  it('resumes the work of a client new to the thread before work of clients that have had turns (a one-env step behind eight search sessions waited eight turns)', async () => {
    const log: string[] = [];
    const long = Array.from({ length: 4 }, (_, k) => work(`L${k}`, slicedControl(2, fresh(), () => false), 6, log, () => 0));
    // Once the long pieces have each had a resumed turn, a newcomer arrives.
    while (log.length < 8) await new Promise((r) => setImmediate(r));
    const at = log.length;
    const newcomer = work('N', slicedControl(2, fresh(), () => false), 2, log, () => 0);
    await newcomer;
    // Its first piece runs at once, its second after at most one other piece.
    expect(log.indexOf('N@0')).toBe(at);
    expect(log.indexOf('N@0', at + 1) - at).toBeLessThanOrEqual(2);
    await Promise.all(long);
  });

  it('charges the time of every piece to its client, the first included (work that awaits before it runs outside the scheduler)', async () => {
    const owner = fresh();
    const control = slicedControl(1, owner, () => false);
    await work('a', control, 3, [], () => 0);
    // Three pieces of 3 ms, faded by at most the few ms they took.
    expect(owner.usage).toBeGreaterThanOrEqual(8.5);
    expect(owner.usage).toBeLessThan(12);
  });

  it('opens a slice for work that starts in a turn without one, so short work never pauses', async () => {
    await new Promise((r) => setTimeout(r, 30));
    const control = slicedControl(10, fresh(), () => false);
    expect(control.due()).toBe(false);
    busy(12);
    expect(control.due()).toBe(true);
    // A second piece of work starting in the same turn finds the slice used up.
    expect(slicedControl(10, fresh(), () => false).due()).toBe(true);
  });

  it('rejects a paused piece whose client has gone', async () => {
    let gone = false;
    const control = slicedControl(0, fresh(), () => gone);
    busy(1);
    const paused = control.pause();
    gone = true;
    await expect(paused).rejects.toThrow(/gone/);
  });
});

describe('createSession', () => {
  /** A single session of 2 four-seat envs, the learner at seat 0, with `options`' opponents and checkpoint hooks. */
  const singleSession = (options: Pick<SessionOptions, 'opponents' | 'resolveCheckpoint' | 'loadCheckpoint'>) =>
    createSession({ id: 's1', mode: 'single', numEnvs: 2, config: { rules: { players: 4 } }, learnerSeat: 0, limits: DEFAULT_AGENT_LIMITS, seedSecret: 'test', ...options });

  it('loads one agent per checkpoint folder however the opponents spell it, and disposes it once [probe round 2]', async () => {
    // Each spelling used to load its own copy: ["ck", "ck/", "ck/."] held three models.
    const loads: string[] = [];
    let disposed = 0;
    class CountedAgent extends RandomAgent {
      dispose(): void {
        disposed++;
      }
    }
    const session = await singleSession({
      opponents: [null, 'ck', 'ck/', './ck/.'],
      resolveCheckpoint: async (spec) => `/real/${spec.replace(/^\.\//, '').replace(/\/\.?$/, '')}`,
      loadCheckpoint: async (dir) => {
        loads.push(dir);
        return new CountedAgent();
      },
    });
    await session.reset(3); // opponents are rebuilt for a seeded reset: from the same agent
    expect(loads).toEqual(['/real/ck']);
    session.close();
    expect(disposed).toBe(1);
  });

  it('keeps the checkpoint opponents it was created with when their folder goes away', async () => {
    // A seeded reset resolved the spec again: once the folder was deleted, every reset failed.
    let folderThere = true;
    const resolved: string[] = [];
    const session = await singleSession({
      opponents: [null, 'ck', 'random', 'ck'],
      resolveCheckpoint: async (spec) => {
        if (!folderThere) throw new CheckpointError('missing-file', `/real/${spec}`, 'deleted');
        resolved.push(spec);
        return `/real/${spec}`;
      },
      // Checkpoint agents are greedy and stateless, as the heuristic is.
      loadCheckpoint: async () => new HeuristicAgent(),
    });
    const first = Array.from((await session.reset(5)).observations);
    folderThere = false;
    const again = await session.reset(5);
    expect(Array.from(again.observations)).toEqual(first);
    expect(resolved).toEqual(['ck']);
    session.close();
  });
});
