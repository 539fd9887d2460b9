// A run whose files cannot be written (a full disk in the middle of a checkpoint): train()
// throws an OutputError naming runsDir and the checkpoint that resumes it, leaves no temp files
// or lock, and the run resumes once the disk has room again.

import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { selectBackend } from '../agents/index.js';
import { OutputError, writeFileDurable } from '../checkpoints/durable-fs.js';
import { CheckpointStore, checkpointName } from '../checkpoints/index.js';
import { RUN_LOCK_FILE } from './run-lock.js';
import { train } from './trainer.js';

// Wrapped, not replaced: the test makes the writes of one checkpoint fail as on a full disk.
vi.mock('../checkpoints/durable-fs.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../checkpoints/durable-fs.js')>();
  return { ...actual, writeFileDurable: vi.fn(actual.writeFileDurable) };
});

beforeAll(async () => {
  await selectBackend('wasm');
});

const TINY = {
  rules: { players: 3 },
  seed: 7,
  imitationUpdates: 1,
  updates: 2,
  numEnvs: 6,
  rolloutSteps: 40,
  hiddenSizes: [16],
  minibatchSize: 64,
  epochs: 1,
  evalEvery: 0,
  finalEvalDeals: 0,
  checkpointEvery: 1,
  learningRateDecay: 'none' as const,
};

describe('train on a full disk', () => {
  it('throws an OutputError naming runsDir and the checkpoint to resume from, and resumes when there is room', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-full-'));
    const real = vi.mocked(writeFileDurable).getMockImplementation()!;
    const second = checkpointName(2);
    vi.mocked(writeFileDurable).mockImplementation(async (file, data) => {
      if (String(file).includes(`.tmp-${second}-`)) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      }
      return real(file, data);
    });
    let error: unknown;
    try {
      await train({ ...TINY, name: 'full', runsDir: dir }, { verbose: false });
    } catch (e) {
      error = e;
    } finally {
      vi.mocked(writeFileDurable).mockImplementation(real);
    }
    expect(error).toBeInstanceOf(OutputError);
    expect(error).toMatchObject({ field: 'runsDir', reason: expect.stringMatching(/no space left on the device \(ENOSPC\).*keeps checkpoint step-0+1\b/) });
    const runDir = join(dir, 'full');
    expect(existsSync(join(runDir, RUN_LOCK_FILE))).toBe(false);
    const checkpoints = readdirSync(join(runDir, 'checkpoints'));
    expect(checkpoints.filter((name) => name.startsWith('.tmp-'))).toEqual([]);
    expect(await new CheckpointStore(join(runDir, 'checkpoints'), { rules: TINY.rules }).pointer('latest')).toBe(checkpointName(1));

    const resumed = await train({ ...TINY, name: 'full', runsDir: dir }, { verbose: false, resume: true });
    expect(resumed.updates).toBe(3);
    expect(resumed.metrics.map((m) => m.update)).toEqual([1, 2, 3]);
  });

  it('a run folder that cannot be made is an OutputError too, and nothing is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-full-'));
    const tooLong = 'x'.repeat(300);
    await expect(train({ ...TINY, name: 'r', runsDir: join(dir, tooLong) }, { verbose: false })).rejects.toMatchObject({
      name: 'OutputError',
      field: 'runsDir',
      reason: expect.stringMatching(/ENAMETOOLONG/),
    });
    expect(readdirSync(dir)).toEqual([]);
  });
});
