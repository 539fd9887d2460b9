// Reading a file the user names on the command line (a record, a training config) without
// trusting it to end: `/dev/zero`, an endless pipe or a huge file would otherwise be read until
// memory runs out. Pipes and `-` (stdin) are allowed, since shells hand them out
// (`kratzen replay <(...)`); whatever the source, reading stops one byte past the limit.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ValidationError } from '../env/rules/index.js';
import { duplicateKeyAt, scanFrame, utf8Text, type RepeatedKey } from '../env/json-scan.js';

/** Largest record `kratzen replay` reads (a 100,000-hand record is about 160 MB). */
export const MAX_RECORD_BYTES = 256 << 20;

const CHUNK_BYTES = 1 << 20;

/**
 * The UTF-8 text of `path` ('-' is stdin), without a leading byte-order mark. Throws a
 * ValidationError (`error`, naming `field`) when it cannot be read, holds more than `maxBytes`,
 * or is not UTF-8.
 */
export function readInputText(path: string, field: string, maxBytes: number, error = 'invalid arguments'): string {
  return inputText(readInputBytes(path, field, maxBytes, error), path, field, error);
}

/** The text of bytes readInputBytes gave from `path` (utf8Text); bytes that are not UTF-8 are a ValidationError naming `field`. */
export function inputText(bytes: Buffer, path: string, field: string, error = 'invalid arguments'): string {
  try {
    // The decoder drops a leading byte-order mark (editors on Windows write one; JSON.parse refuses it).
    return utf8Text(bytes);
  } catch {
    throw new ValidationError(error, field, `${path === '-' ? 'stdin' : path} is not UTF-8 text`);
  }
}

/** The bytes of `path` ('-' is stdin), with readInputText's checks. */
export function readInputBytes(path: string, field: string, maxBytes: number, error = 'invalid arguments'): Buffer {
  let fd: number;
  try {
    fd = path === '-' ? 0 : openSync(path, 'r');
  } catch (e) {
    throw new ValidationError(error, field, `cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const tooLarge = () => new ValidationError(error, field, `${path} is larger than ${maxBytes} bytes`);
    const info = fd === 0 ? null : fstatSync(fd);
    if (info?.isDirectory()) throw new ValidationError(error, field, `${path} is a directory`);
    if (info?.isFile() && info.size > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const bytesRead = readChunk(fd, chunk);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new ValidationError(error, field, `cannot read ${path}: ${(e as Error).message}`);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/** One read; a non-blocking stdin with nothing yet to read is waited for, not treated as the end. */
function readChunk(fd: number, into: Buffer): number {
  for (;;) {
    try {
      return readSync(fd, into, 0, into.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * JSON text whose objects and arrays are packed closer than one per `MIN_BYTES_PER_CONTAINER`
 * characters is refused before parsing: parsed, each costs some 70 bytes of memory, so 250 MB of
 * `[],` took 6.6 GB (and a small heap's process died). A record's densest part, its actions
 * (`{"seat":1,"action":"play Kh"},`), has one per ~30 bytes.
 */
export const MIN_BYTES_PER_CONTAINER = 12;

/** Why `text` (decoded from `bytes` by inputText) holds too many objects and arrays for its size (outside strings), or null. */
export function denseJsonReason(bytes: Uint8Array, text: string): string | null {
  const allowed = Math.floor(text.length / MIN_BYTES_PER_CONTAINER) + 1024;
  if (!scanFrame(bytes, allowed, Infinity, Infinity)) return null;
  return `more than ${allowed} objects and arrays in ${text.length} characters: at most one per ${MIN_BYTES_PER_CONTAINER} characters is read`;
}

/** The first key an object of `text` (JSON, already parsed) gives twice, and its path, or null (env/json-scan.ts). */
export function repeatedKeyIn(text: string): RepeatedKey | null {
  return duplicateKeyAt(Buffer.from(text, 'utf8'));
}
