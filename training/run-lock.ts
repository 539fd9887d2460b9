// One trainer per run folder: a second one (a --resume beside the live run) rewrote the live
// run's metrics and pruned its checkpoints. The lock is a file holding the owner's process id,
// which appears whole (written beside it, then hard-linked into place: no reader sees it empty);
// one whose process is gone (a crash, kill -9) is taken over, one taker at a time.

import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, lstatSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { readRunFile } from './files.js';
import { isAlive } from './process-alive.js';
import { dirname, join, resolve } from 'node:path';
import { ValidationError } from '../env/rules/index.js';

/** The lock's file name in a run folder. */
export const RUN_LOCK_FILE = '.lock';

/** Locks this process holds: its own process id in a lock file says nothing about which run. */
const held = new Set<string>();

export class RunLock {
  private constructor(
    private readonly path: string,
    private readonly runDir: string,
    /** The outermost folder taking the lock made (null if runDir existed): removed again, with those inside it, if the run leaves them empty. */
    private readonly madeFolder: string | null,
  ) {}

  /**
   * Takes the run folder `runDir` (made if absent), or refuses naming the process that trains it.
   * A lock that cannot be written (a full disk, no permission) throws the file system's error and
   * leaves no lock file, and no folder it made.
   */
  static acquire(runDir: string): RunLock {
    const madeFolder = mkdirSync(runDir, { recursive: true }) ?? null;
    const path = join(runDir, RUN_LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeLockFile(path);
        held.add(path);
        return new RunLock(path, runDir, madeFolder);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
          removeMadeFolders(runDir, madeFolder);
          throw e;
        }
      }
      const lockFile = lstatSync(path, { throwIfNoEntry: false });
      if (lockFile && !lockFile.isFile()) {
        // A folder or a FIFO in its place: reading a FIFO blocked for good, and a folder cannot be taken over.
        throw new ValidationError('run in use', 'name', `${path} is not a lock file (${lockFile.isDirectory() ? 'a folder' : 'not a regular file'}): remove it, then start the run again`);
      }
      const content = readLockOwner(path);
      const owner = Number.parseInt(content, 10);
      if (isAlive(owner) && (owner !== process.pid || held.has(path))) {
        // The lock holds only a process id, which another process may have taken since (a
        // container's restart): the message names the file for that case.
        throw new ValidationError(
          'run in use',
          'name',
          `${runDir} is being trained by process ${owner}: wait for it to finish or stop it (Ctrl-C saves a checkpoint), then resume; if process ${owner} is no training of this run, remove ${path}`,
        );
      }
      // Left by a process that is gone: taken over (whoever creates it first wins the retry).
      removeStaleLock(path, content);
    }
    throw new ValidationError('run in use', 'name', `${runDir}: another process keeps taking its lock (${path})`);
  }

  release(): void {
    if (!held.delete(this.path)) return;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone.
    }
    // A run refused before it wrote anything leaves no folder behind.
    removeMadeFolders(this.runDir, this.madeFolder);
  }
}

/**
 * Creates the lock file holding this process's id (EEXIST when there is one): written whole
 * beside it, then linked into place. Created empty and written after, a reader in between read
 * no owner, judged the lock dead and took it over.
 */
function writeLockFile(path: string): void {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writePidFile(temp);
  try {
    linkSync(temp, path);
  } catch (e) {
    // A file system without hard links (FAT, some network mounts): created in place, as before.
    if (!NO_HARD_LINKS.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
    writePidFile(path);
  } finally {
    unlinkSync(temp);
  }
}

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Creates `path` (EEXIST when it exists) holding this process's id; one that could not be written whole is removed. */
function writePidFile(path: string): void {
  const fd = openSync(path, 'wx');
  try {
    writeSync(fd, `${process.pid}\n`);
  } catch (e) {
    closeSync(fd);
    unlinkSync(path);
    throw e;
  }
  closeSync(fd);
}

/** How long a takeover may hold its claim before another taker reads it as left by a crash. */
const TAKEOVER_STALE_MS = 10_000;

/**
 * Removes the lock at `path` if it still holds `content` (a dead owner's), under a claim that
 * one taker holds at a time: two takers that read the same dead owner each removed "the" lock,
 * the second one the first one's new lock, and both trained the run.
 */
function removeStaleLock(path: string, content: string): void {
  const claim = `${path}.takeover`;
  try {
    writeLockFile(claim);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // Another taker is at it (the retry sees its lock), or one crashed holding the claim.
    const since = statSync(claim, { throwIfNoEntry: false })?.mtimeMs;
    if (since !== undefined && Date.now() - since > TAKEOVER_STALE_MS) unlinkIfPresent(claim);
    return;
  }
  try {
    if (readLockOwner(path) === content) unlinkIfPresent(path);
  } finally {
    unlinkIfPresent(claim);
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** Removes the empty folders from `runDir` up to `top` (the outermost one mkdir made); stops at the first that holds something. */
function removeMadeFolders(runDir: string, top: string | null): void {
  if (top === null) return;
  const outermost = resolve(top);
  for (let dir = resolve(runDir); ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (the run wrote into it), or already gone
    }
    if (dir === outermost || dirname(dir) === dir) return;
  }
}

function readLockOwner(path: string): string {
  try {
    return readRunFile(path, MAX_LOCK_BYTES);
  } catch {
    return '';
  }
}

/** A lock holds a process id and a newline. */
const MAX_LOCK_BYTES = 64;
