// BusyPoll: the window after a reply is bounded, ends on stop(), and is off at 0; a server
// answers the same with and without it, and `kratzen serve --spin-us` is checked.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeClient } from './client.js';
import { BusyPoll } from './busy-poll.js';
import { BridgeServer } from './server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('BusyPoll', () => {
  it('keeps the loop polling for its window, then lets it sleep', async () => {
    const poll = new BusyPoll(5_000);
    poll.extend();
    expect(poll.active).toBe(true);
    await nextTurn();
    expect(poll.active).toBe(true);
    await sleep(30);
    expect(poll.active).toBe(false);
  });

  it('stop() closes a long window at once', async () => {
    const poll = new BusyPoll(10_000_000);
    poll.extend();
    poll.stop();
    await nextTurn();
    await nextTurn();
    expect(poll.active).toBe(false);
  });

  it('does nothing at 0 and refuses negative or infinite windows', () => {
    const off = new BusyPoll(0);
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
    expect(JSON.parse(run.stdout)).toMatchObject({ error: 'invalid arguments', field: 'spin-us' });
  });
});
