// Atomic file writes: write a temporary file beside the target, flush it, then rename, so a
// reader (or a crash) never sees half a file.

import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirs } from '../checkpoints/durable-fs.js';

let tempCounter = 0;

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  makeDirs(dirname(path));
  // A short name of its own (not the target's plus a suffix): a target name near the file
  // system's limit must not fail only at its temporary file.
  const temp = join(dirname(path), `.tmp-${process.pid}-${tempCounter++}`);
  try {
    const fd = openSync(temp, 'w');
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}
