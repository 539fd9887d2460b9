// Checkpoint files past 2 GiB (the optimizer state of a big network): read and hashed in chunks
// that one read() and one hash update accept.

import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { readRegularFile } from './safe-read.js';
import { sha256 } from './manifest.js';

afterEach(() => vi.restoreAllMocks());

describe('readRegularFile', () => {
  it('refuses a socket as a file that is no regular file, a CheckpointError (the OS\'s ENXIO message, with the path it resolved, went out) [bridge probe, session 37]', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-read-'));
    const file = join(dir, 'weights.bin');
    const server = createServer().listen(file);
    await once(server, 'listening');
    try {
      await expect(readRegularFile(file, dir, { exactBytes: 4 })).rejects.toMatchObject({ name: 'CheckpointError', code: 'bad-file', reason: `${file} is not a regular file` });
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a file past 2 GiB in reads of under 2^31 bytes each (one read of it aborted Node) [probe round 6]', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-read-'));
    const file = join(dir, 'optimizer.bin');
    writeFileSync(file, '');
    const size = 2 ** 31 + 8;
    truncateSync(file, size); // sparse: no disk used
    // The reads themselves are counted, not made: 2 GiB of zeros need not pass through memory.
    const probe = await open(file);
    const FileHandle = Object.getPrototypeOf(probe);
    await probe.close();
    const lengths: number[] = [];
    vi.spyOn(FileHandle, 'read').mockImplementation(async (...args: unknown[]) => {
      lengths.push(args[2] as number);
      return { bytesRead: args[2] as number, buffer: args[0] };
    });
    const data = await readRegularFile(file, dir, { exactBytes: size });
    expect(data.length).toBe(size);
    expect(lengths.reduce((a, b) => a + b, 0)).toBe(size);
    expect(Math.max(...lengths)).toBeLessThan(2 ** 31);
    rmSync(dir, { recursive: true });
  });
});

describe('sha256', () => {
  it('hashes 2 GiB and more in updates of under 2^31 bytes ("data is too long" refused the file) [probe round 6]', () => {
    const Hash = Object.getPrototypeOf(createHash('sha256'));
    const lengths: number[] = [];
    const update = vi.spyOn(Hash, 'update').mockImplementation(function (this: unknown, data: unknown) {
      lengths.push((data as Uint8Array).byteLength);
      return this;
    });
    sha256(new Uint8Array(2 ** 31 + 8)); // untouched zero pages: not in memory
    expect(update).toHaveBeenCalled();
    expect(lengths.reduce((a, b) => a + b, 0)).toBe(2 ** 31 + 8);
    expect(Math.max(...lengths)).toBeLessThan(2 ** 31);
    // And the same digest as one update, for a file of any size.
    vi.restoreAllMocks();
    const data = new Uint8Array(1000).map((_, i) => i * 7);
    expect(sha256(data)).toBe(createHash('sha256').update(data).digest('hex'));
  });
});
