// Output folders are checked before any work: a symlink that points nowhere or loops is an
// existing name that cannot be written through, not a missing folder to create (probe round 2:
// `eval --out` ran the whole evaluation, then died with a stack trace on ELOOP; `play --record`
// replaced a dangling link it had promised never to overwrite).

import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entryExists, unwritableFolderReason } from './durable-fs.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kratzen-durable-'));
symlinkSync(path.join(dir, 'loop2'), path.join(dir, 'loop1'));
symlinkSync(path.join(dir, 'loop1'), path.join(dir, 'loop2'));
symlinkSync(path.join(dir, 'nowhere', 'deeper'), path.join(dir, 'dangling'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('unwritableFolderReason', () => {
  it('names a looping or dangling link, also as a parent, and accepts a new folder', () => {
    expect(unwritableFolderReason(path.join(dir, 'loop1'))).toMatch(/ELOOP/);
    expect(unwritableFolderReason(path.join(dir, 'loop1', 'sub'))).toMatch(/ELOOP/);
    expect(unwritableFolderReason(path.join(dir, 'dangling'))).toMatch(/ENOENT/);
    expect(unwritableFolderReason(path.join(dir, 'new', 'folder'))).toBeNull();
  });
  it('refuses a path holding a NUL (taken for a missing folder, it was called writable) [probe round 14]', () => {
    expect(unwritableFolderReason(path.join(dir, 'a\0b'))).toMatch(/NUL/);
  });
});

describe('entryExists', () => {
  it('counts links that point nowhere or loop as existing names', () => {
    expect(entryExists(path.join(dir, 'dangling'))).toBe(true);
    expect(entryExists(path.join(dir, 'loop1'))).toBe(true);
    expect(entryExists(path.join(dir, 'absent'))).toBe(false);
  });
});
