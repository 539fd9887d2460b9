// `kratzen serve` refuses flags it cannot honour before listening, naming the flag: values that
// were accepted before (a missing checkpoint root, an empty Host name, a 90 TB message limit,
// timers past setTimeout's 2^31 - 1 ms, which Node fires after 1 ms) and an address this machine
// cannot bind, which used to be blamed on the port.
import { spawnSync } from 'node:child_process';
import { HAS_TFJS_NODE } from '../test/helpers/tfjs-node.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', 'dist/cli/main.js');

describe('kratzen serve flags', () => {
  it.each([
    [['--checkpoint-root', 'no-such-folder'], 'checkpoint-root'],
    [['--checkpoint-root', 'package.json'], 'checkpoint-root'],
    [['--allow-host='], 'allow-host'],
    [['--allow-host', 'a b'], 'allow-host'],
    [['--max-message-bytes', '99999999999999'], 'max-message-bytes'],
    [['--idle-timeout-ms', '3000000000'], 'idle-timeout-ms'],
    [['--heartbeat-interval-ms', '3000000000'], 'heartbeat-interval-ms'],
    [['--max-envs', '1e15'], 'max-envs'],
    [['--host', '999.1.1.1', '--token', 'a-token-long-enough'], 'host'],
    [['--host', '0.0.0.0', '--token', 'short'], 'token'],
    // No host at all: they were told to bring a token, then failed to resolve.
    [['--host', 'not a host'], 'host'],
    [['--host='], 'host'],
    [['--host', 'a/b'], 'host'],
    [['--seed-secret='], 'seed-secret'],
    // It turned the token off, and overrode KRATZEN_BRIDGE_TOKEN [probe round 11].
    [['--token='], 'token'],
    // Not origins, which a browser's Origin header never names: the first allowed a.example [session 33].
    [['--allow-origin', 'http://user:pw@a.example'], 'allow-origin'],
    [['--allow-origin', 'http://a.example?x=1'], 'allow-origin'],
    [['--allow-origin', 'http://a.example#x'], 'allow-origin'],
    [['--allow-origin', 'http://a.example:99999'], 'allow-origin'],
    [['--allow-origin', 'ftp://a.example'], 'allow-origin'],
  ])('%j is refused naming %s', (flags, field) => {
    const run = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', ...flags], { encoding: 'utf8', timeout: 20_000, cwd: join(import.meta.dirname, '..') });
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stderr)).toMatchObject({ error: 'invalid arguments', field });
  });
});

describe('kratzen serve --backend', () => {
  it.skipIf(HAS_TFJS_NODE)('refuses a backend that cannot load before listening (it listened, and every checkpoint load failed, blamed on the client)', () => {
    const run = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--backend', 'tensorflow'], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(2);
    expect(run.stdout).not.toContain('listening');
    expect(JSON.parse(run.stderr)).toMatchObject({ error: 'invalid arguments', field: 'backend' });
  });
});

describe('kratzen serve --allow-origin', () => {
  it.each(['http://a.example', 'https://A.example:8443/', 'http://[::1]:3000', 'http://localhost:5173'])('takes the origin %s (the next flag, a bad port, is what is refused)', (origin) => {
    const run = spawnSync(process.execPath, [BIN, 'serve', '--allow-origin', origin, '--port=-1'], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stderr)).toMatchObject({ field: 'port' });
  });
});

describe('kratzen serve signals [probe round 8]', () => {
  it('shuts down gracefully on SIGHUP, as on SIGINT and SIGTERM (a closed terminal ended it at once, exit 129)', async () => {
    const { spawn } = await import('node:child_process');
    for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill(signal);
      expect(await exited, signal).toBe(0);
      expect(stderr).toContain(`kratzen serve: ${signal}, shutting down`);
    }
  }, 30_000);
});
