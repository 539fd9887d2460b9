// `kratzen serve` refuses flags it cannot honour before listening, naming the flag: values that
// were accepted before (a missing checkpoint root, an empty Host name, a 90 TB message limit,
// timers past setTimeout's 2^31 - 1 ms, which Node fires after 1 ms) and an address this machine
// cannot bind, which used to be blamed on the port.
import { spawnSync } from 'node:child_process';
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
  ])('%j is refused naming %s', (flags, field) => {
    const run = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', ...flags], { encoding: 'utf8', timeout: 20_000, cwd: join(import.meta.dirname, '..') });
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: 'invalid arguments', field });
  });
});
