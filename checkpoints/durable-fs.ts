// File writes that survive a crash: data is fsynced before it is renamed into place, and the
// directory is fsynced after, so a name never points at a half-written file or directory.

import { closeSync, existsSync, lstatSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

let tempCounter = 0;

/** Writes a new file (failing if it exists) and fsyncs it before returning. */
export async function writeFileDurable(file: string, data: Uint8Array | string): Promise<void> {
  const handle = await open(file, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Fsyncs a directory, making renames and new entries in it durable. */
/**
 * Writes all of `bytes` to `fd`: one write(2) may take only part of them (a disk that fills up),
 * the rest then dropped without an error; the write that finds no room at all throws.
 */
export function writeAllSync(fd: number, bytes: Uint8Array): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (e) {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic there.
    if (!['EISDIR', 'EINVAL', 'EPERM', 'EBADF'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
  } finally {
    await handle.close();
  }
}

/** Replaces `file` atomically: readers see the old content or the new, never a mix. */
export async function replaceFileAtomic(file: string, data: Uint8Array | string): Promise<void> {
  const temp = `${file}.tmp-${process.pid}-${tempCounter++}`;
  try {
    await writeFileDurable(temp, data);
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  await syncDir(path.dirname(file));
}

/**
 * Creates `dir` and its missing parents, one level at a time. Node's own recursive mkdir spins
 * forever where a level exists but refuses children with ENOENT (anything under /proc); here
 * every failure is thrown once, with the level that failed in the error's `path`.
 */
export function makeDirs(dir: string): void {
  const absolute = path.resolve(dir);
  const missing: string[] = [];
  for (let level = absolute; ; level = path.dirname(level)) {
    let stats;
    try {
      stats = statSync(level);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(level) === level) throw e;
      missing.push(level);
      continue;
    }
    if (!stats.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${level}'`), { code: 'ENOTDIR', path: level });
    break;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(level).isDirectory()) throw e;
    }
  }
}

/**
 * Whether a directory entry named `p` exists, a symlink counting as one even when it points
 * nowhere or in a loop (existsSync follows links and calls those missing).
 */
export function entryExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why files could not be written in folder `dir` (created if missing), or null when they can:
 * checked before long work whose results would otherwise be lost at the first write. Creates
 * nothing: it probes the folder, or the nearest existing one above it, with a file it removes.
 */
export function unwritableFolderReason(dir: string): string | null {
  // No file name holds a NUL: the walk below took Node's refusal for a missing folder and called
  // the path writable, and the run then failed on it with a stack trace.
  if (dir.includes('\0')) return 'a path holds no NUL character';
  let at = path.resolve(dir);
  const missing: string[] = [];
  try {
    // A dangling or looping link is an entry, not a missing name: statSync below names its error.
    while (!entryExists(at) && path.dirname(at) !== at) {
      missing.push(path.basename(at));
      at = path.dirname(at);
    }
    if (!statSync(at).isDirectory()) return `${at} is a file, not a folder (ENOTDIR)`;
    const long = missing.find((name) => Buffer.byteLength(name) > 255);
    if (long !== undefined) return `${long.slice(0, 40)}...: a name in the path is too long (ENAMETOOLONG)`;
    const probe = path.join(at, `.write-probe-${process.pid}-${tempCounter++}`);
    try {
      closeSync(openSync(probe, 'wx'));
    } catch (e) {
      return `no file can be created in ${at}: ${fsErrorReason(e, false)}`;
    }
    rmSync(probe, { force: true });
    return null;
  } catch (e) {
    return fsErrorReason(e);
  }
}

/** One sentence for a failed file-system call: what was refused, where, and the OS's code. */
export function fsErrorReason(e: unknown, withPath = true): string {
  const error = e as NodeJS.ErrnoException;
  const what: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOTDIR: 'a part of the path is a file, not a directory',
    EEXIST: 'already exists',
    EISDIR: 'is a directory',
    ENAMETOOLONG: 'a name in the path is too long',
    ENOSPC: 'no space left on the device',
    EFBIG: 'the file would pass the size limit',
    ELOOP: 'too many symbolic links',
  };
  const reason = (error.code && what[error.code]) ?? error.message;
  // A rename names its source first, a temp file the user never chose: the target is what failed.
  const where = (error as { dest?: string }).dest ?? error.path;
  return `${withPath && where ? `${where}: ` : ''}${reason}${error.code ? ` (${error.code})` : ''}`;
}

/** Whether `e` came from a file-system call (Node's system errors name the call and the OS's code). */
export function isFileSystemError(e: unknown): e is NodeJS.ErrnoException {
  const error = e as NodeJS.ErrnoException;
  return e instanceof Error && typeof error.syscall === 'string' && typeof error.code === 'string';
}

/**
 * Output that could not be written (a full disk, no permission, a name taken): `field` names the
 * flag or config field that chose where it goes. The CLI reports it as `cannot write output`, exit 3.
 */
export class OutputError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`cannot write output: ${field}: ${reason}`);
    this.name = 'OutputError';
  }
}
