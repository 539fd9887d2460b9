// The worker side of runTournament: plays its share of the deals and posts each result.

import { parentPort, workerData } from 'node:worker_threads';
import type { Agent } from '../agents/index.js';
import { AmountOverflowError, ValidationError } from '../env/rules/index.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { playDeal, type CheckpointLoader, type TournamentConfig, type WorkerFailure } from './tournament.js';

const { config, deals, checkpointModule } = workerData as { config: TournamentConfig; deals: number[]; checkpointModule?: string };

try {
  const loadCheckpoint: CheckpointLoader | undefined = checkpointModule
    ? ((await import(checkpointModule)) as { loadCheckpoint: CheckpointLoader }).loadCheckpoint
    : undefined;
  const cache = new Map<string, Agent>();
  for (const deal of deals) parentPort!.postMessage(await playDeal(config, deal, loadCheckpoint, cache));
} catch (e) {
  const failure: WorkerFailure = { error: (e as Error).message };
  if (e instanceof ValidationError) failure.invalid = { error: e.error, field: e.field, reason: e.reason };
  if (e instanceof AmountOverflowError) failure.overflowHand = e.hand;
  if (e instanceof CheckpointError) failure.checkpoint = { code: e.code, path: e.path, reason: e.reason };
  parentPort!.postMessage(failure);
}
