// A run's own files: atomic writes (a temporary file beside the target, flushed, then renamed, so
// a reader or a crash never sees half a file) and bounded reads of regular files.

import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, lstatSync, openSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirs, writeAllSync } from '../checkpoints/durable-fs.js';
import { utf8Text } from '../env/json-scan.js';
import { isAlive } from './process-alive.js';

/** The temporary names writeFilesAtomic writes under: `.tmp-<process id>-<random hex>`. */
const TEMP_NAME = /^\.tmp-(\d+)-[0-9a-f]+$/;

/**
 * Removes the temporary files of atomic writes that a process now gone left in `dir` and the
 * folders `levelsBelow` levels down: a run killed mid-write kept them, also after it was
 * resumed. A live process's (an eval writing its report into the run's folder) are left to it.
 */
export function removeLeftoverTemps(dir: string, levelsBelow = 1): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const writer = TEMP_NAME.exec(entry.name)?.[1];
    if (entry.isFile() && writer !== undefined && !isAlive(Number(writer))) rmSync(join(dir, entry.name), { force: true });
    else if (entry.isDirectory() && levelsBelow > 0) removeLeftoverTemps(join(dir, entry.name), levelsBelow - 1);
  }
}

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  writeFilesAtomic([[path, data]]);
}

/**
 * Writes files that belong together (a report and its data): every one is written and flushed
 * under a temporary name first, and only then renamed into place, so a write that fails (a full
 * disk) leaves every target as it was, an earlier report included.
 */
export function writeFilesAtomic(files: readonly (readonly [path: string, data: string | Uint8Array])[]): void {
  const temps: string[] = [];
  try {
    for (const [path, data] of files) {
      makeDirs(dirname(path));
      const { temp, fd } = createTemp(dirname(path));
      temps.push(temp);
      try {
        writeAllSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    // A rename needs no space; it fails on a target that is a folder. Those go first, so that
    // such a failure comes before any other target has changed.
    const order = files.map((_, k) => k).sort((a, b) => Number(isFolder(files[b]![0])) - Number(isFolder(files[a]![0])));
    for (const k of order) renameSync(temps[k]!, files[k]![0]);
  } catch (e) {
    for (const temp of temps) rmSync(temp, { force: true });
    throw e;
  }
}

/**
 * A new temporary file in `dir`, created exclusively under a name nobody can guess: a
 * predictable name opened with 'w' follows a symbolic link planted under it, and the write
 * truncates the file it points to. A short name of its own
 * (not the target's plus a suffix): a target name near the file system's limit must not fail
 * only at its temporary file.
 */
function createTemp(dir: string): { temp: string; fd: number } {
  for (let attempt = 0; ; attempt++) {
    const temp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString('hex')}`);
    try {
      return { temp, fd: openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw e;
    }
  }
}

function isFolder(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/**
 * The first of `paths` where a folder stands, which writeFilesAtomic could not replace, or null:
 * commands check their output files with it before the work (they found out after it).
 */
export function folderInPlaceOf(paths: readonly string[]): string | null {
  return paths.find(isFolder) ?? null;
}

/**
 * The text of `path` when it is a regular file of at most `maxBytes`; throws an Error saying why
 * not. Opened without waiting: a FIFO in a run folder (as metrics.jsonl, config.json) blocked
 * the trainer inside a read that no Ctrl-C or kill could interrupt. Nor through a symbolic link,
 * as checkpoint files are not: a run's config.json linked to /etc/passwd was read, and its first
 * line quoted in the error.
 */
export function readRunFile(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${path} is a symbolic link, not a file of the run`);
    throw e;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error(`${path} is not a regular file`);
    if (info.size > maxBytes) throw new Error(`${path} has ${info.size} bytes, more than ${maxBytes}`);
    const bytes = readFileSync(fd);
    try {
      return utf8Text(bytes);
    } catch {
      throw new Error(`${path} is not UTF-8 text`);
    }
  } finally {
    closeSync(fd);
  }
}
