// The sandboxed BullMQ processor of tournament blocks: it runs in a worker thread of
// `kratzen worker` (one per unit of --concurrency), so the thread renewing job locks never
// waits on a deal. Checkpoints come from Redis by hash (checkpoint-blobs.ts).

import type { SandboxedJob } from 'bullmq';
import type { Agent } from '../../agents/agent.js';
import { loadCheckpoint } from '../../checkpoints/agent-loader.js';
import { playDeal, type DealResult } from '../tournament.js';
import { materializeCheckpoint } from './checkpoint-blobs.js';
import { BLOB_CACHE_ENV, workerBlobStore } from './redis.js';
import { trimCache, useEntry } from './recent-cache.js';
import type { TournamentBlock } from './tournament-jobs.js';

/** Loaded checkpoint agents of this thread, by index hash and rules (greedy, stateless). */
const agents = new Map<string, Agent>();
/**
 * Agents kept beyond those of the job in hand, least recently used dropped (and disposed) first:
 * kept without end, a worker that evaluated checkpoint after checkpoint held every network.
 */
const MAX_KEPT_AGENTS = 8;

export default async function processBlock(job: SandboxedJob<TournamentBlock, DealResult[]>): Promise<DealResult[]> {
  const { config, from, to, checkpoints } = job.data;
  const cacheRoot = process.env[BLOB_CACHE_ENV];
  if (!cacheRoot) throw new Error(`${BLOB_CACHE_ENV} is not set: tournament blocks run in the threads of startWorkers`);
  const blobs = await workerBlobStore();
  const cache = new Map<string, Agent>();
  const inUse = new Set<string>();
  for (const [spec, hash] of Object.entries(checkpoints)) {
    const key = `${hash}/${JSON.stringify(config.rules)}`;
    const agent = agents.get(key) ?? (await loadCheckpoint(await materializeCheckpoint(hash, blobs, cacheRoot), { rules: config.rules, seed: 0 }));
    useEntry(agents, key, agent);
    inUse.add(key);
    cache.set(spec, agent);
  }
  trimCache(agents, MAX_KEPT_AGENTS, (agent) => agent.dispose?.(), inUse);
  const results: DealResult[] = [];
  for (let deal = from; deal < to; deal++) {
    results.push(await playDeal(config, deal, undefined, cache));
    await job.updateProgress(deal - from + 1);
  }
  return results;
}

/** How many checkpoint agents this thread keeps (for tests of MAX_KEPT_AGENTS). */
export function tournamentAgentsKept(): number {
  return agents.size;
}
