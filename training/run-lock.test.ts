// The run lock when its file cannot be written (a full disk): the error reaches the caller and
// nothing is left behind, neither a 0-byte lock that would block the next run nor folders it made.

import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RUN_LOCK_FILE, RunLock } from './run-lock.js';

// Wrapped, not replaced: a test makes the lock's write fail as on a full disk.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, writeSync: vi.fn(actual.writeSync) };
});

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

afterEach(() => {
  vi.mocked(fs.writeSync).mockReset();
});

describe('RunLock on a full disk', () => {
  it('throws the write error and removes the lock file and every folder it made', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-lock-'));
    vi.mocked(fs.writeSync).mockImplementationOnce(() => {
      throw enospc();
    });
    // runs/ and runs/r1 are both made by acquire: a refused run leaves neither.
    expect(() => RunLock.acquire(join(dir, 'runs', 'r1'))).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps a run folder that existed, without a lock in it, and the next acquire succeeds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-lock-'));
    const runDir = join(dir, 'r1');
    mkdirSync(runDir);
    vi.mocked(fs.writeSync).mockImplementationOnce(() => {
      throw enospc();
    });
    expect(() => RunLock.acquire(runDir)).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(existsSync(runDir)).toBe(true);
    expect(readdirSync(runDir)).toEqual([]);
    const { writeSync } = await vi.importActual<typeof import('node:fs')>('node:fs');
    vi.mocked(fs.writeSync).mockImplementation(writeSync);
    const lock = RunLock.acquire(runDir);
    expect(readdirSync(runDir)).toEqual([RUN_LOCK_FILE]);
    lock.release();
    expect(existsSync(runDir)).toBe(true);
  });

  it('a released lock removes the folders it made when the run wrote nothing into them', async () => {
    const { writeSync } = await vi.importActual<typeof import('node:fs')>('node:fs');
    vi.mocked(fs.writeSync).mockImplementation(writeSync);
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-lock-'));
    RunLock.acquire(join(dir, 'a', 'b')).release();
    expect(readdirSync(dir)).toEqual([]);
    // A folder the run wrote into stays, and so do the ones above it.
    const lock = RunLock.acquire(join(dir, 'a', 'b'));
    mkdirSync(join(dir, 'a', 'b', 'checkpoints'));
    lock.release();
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['checkpoints']);
  });
});

describe('RunLock held by another process', () => {
  it('names the lock file to remove when that process id is no training of the run (ids are reused) [crash probe, session 36]', () => {
    const runDir = mkdtempSync(join(tmpdir(), 'kratzen-lock-'));
    // The parent process stands for a live process that took a dead trainer's id.
    fs.writeFileSync(join(runDir, RUN_LOCK_FILE), String(process.ppid));
    expect(() => RunLock.acquire(runDir)).toThrow(expect.objectContaining({ field: 'name', reason: expect.stringContaining(`if process ${process.ppid} is no training of this run, remove ${join(runDir, RUN_LOCK_FILE)}`) }));
  });
});
