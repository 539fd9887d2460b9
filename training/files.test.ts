// Atomic writes of files that belong together: on a full disk, or with a target name taken by a
// folder, every target keeps what it held (an earlier report stays whole) and no temp file is left.

import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeFilesAtomic } from './files.js';

// Wrapped, not replaced: a test makes one write fail as on a full disk.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, writeSync: vi.fn(actual.writeSync) };
});

const { writeSync: realWriteSync } = await vi.importActual<typeof import('node:fs')>('node:fs');

afterEach(() => {
  vi.mocked(fs.writeSync).mockReset();
});

function earlierReport(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kratzen-files-'));
  writeFileSync(join(dir, 'result.json'), 'old result\n');
  writeFileSync(join(dir, 'report.html'), 'old report\n');
  return dir;
}

describe('writeFilesAtomic', () => {
  it('writes every file', () => {
    const dir = earlierReport();
    writeFilesAtomic([
      [join(dir, 'result.json'), 'new result\n'],
      [join(dir, 'sub', 'report.html'), new TextEncoder().encode('new report\n')],
    ]);
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('new result\n');
    expect(readFileSync(join(dir, 'sub', 'report.html'), 'utf8')).toBe('new report\n');
    expect(readdirSync(dir).sort()).toEqual(['report.html', 'result.json', 'sub']);
  });

  it('a write the disk takes only part of is finished or fails, never renamed into place cut short (review)', () => {
    const dir = earlierReport();
    // write(2) on a filling disk: a few bytes taken, then no room at all.
    vi.mocked(fs.writeSync)
      .mockImplementationOnce((fd: number, data: any) => realWriteSync(fd, data as Uint8Array, 0, 3))
      .mockImplementationOnce(() => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      });
    expect(() => writeFilesAtomic([[join(dir, 'result.json'), 'new result\n']])).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('old result\n');
    expect(readdirSync(dir).sort()).toEqual(['report.html', 'result.json']);
    // A short write followed by room for the rest gives the whole file.
    vi.mocked(fs.writeSync).mockImplementationOnce((fd: number, data: any) => realWriteSync(fd, data as Uint8Array, 0, 3));
    writeFilesAtomic([[join(dir, 'result.json'), 'new result\n']]);
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('new result\n');
  });

  it('a write that fails on the last file changes no file and leaves no temp (eval deleted an earlier report) [probe round 3]', () => {
    const dir = earlierReport();
    // The first file is written; the disk is full at the second.
    vi.mocked(fs.writeSync)
      .mockImplementationOnce(realWriteSync)
      .mockImplementationOnce(() => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      });
    expect(() =>
      writeFilesAtomic([
        [join(dir, 'result.json'), 'new result\n'],
        [join(dir, 'report.html'), 'new report\n'],
      ]),
    ).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('old result\n');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toBe('old report\n');
    expect(readdirSync(dir).sort()).toEqual(['report.html', 'result.json']);
  });

  it('a target that is a folder fails before any other target changes', () => {
    const dir = earlierReport();
    mkdirSync(join(dir, 'other.html'));
    expect(() =>
      writeFilesAtomic([
        [join(dir, 'result.json'), 'new result\n'],
        [join(dir, 'other.html'), 'new report\n'],
      ]),
    ).toThrow(expect.objectContaining({ code: 'EISDIR' }));
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('old result\n');
    expect(readdirSync(dir).sort()).toEqual(['other.html', 'report.html', 'result.json']);
  });

  // `play --record` in a shared folder: another user planted `.tmp-<pid>-0 -> victim` and the
  // record overwrote the victim, the target left a link to it [web probe, session 42].
  it('never writes through a link planted where its temporary file could go, nor under a name counted from the pid', () => {
    const dir = earlierReport();
    writeFileSync(join(dir, 'victim'), 'precious\n');
    for (let n = 0; n < 64; n++) symlinkSync(join(dir, 'victim'), join(dir, `.tmp-${process.pid}-${n}`));
    const before = new Set(readdirSync(dir));
    writeFilesAtomic([[join(dir, 'result.json'), 'new result\n']]);
    expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('precious\n');
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe('new result\n');
    expect(lstatSync(join(dir, 'result.json')).isFile()).toBe(true);
    expect(readdirSync(dir).filter((name) => !before.has(name))).toEqual([]);
  });
});
