// Checkpoints fetched from Redis by workers: the index hash a job names is untrusted input.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { materializeCheckpoint, resolveCheckpointDir } from './checkpoint-blobs.js';
import { CheckpointStore, RUN_STORE_FOLDER } from '../../checkpoints/store.js';
import type { BlobStore } from './redis.js';

it('refuses a job hash that is not a blob hash before it names a folder (no escape from the cache)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kratzen-blobs-'));
  const cache = join(root, 'cache');
  mkdirSync(cache);
  // A checkpoint-looking folder outside the cache: '../outside' would have been returned as is.
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'outside', 'manifest.json'), '{}');
  let fetched = 0;
  const blobs = { get: async () => (fetched++, Buffer.from('{}')) } as unknown as BlobStore;
  for (const hash of ['../outside', `${'a'.repeat(63)}/`, 'A'.repeat(64), '']) {
    await expect(materializeCheckpoint(hash, blobs, cache)).rejects.toThrow(/not a checkpoint index hash/);
  }
  expect(fetched).toBe(0);
  // A well-formed hash goes on to the blob store (whose blob here is no checkpoint index).
  await expect(materializeCheckpoint('a'.repeat(64), blobs, cache)).rejects.toThrow(/not a checkpoint index/);
  expect(fetched).toBe(1);
});

it("uploads what a checkpoint, a store or a training run's folder names: the checkpoint that plays", async () => {
  // `eval --redis --agents runs/x` named the run, whose store is its checkpoints/ (as without Redis).
  const root = mkdtempSync(join(tmpdir(), 'kratzen-blobs-'));
  const store = join(root, 'run', RUN_STORE_FOLDER);
  const checkpoint = join(store, 'step-000000000001');
  cpSync(join(import.meta.dirname, '..', '..', 'checkpoints/pretrained/didactic4-p4/checkpoint'), checkpoint, { recursive: true });
  await new CheckpointStore(store, { rules: {} }).setLatest('step-000000000001');
  for (const dir of [checkpoint, store, join(root, 'run')]) expect(await resolveCheckpointDir(dir)).toBe(checkpoint);
  await expect(resolveCheckpointDir(root)).rejects.toThrow(/neither a checkpoint, a checkpoint store nor a training run's folder/);
  // The pointer's record of the manifest is checked, as loading the store checks it.
  writeFileSync(join(store, 'latest.json'), JSON.stringify({ checkpoint: 'step-000000000001', step: 1, manifestSha256: 'a'.repeat(64) }));
  await expect(resolveCheckpointDir(store)).rejects.toMatchObject({ name: 'CheckpointError', code: 'bad-pointer' });
});
