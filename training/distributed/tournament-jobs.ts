// Duplicate tournaments over BullMQ: the coordinator splits the deals into blocks (jobs), each
// worker plays its blocks with `playDeal` exactly as one machine would, and the coordinator puts
// each block's deals back by index and summarizes. A block retried after a crash or a stalled
// lock overwrites the same indices, so no deal is lost or counted twice, and the result equals
// `runTournament`'s for the same config and seed.

import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { createGame } from '../../env/rules/index.js';
import { checkAgentSpec, latestCheckpoints, maxDealHands, summarize, type DealResult, type TournamentConfig, type TournamentResult } from '../tournament.js';
import { loadCheckpoint } from '../../checkpoints/agent-loader.js';
import { uploadCheckpoint } from './checkpoint-blobs.js';
import { distributedRunFailure, runJobs } from './jobs.js';
import { BlobStore, KEY_PREFIX, TOURNAMENT_QUEUE, closeRedisClients, quietErrors, type RedisConnection } from './redis.js';

/** One job: deals [from, to) of `config`; checkpoint agents by spec -> checkpoint index hash. */
export interface TournamentBlock {
  run: string;
  config: TournamentConfig;
  from: number;
  to: number;
  checkpoints: Record<string, string>;
}

export interface DistributedOptions {
  connection: RedisConnection;
  /** Deals per job. @default 8 */
  blockDeals?: number;
  /** Tries per job before the run fails (a worker killed mid-job costs one). @default 5 */
  attempts?: number;
  onDeal?: (done: number, total: number) => void;
  /** How long Redis may stop answering before the run fails. @default REDIS_SILENCE_LIMIT_MS */
  silenceLimitMs?: number;
  /** Interrupts the run: its queued jobs are taken back, and it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Runs `config` on whatever workers take jobs from Redis; resolves with the merged result. */
export async function runTournamentOnRedis(config: TournamentConfig, options: DistributedOptions): Promise<TournamentResult> {
  if (config.agents.length < 2) throw new Error('a tournament needs at least two agents');
  if (!Number.isInteger(config.deals) || config.deals < 2) throw new Error('a tournament needs at least two deals (for intervals)');
  const size = options.blockDeals ?? 8;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`blockDeals must be a positive integer, got ${size}`);
  const players = createGame(config.rules).numPlayers;
  const blobs = new BlobStore(options.connection, options.silenceLimitMs);
  await blobs.connect();
  const prefix = KEY_PREFIX;
  const queue = quietErrors(new Queue<TournamentBlock, DealResult[]>(TOURNAMENT_QUEUE, { connection: options.connection, prefix }));
  const events = quietErrors(new QueueEvents(TOURNAMENT_QUEUE, { connection: options.connection, prefix }));
  try {
    const checkpoints: Record<string, string> = {};
    // A store or a run plays the checkpoint its latest names now, as on one machine (and that one
    // is checked and uploaded, not a later one).
    const latest = await latestCheckpoints(config.agents);
    for (const spec of new Set(config.agents)) {
      const folder = latest.get(spec) ?? spec;
      // Checked here, as a local run checks it (a checkpoint loaded for these rules), so a bad
      // spec fails at once and not on every worker: an empty folder or another game's
      // checkpoint went out as jobs that failed five times each, or waited for workers.
      if (await checkAgentSpec(folder, config.rules, loadCheckpoint)) checkpoints[spec] = await uploadCheckpoint(folder, blobs).catch((e: unknown) => Promise.reject(distributedRunFailure(e)));
    }
    await events.waitUntilReady();
    const run = randomUUID();
    const blocks: TournamentBlock[] = [];
    for (let from = 0; from < config.deals; from += size) blocks.push({ run, config, from, to: Math.min(config.deals, from + size), checkpoints });
    const progress = new Map<string, number>();
    const report = () => options.onDeal?.([...progress.values()].reduce((a, b) => a + b, 0), config.deals);
    const returned = await runJobs<TournamentBlock, DealResult[]>(
      queue,
      events,
      blocks.map((block, k) => ({ id: `${run}-${k}`, data: block })),
      {
        attempts: options.attempts,
        silenceLimitMs: options.silenceLimitMs,
        signal: options.signal,
        // A retried job reports from its first deal again: keep each job's highest count.
        onProgress: (jobId, done) => {
          progress.set(jobId, Math.max(progress.get(jobId) ?? 0, done));
          report();
        },
      },
    );
    const results = mergedDeals(returned, blocks, config, run);
    options.onDeal?.(config.deals, config.deals);
    return summarize(config, players, results, latest);
  } finally {
    await closeRedisClients([events, queue, blobs]);
  }
}

/** The jobs' deals by index, each checked (checkedDeal); a reply that is none fails the run (distributedRunFailure). */
function mergedDeals(returned: DealResult[][], blocks: TournamentBlock[], config: TournamentConfig, run: string): DealResult[] {
  try {
    const maxHands = maxDealHands(config.rules);
    const results: DealResult[] = new Array(config.deals);
    returned.forEach((deals, k) => {
      const block = blocks[k]!;
      // A reply that is no list is named as such ("returned 9 deals" was a string's length).
      if (!Array.isArray(deals)) throw new Error(`job ${run}-${k} returned ${JSON.stringify(deals)?.slice(0, 40) ?? String(deals)}, not a list of ${block.to - block.from} deals`);
      if (deals.length !== block.to - block.from) throw new Error(`job ${run}-${k} returned ${deals.length} deals, not ${block.to - block.from}`);
      for (const deal of deals) {
        if (!(Number.isInteger(deal?.deal) && deal.deal >= block.from && deal.deal < block.to)) throw new Error(`job ${run}-${k} returned deal ${deal?.deal} outside [${block.from}, ${block.to})`);
        results[deal.deal] = checkedDeal(deal, config.agents.length, maxHands, `job ${run}-${k}`);
      }
    });
    for (let deal = 0; deal < config.deals; deal++) if (!results[deal]) throw new Error(`deal ${deal} is missing from the jobs' results`);
    return results;
  } catch (e) {
    throw distributedRunFailure(e);
  }
}

/**
 * A deal's result as a worker returned it, refused unless it is one: a forged or damaged one
 * (NaN, 1e308 or a string for a number, too few agents, negative hands or more than the deal
 * can play: 2^53 each summed past exact integers) made the tournament's summary
 * NaN, or wrote "0many" hands into result.json, and exited 0. Only its own fields are kept.
 */
function checkedDeal(deal: DealResult, numAgents: number, maxHands: number, job: string): DealResult {
  const chips = deal.chipsPerHand;
  // No balance passes 2^53 units (docs/rules.md §3), nor a change per hand; 1e308 in each of two
  // deals summed to Infinity, which the summary printed as null.
  if (!Array.isArray(chips) || chips.length !== numAgents || !chips.every((c) => typeof c === 'number' && Math.abs(c) <= Number.MAX_SAFE_INTEGER)) {
    throw new Error(`${job} returned deal ${deal.deal} with chipsPerHand ${JSON.stringify(chips)?.slice(0, 80)}: expected ${numAgents} numbers within ±(2^53 - 1)`);
  }
  if (!Number.isSafeInteger(deal.hands) || deal.hands < 1 || deal.hands > maxHands) {
    throw new Error(`${job} returned deal ${deal.deal} with hands ${JSON.stringify(deal.hands)?.slice(0, 40)}: expected an integer from 1 to ${maxHands}`);
  }
  return { deal: deal.deal, chipsPerHand: [...chips], hands: deal.hands };
}
