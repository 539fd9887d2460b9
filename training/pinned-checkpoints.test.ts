// Pinning the checkpoint a live run's `latest` names, while that run saves and prunes beside us.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../checkpoints/errors.js';
import { pinCheckpoints } from './pinned-checkpoints.js';

/** A folder with the three policy files, each holding `tag`. */
function checkpoint(root: string, name: string, tag: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const file of ['manifest.json', 'model.json', 'weights.bin']) writeFileSync(join(dir, file), tag);
  return dir;
}

describe('pinCheckpoints', () => {
  // `eval --agents runs/x --workers 2` beside a run saving a checkpoint every update failed in 6
  // of 12 tries: "unknown agent .../step-550" (the folder pruned between reading latest and the
  // copy, then played in place) or bad-pointer (pruned between reading latest.json and the
  // manifest it names) [probe, session 44].
  it('reads latest again when the checkpoint it named was pruned before it was copied', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kratzen-pin-'));
    const newer = checkpoint(root, 'step-2', 'two');
    const names = [join(root, 'step-1'), newer]; // step-1 is gone by the time it is looked at
    const pins = await pinCheckpoints(['runs/x'], async () => names.shift() ?? newer);
    try {
      expect(pins.latest.get('runs/x')).toBe(newer);
      const copy = pins.playing.get('runs/x')!;
      expect(copy).not.toBe(newer);
      expect(readFileSync(join(copy, 'weights.bin'), 'utf8')).toBe('two');
    } finally {
      await pins.dispose();
    }
  });

  it('reads latest again when reading it met a checkpoint pruned under the pointer (bad-pointer)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kratzen-pin-'));
    const newer = checkpoint(root, 'step-7', 'seven');
    let reads = 0;
    const pins = await pinCheckpoints(['runs/x'], async () => {
      if (++reads === 1) throw new CheckpointError('bad-pointer', join(root, 'latest.json'), 'its checkpoint step-6 cannot be read: manifest.json is missing');
      return newer;
    });
    try {
      expect(reads).toBe(2);
      expect(readFileSync(join(pins.playing.get('runs/x')!, 'manifest.json'), 'utf8')).toBe('seven');
    } finally {
      await pins.dispose();
    }
  });

  it('gives up after a few tries: a pointer that stays bad is the error, a folder that stays incomplete is played in place', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kratzen-pin-'));
    let reads = 0;
    const bad = pinCheckpoints(['runs/x'], async () => {
      reads++;
      throw new CheckpointError('bad-pointer', join(root, 'latest.json'), 'the manifest of step-1 is not the one it recorded');
    });
    await expect(bad).rejects.toMatchObject({ code: 'bad-pointer' });
    expect(reads).toBeGreaterThan(1);
    expect(reads).toBeLessThan(20);
    const incomplete = join(root, 'step-3');
    mkdirSync(incomplete);
    const pins = await pinCheckpoints(['runs/y'], async () => incomplete);
    expect(pins.playing.get('runs/y')).toBe(incomplete);
    await pins.dispose();
    // Other errors are not retried.
    reads = 0;
    await expect(pinCheckpoints(['runs/z'], async () => (reads++, Promise.reject(new Error('EACCES-like'))))).rejects.toThrow('EACCES-like');
    expect(reads).toBe(1);
    expect(existsSync(join(root, 'step-3'))).toBe(true);
  });
});
