// The run lock when its file cannot be written (a full disk): the error reaches the caller and
// nothing is left behind, neither a 0-byte lock that would block the next run nor folders it made.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RUN_LOCK_FILE, RunLock } from './run-lock.js';

// Wrapped, not replaced: a test makes the lock's write fail as on a full disk.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, writeSync: vi.fn(actual.writeSync), linkSync: vi.fn(actual.linkSync) };
});

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

afterEach(() => {
  vi.mocked(fs.writeSync).mockReset();
  vi.mocked(fs.linkSync).mockReset();
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

describe('RunLock on a file system without hard links', () => {
  it('creates the lock in place, holding its process id, and leaves nothing else', () => {
    const runDir = mkdtempSync(join(tmpdir(), 'kratzen-lock-'));
    vi.mocked(fs.linkSync).mockImplementationOnce(() => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    });
    const lock = RunLock.acquire(runDir);
    expect(readdirSync(runDir)).toEqual([RUN_LOCK_FILE]);
    expect(fs.readFileSync(join(runDir, RUN_LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    expect(readdirSync(runDir)).toEqual([]);
  });
});

// Takers that read the same dead owner each removed "the" lock, the later one the earlier one's
// new lock, and both trained the run: 24 of 40 races had two holders [training probe, session 38].
describe('RunLock under a race', () => {
  it('has one holder when three processes take over a dead owner\'s lock at the same moment', async () => {
    const module = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'training', 'run-lock.js')).href;
    const script = `import { RunLock } from ${JSON.stringify(module)};
      const [dir, at] = process.argv.slice(-2);
      while (Date.now() < Number(at)) {}
      try { const lock = RunLock.acquire(dir); console.log('GOT'); setTimeout(() => lock.release(), 300); } catch { console.log('NO'); }`;
    const taker = (dir: string, at: number) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir, String(at)], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('exit', () => resolve(out.trim()));
      });
    const holders: number[] = [];
    for (let trial = 0; trial < 10; trial++) {
      const dir = mkdtempSync(join(tmpdir(), 'kratzen-lock-race-'));
      fs.writeFileSync(join(dir, RUN_LOCK_FILE), '999999999\n'); // no such process
      const at = Date.now() + 700;
      const said = await Promise.all([taker(dir, at), taker(dir, at), taker(dir, at)]);
      holders.push(said.filter((s) => s === 'GOT').length);
      expect(said.every((s) => s === 'GOT' || s === 'NO'), said.join()).toBe(true);
      // Nothing but the run's own files is left: no written-beside lock, no takeover claim.
      expect(readdirSync(dir)).toEqual([]);
    }
    expect(holders).toEqual(Array(10).fill(1));
  }, 60_000);
});
