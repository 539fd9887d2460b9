// Checkpoints through Redis by content: the coordinator uploads a checkpoint directory's files
// as blobs plus an index naming them; a worker rebuilds the directory in a local cache keyed by
// the index hash and loads it like any checkpoint (which checks the files against the manifest).

import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { makeDirs } from '../../checkpoints/durable-fs.js';
import { join } from 'node:path';
import { MANIFEST_FILE, NAME_PATTERN } from '../../checkpoints/manifest.js';
import { checkpointFolderOf } from '../../checkpoints/store.js';
import { isBlobHash, type BlobStore } from './redis.js';

interface CheckpointIndex {
  kind: 'kratzen-checkpoint';
  files: Record<string, string>;
}

/** The checkpoint directory `dir` names: itself, or the `latest` of a checkpoint store (or of a training run's). */
export async function resolveCheckpointDir(dir: string): Promise<string> {
  const found = await checkpointFolderOf(dir);
  if (found !== null) return found;
  throw new Error(`${dir} is neither a checkpoint, a checkpoint store nor a training run's folder`);
}

/** Uploads the checkpoint `dir` names; returns the hash of its index. */
export async function uploadCheckpoint(dir: string, blobs: BlobStore): Promise<string> {
  const root = await resolveCheckpointDir(dir);
  const files: Record<string, string> = {};
  for (const name of readdirSync(root).sort()) {
    if (!NAME_PATTERN.test(name) || !statSync(join(root, name)).isFile()) continue;
    files[name] = await blobs.put(readFileSync(join(root, name)));
  }
  const index: CheckpointIndex = { kind: 'kratzen-checkpoint', files };
  return blobs.put(JSON.stringify(index));
}

/** The local directory holding the checkpoint with index `hash`, fetched once per cache. */
export async function materializeCheckpoint(hash: string, blobs: BlobStore, cacheRoot: string): Promise<string> {
  // The hash comes from a job, so it is checked before it names a folder (`../x` would escape the cache).
  if (!isBlobHash(hash)) throw new Error(`not a checkpoint index hash: "${String(hash).slice(0, 80)}"`);
  const dir = join(cacheRoot, hash);
  if (existsSync(join(dir, MANIFEST_FILE))) return dir;
  const index = JSON.parse((await blobs.get(hash)).toString('utf8')) as CheckpointIndex;
  if (index?.kind !== 'kratzen-checkpoint' || typeof index.files !== 'object' || index.files === null) throw new Error(`blob ${hash} is not a checkpoint index`);
  const staging = join(cacheRoot, `.tmp-${hash}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  makeDirs(staging);
  try {
    for (const [name, fileHash] of Object.entries(index.files)) {
      // Names from Redis are untrusted: only plain checkpoint file names, never a path.
      if (!NAME_PATTERN.test(name) || typeof fileHash !== 'string') throw new Error(`checkpoint index ${hash} names a bad file "${name}"`);
      writeFileSync(join(staging, name), await blobs.get(fileHash));
    }
    if (!existsSync(join(staging, MANIFEST_FILE))) throw new Error(`checkpoint index ${hash} has no ${MANIFEST_FILE}`);
    try {
      renameSync(staging, dir);
    } catch (e) {
      // Another worker thread won the race: its copy has the same content.
      if (!existsSync(join(dir, MANIFEST_FILE))) throw e;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}
