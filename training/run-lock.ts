// One trainer per run folder: a second one (a --resume beside the live run) rewrote the live
// run's metrics and pruned its checkpoints. The lock is a file holding the owner's process id,
// created exclusively; one whose process is gone (a crash, kill -9) is taken over.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../env/rules/index.js';

/** The lock's file name in a run folder. */
export const RUN_LOCK_FILE = '.lock';

/** Locks this process holds: its own process id in a lock file says nothing about which run. */
const held = new Set<string>();

export class RunLock {
  private constructor(
    private readonly path: string,
    /** The folder, when taking the lock made it: removed again if the run leaves it empty. */
    private readonly madeFolder: string | null,
  ) {}

  /** Takes the run folder `runDir` (made if absent), or refuses naming the process that trains it. */
  static acquire(runDir: string): RunLock {
    const madeFolder = existsSync(runDir) ? null : runDir;
    mkdirSync(runDir, { recursive: true });
    const path = join(runDir, RUN_LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        held.add(path);
        return new RunLock(path, madeFolder);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const owner = Number.parseInt(readLockOwner(path), 10);
      if (isAlive(owner) && (owner !== process.pid || held.has(path))) {
        throw new ValidationError('run in use', 'name', `${runDir} is being trained by process ${owner}: wait for it to finish or stop it (Ctrl-C saves a checkpoint), then resume`);
      }
      // Left by a process that is gone: taken over (whoever creates it first wins the retry).
      try {
        unlinkSync(path);
      } catch {
        // Another process took it over first; the retry sees its lock.
      }
    }
    throw new ValidationError('run in use', 'name', `${runDir}: another process keeps taking its lock (${path})`);
  }

  release(): void {
    if (!held.delete(this.path)) return;
    try {
      unlinkSync(this.path);
      // A run refused before it wrote anything leaves no folder behind.
      if (this.madeFolder) rmdirSync(this.madeFolder);
    } catch {
      // Already gone, or the folder holds the run: nothing more to do.
    }
  }
}

function readLockOwner(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: a process of another user holds that id, alive.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
