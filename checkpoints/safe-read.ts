// Reading a checkpoint's files without trusting the folder: only regular files (a FIFO or device
// named like a checkpoint file would block or never end), never through a symlink, and never
// more bytes than the manifest promises, checked before anything is read.

import { constants as bufferLimits } from 'node:buffer';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { duplicateKeyAt, repeatedKeyReason, utf8Text } from '../env/json-scan.js';
import { CheckpointError, type CheckpointErrorCode } from './errors.js';

/** Largest manifest or pointer file read (they are a few KiB). */
export const MAX_METADATA_BYTES = 1 << 20;
/** Largest file read: what one Buffer may hold. */
export const MAX_FILE_BYTES = bufferLimits.MAX_LENGTH;
/**
 * Bytes asked of one read: a length past 2^31 - 1 failed a native assertion in Node, which
 * aborted the process (a checkpoint listing a 2 GiB extra).
 */
const READ_CHUNK_BYTES = 1 << 28;

/**
 * Reads `file` (in checkpoint `where`) when it is a regular file of exactly `exactBytes` (or at
 * most `maxBytes`). Throws CheckpointError `missing-file` when absent (or `where` is not a folder),
 * `hash-mismatch` when the size is wrong, `bad-file` when it is not a regular file.
 */
export async function readRegularFile(file: string, where: string, limit: { exactBytes?: number; maxBytes?: number }): Promise<Buffer> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CheckpointError('missing-file', where, `${file} is missing`);
    // A file (or FIFO) named as the checkpoint: the OS's message named a file inside it.
    if (code === 'ENOTDIR') throw new CheckpointError('missing-file', where, `not a folder: a checkpoint is a folder holding ${path.basename(file)}`);
    if (code === 'ELOOP') throw new CheckpointError('bad-file', where, `${file} is a symbolic link`);
    // A socket fails to open before the check below: the OS's message (with the path it resolved)
    // reached bridge clients as invalid_params.
    if (code === 'ENXIO') throw new CheckpointError('bad-file', where, `${file} is not a regular file`);
    if (code === 'EACCES' || code === 'EPERM') throw new CheckpointError('bad-file', where, `${file} cannot be read (permission denied)`);
    throw e;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new CheckpointError('bad-file', where, `${file} is not a regular file`);
    if (limit.exactBytes !== undefined && stat.size !== limit.exactBytes) {
      throw new CheckpointError('hash-mismatch', where, `${file} has ${stat.size} bytes, the manifest says ${limit.exactBytes}`);
    }
    if (limit.maxBytes !== undefined && stat.size > limit.maxBytes) {
      throw new CheckpointError('bad-manifest', where, `${file} has ${stat.size} bytes, more than ${limit.maxBytes}`);
    }
    if (stat.size > MAX_FILE_BYTES) throw new CheckpointError('bad-manifest', where, `${file} has ${stat.size} bytes, more than a file of a checkpoint may hold (${MAX_FILE_BYTES})`);
    const data = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const { bytesRead } = await handle.read(data, read, Math.min(stat.size - read, READ_CHUNK_BYTES), read);
      if (bytesRead === 0) throw new CheckpointError('hash-mismatch', where, `${file} shrank while it was read`);
      read += bytesRead;
    }
    return data;
  } finally {
    await handle.close();
  }
}

/**
 * The JSON of a checkpoint's file `name` (manifest.json, model.json, a pointer), refused with
 * CheckpointError `code` when it is not UTF-8 JSON or an object gives a key twice: JSON.parse
 * keeps the last one, where a person or another reader takes the first (a manifest's second
 * `sha256` would be the one checked). The message never quotes the file, which may be any file
 * a client names.
 */
export function parseCheckpointJson(bytes: Uint8Array, name: string, where: string, code: CheckpointErrorCode): unknown {
  let json: unknown;
  try {
    json = JSON.parse(utf8Text(bytes));
  } catch {
    throw new CheckpointError(code, where, `${name} is not UTF-8 JSON`);
  }
  const twice = duplicateKeyAt(bytes);
  if (twice !== null) throw new CheckpointError(code, where, `${name}: ${repeatedKeyReason(twice)}`);
  return json;
}
