// File writes that survive a crash: data is fsynced before it is renamed into place, and the
// directory is fsynced after, so a name never points at a half-written file or directory.

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
