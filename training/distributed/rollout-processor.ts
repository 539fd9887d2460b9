// The sandboxed BullMQ processor of rollout blocks (rollout-jobs.ts), one per worker thread:
// actors are kept per setup, weights per hash, and the league is rebuilt when a job's list of
// snapshots differs from the one the actor holds.

import type { SandboxedJob } from 'bullmq';
import { RolloutActor } from '../actors.js';
import { decodeArrays } from './arrays.js';
import { workerBlobStore, type BlobStore } from './redis.js';
import { encodeBatch, type RolloutBlock, type RolloutReply } from './rollout-jobs.js';
import { trimCache, useEntry } from './recent-cache.js';

const actors = new Map<string, { actor: RolloutActor; snapshots: string }>();
/**
 * Actors kept, least recently used dropped (and disposed) first: a run asks for one setup, a
 * worker serving runs in turn for the last few. Kept without end, jobs each naming another setup
 * would grow a worker until its networks no longer fit in memory.
 */
const MAX_ACTORS = 2;
const weightsCache = new Map<string, Float32Array[]>();

async function weights(blobs: BlobStore, hash: string): Promise<Float32Array[]> {
  let cached = weightsCache.get(hash);
  if (!cached) {
    cached = decodeArrays(await blobs.get(hash)) as Float32Array[];
    if (!cached.every((a) => a instanceof Float32Array)) throw new Error(`blob ${hash} is not a set of weights`);
    weightsCache.set(hash, cached);
    // The latest weights and a league's worth of snapshots: older entries are not asked for again.
    while (weightsCache.size > 16) weightsCache.delete(weightsCache.keys().next().value!);
  }
  return cached;
}

export default async function processRollout(job: SandboxedJob<RolloutBlock, RolloutReply>): Promise<RolloutReply> {
  const { setup, snapshots, request } = job.data;
  const blobs = await workerBlobStore();
  // The learner's weights first: a job whose weights Redis lacks fails before any actor is built.
  const learnerWeights = await weights(blobs, job.data.weights);
  const key = JSON.stringify(setup);
  const entry = actors.get(key) ?? { actor: await RolloutActor.create(setup), snapshots: '' };
  useEntry(actors, key, entry);
  trimCache(actors, MAX_ACTORS, (old) => old.actor.dispose());
  const snapshotKey = snapshots.map((s) => `${s.name}=${s.weights}`).join(',');
  if (entry.snapshots !== snapshotKey) {
    entry.actor.clearSnapshots();
    for (const s of snapshots) entry.actor.addSnapshot(s.name, await weights(blobs, s.weights));
    entry.snapshots = snapshotKey;
  }
  entry.actor.setWeights(learnerWeights);
  const { batch, stats } = entry.actor.collect(request);
  return { batch: await blobs.putOwned(encodeBatch(batch), String(job.id)), size: batch.size, stats };
}

/** How many actors this thread keeps (for tests of MAX_ACTORS). */
export function rolloutActorsKept(): number {
  return actors.size;
}
