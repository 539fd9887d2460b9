// Checkpoints through Redis by content: the coordinator uploads a checkpoint directory's files
// as blobs plus an index naming them; a worker rebuilds the directory in a local cache keyed by
// the index hash and loads it like any checkpoint (which checks the files against the manifest).

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { makeDirs } from '../../checkpoints/durable-fs.js';
import { join } from 'node:path';
import { MANIFEST_FILE, MODEL_FILE, NAME_PATTERN, WEIGHTS_FILE, type CheckpointManifest } from '../../checkpoints/manifest.js';
import { checkPolicyFileSizes, readManifest } from '../../checkpoints/checkpoint.js';
import { CheckpointError } from '../../checkpoints/errors.js';
import { MAX_METADATA_BYTES } from '../../checkpoints/safe-read.js';
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

/**
 * The local directory holding the checkpoint with index `hash`, fetched once per cache. The index
 * and the blobs come from Redis, so the manifest is fetched first, bounded and checked, and then
 * only the policy's files it lists (all a worker loads: agent-loader.ts reads policies only),
 * each refused unread unless the index names the manifest's hash of it and its size is the
 * manifest's. A forged index naming one 4 MB blob under 250 names had each job write 1 GB,
 * kept in the cache for the worker's life once a manifest.json was among them.
 */
export async function materializeCheckpoint(hash: string, blobs: BlobStore, cacheRoot: string): Promise<string> {
  // The hash comes from a job, so it is checked before it names a folder (`../x` would escape the cache).
  if (!isBlobHash(hash)) throw new Error(`not a checkpoint index hash: "${String(hash).slice(0, 80)}"`);
  const dir = join(cacheRoot, hash);
  if (existsSync(join(dir, MANIFEST_FILE))) return dir;
  let index: CheckpointIndex;
  try {
    index = JSON.parse((await blobs.get(hash, { max: MAX_METADATA_BYTES })).toString('utf8')) as CheckpointIndex;
  } catch (e) {
    if (e instanceof SyntaxError) throw new Error(`blob ${hash} is not a checkpoint index`);
    throw e;
  }
  if (index?.kind !== 'kratzen-checkpoint' || typeof index.files !== 'object' || index.files === null) throw new Error(`blob ${hash} is not a checkpoint index`);
  const fileHash = (name: string): string => {
    const named = Object.hasOwn(index.files, name) ? index.files[name] : undefined;
    if (typeof named !== 'string') throw new Error(`checkpoint index ${hash} has no ${name}`);
    return named;
  };
  const staging = join(cacheRoot, `.tmp-${hash}-${process.pid}-${randomBytes(8).toString('hex')}`);
  makeDirs(staging);
  try {
    writeFileSync(join(staging, MANIFEST_FILE), await blobs.get(fileHash(MANIFEST_FILE), { max: MAX_METADATA_BYTES }));
    let manifest: CheckpointManifest;
    try {
      manifest = (await readManifest(staging)).manifest;
      checkPolicyFileSizes(staging, manifest);
    } catch (e) {
      // Named by the index, not by the staging folder (a temporary name no one can look up).
      throw e instanceof CheckpointError ? new Error(`checkpoint index ${hash}: bad ${MANIFEST_FILE}: ${e.reason}`) : e;
    }
    for (const name of [MODEL_FILE, WEIGHTS_FILE]) {
      const listed = manifest.files[name]!;
      // A blob's hash is the SHA-256 of its bytes, as the manifest's is: the one names the other.
      if (fileHash(name) !== listed.sha256) throw new Error(`checkpoint index ${hash}: its ${name} is not the one the manifest lists`);
      writeFileSync(join(staging, name), await blobs.get(listed.sha256, { exact: listed.bytes }));
    }
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
