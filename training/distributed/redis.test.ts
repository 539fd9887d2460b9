// The Redis URL a user passes: parsed into connection options, and never echoed with its
// password (error messages end up in terminals, CI logs and issue reports), and what a run on it
// says when Redis fails it.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { distributedRunFailure } from './jobs.js';
import { parseRedisUrl, redactedUrl } from './redis.js';

const BIN = join(import.meta.dirname, '../../dist/cli/main.js');

describe('parseRedisUrl', () => {
  it('reads user, password, port, database and TLS', () => {
    expect(parseRedisUrl('rediss://ann:p%40ss@[::1]:7000/3')).toEqual({ host: '::1', port: 7000, db: 3, username: 'ann', password: 'p@ss', tls: {}, maxRetriesPerRequest: null });
    expect(parseRedisUrl('redis://127.0.0.1')).toMatchObject({ host: '127.0.0.1', port: 6379, db: 0 });
  });

  it('reads the database as digits only (1e1 and 0x10 were databases 10 and 16) [probe round 8]', () => {
    for (const db of ['1e1', '0x10', '99999999999999999999', '-1', '1.5', ' 1']) {
      expect(() => parseRedisUrl(`redis://127.0.0.1:6379/${db}`), db).toThrow(/--redis database must be a whole number from 0 to 999999999/);
    }
    expect(parseRedisUrl('redis://127.0.0.1:6379/15').db).toBe(15);
  });

  // A socket path was told "--redis needs a host", port 0 only "Connection is closed." [scale-out probe, session 42].
  it('says that a Unix socket is not taken, and refuses port 0 before connecting', () => {
    expect(() => parseRedisUrl('redis:///run/redis.sock')).toThrow(/needs a host \(redis:\/\/HOST:PORT\[\/db\]; Unix sockets are not supported\), got "redis:\/\/\/run\/redis\.sock"/);
    expect(() => parseRedisUrl('redis://127.0.0.1:0')).toThrow(/port must be 1 to 65535, got 0/);
    expect(parseRedisUrl('redis://127.0.0.1:1').port).toBe(1);
  });

  it('masks the credentials of a URL it refuses', () => {
    expect(() => parseRedisUrl('redis://ann:s3cret@[bad')).toThrow(/redis:\/\/\*\*\*@\[bad/);
    for (const bad of ['redis://ann:s3cret@[bad', 'redis:ann:s3cret@host:x', 'ann:s3cret@', 'redis://ann:s3cret@host/x', 'redis://ann:s3@cret@[bad', 'redis://ann:s3cret\n@[bad']) {
      let message = '';
      try {
        parseRedisUrl(bad);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, bad).not.toBe('');
      expect(message, bad).not.toMatch(/s3|cret/);
    }
  });

  it('redactedUrl keeps the scheme and what follows the last @', () => {
    expect(redactedUrl('redis://u:p@h:1/0')).toBe('redis://***@h:1/0');
    expect(redactedUrl('redis://h:1')).toBe('redis://h:1');
    expect(redactedUrl('redis://u:p@ss@h:1')).toBe('redis://***@h:1');
  });

  it.skipIf(!existsSync(BIN))('kratzen worker and train do not print the password of an unreachable server', () => {
    for (const args of [['worker'], ['train', '--updates', '1', '--actors', '1']]) {
      const run = spawnSync(process.execPath, [BIN, ...args, '--redis', 'redis://ann:s3cret@127.0.0.1:1'], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, args[0]).not.toBe(0);
      expect(run.stdout + run.stderr, args[0]).toMatch(/redis/);
      expect(run.stdout + run.stderr, args[0]).not.toContain('s3cret');
      // Why: nobody listens there (it said "Connection is closed.") [redis probe, session 48].
      expect(run.stderr, args[0]).toMatch(/cannot reach Redis at 127\.0\.0\.1:1: connect ECONNREFUSED/);
      // Said at once, as eval says it (a train on Redis with no worker running waited without a word).
      if (args[0] === 'train') expect(run.stderr).toMatch(/^train: rollouts go to Redis at redis:\/\/\*\*\*@127\.0\.0\.1:1; .*\(until one takes them, this waits\)$/m);
    }
  }, 120_000);
});


describe('distributed run failures', () => {
  it('say that Redis went silent when a command timed out, as an evaluation says it (ioredis said "Command timed out") [redis probe, session 48]', () => {
    const failure = distributedRunFailure(new Error('Command timed out'));
    expect(failure).toMatchObject({ field: 'redis' });
    expect(failure.message).toMatch(/Redis has not answered a command in time/);
    expect(distributedRunFailure(new Error('READONLY')).message).toMatch(/READONLY/);
  });
});
