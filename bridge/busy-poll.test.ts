// BusyPoll: the window after a reply is bounded, ends on stop(), is off at 0, and opens only
// while the machine has idle cores (with hysteresis); a server answers the same with and without
// it, and `kratzen serve --spin-us` is checked.

import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeClient } from './client.js';
import { BusyPoll, IdleCores } from './busy-poll.js';
import { BridgeServer } from './server.js';
import { lastJsonLine } from '../test/helpers/cli-output.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
/** An idle-core source the test sets. */
const idleSource = (idle: { cores: number }) => ({ read: () => idle.cores });

describe('BusyPoll', () => {
  it('keeps the loop polling for its window, then lets it sleep', async () => {
    // A window long enough that a loaded machine's slow turn stays inside it (5 ms failed there).
    const poll = new BusyPoll(200_000, idleSource({ cores: 2 }));
    poll.extend();
    expect(poll.active).toBe(true);
    await nextTurn();
    expect(poll.active).toBe(true);
    await sleep(400);
    expect(poll.active).toBe(false);
  });

  it('stop() closes a long window at once', async () => {
    const poll = new BusyPoll(10_000_000, idleSource({ cores: 2 }));
    poll.extend();
    poll.stop();
    await nextTurn();
    await nextTurn();
    expect(poll.active).toBe(false);
  });

  it('polls only while the machine has idle cores: stops under 0.25, starts again over 0.75', async () => {
    const idle = { cores: 0.1 };
    const poll = new BusyPoll(1_000, idleSource(idle));
    const opens = async (cores: number) => {
      idle.cores = cores;
      poll.extend();
      const opened = poll.active;
      poll.stop();
      await nextTurn();
      await nextTurn();
      return opened;
    };
    expect(await opens(0.1)).toBe(false); // a busy machine: no polling
    expect(await opens(0.5)).toBe(false); // not enough to start again
    expect(await opens(1.0)).toBe(true);
    expect(await opens(0.5)).toBe(true); // enough to keep going
    expect(await opens(0.2)).toBe(false);
  });

  it('measures idle cores from the kernel between 0 and the number of cores', async () => {
    const meter = new IdleCores();
    await sleep(250);
    const idle = meter.read();
    expect(Number.isFinite(idle)).toBe(true);
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(idle).toBeLessThanOrEqual(cpus().length * 1.1);
  });

  it('does nothing at 0 and refuses negative or infinite windows', () => {
    const off = new BusyPoll(0, idleSource({ cores: 2 }));
    off.extend();
    expect(off.active).toBe(false);
    expect(() => new BusyPoll(-1)).toThrow(/spinMicroseconds/);
    expect(() => new BusyPoll(Infinity)).toThrow(/spinMicroseconds/);
    expect(() => new BridgeServer({ spinMicroseconds: Number.NaN })).toThrow(/spinMicroseconds/);
  });
});

describe('a server that polls after replies', () => {
  it('answers a stepping loop exactly as one that sleeps', async () => {
    const replies: unknown[][] = [];
    for (const spinMicroseconds of [0, 2_000]) {
      const server = await new BridgeServer({ port: 0, spinMicroseconds }).start();
      const client = await BridgeClient.open(server.url);
      const { session } = (await client.call('env.create', { numEnvs: 2 })).result as { session: string };
      let result = (await client.call('env.reset', { session, seed: 5 })).result as { masks: number[][] };
      const seen: unknown[] = [result];
      for (let k = 0; k < 40; k++) {
        result = (await client.call('env.step', { session, actions: result.masks.map((m) => m.indexOf(1)) })).result as typeof result;
        seen.push(result);
      }
      replies.push(seen);
      await client.close();
      await server.close();
    }
    expect(replies[1]).toEqual(replies[0]);
  });

  it('kratzen serve refuses a bad --spin-us, naming the flag', () => {
    const run = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'serve', '--port', '0', '--spin-us=-5'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(lastJsonLine(run.stderr)).toMatchObject({ error: 'invalid arguments', field: 'spin-us' });
  });
});
