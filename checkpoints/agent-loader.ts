// Checkpoints as seatable agents: the loader that agents/registry.ts, the CLI and tournament
// workers (which import this module by URL) use for an agent spec that is a directory.

import { existsSync, lstatSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Agent } from '../agents/agent.js';
import { unknownAgent, type AgentContext } from '../agents/registry.js';
import type { LoadedCheckpoint, RulesInput } from './checkpoint.js';
import { MANIFEST_FILE } from './manifest.js';
import { loadCheckpointOrLatest } from './store.js';
import { CheckpointError } from './errors.js';
import { SharedModels } from './shared-models.js';

/** This process's (or worker thread's) networks of checkpoints loaded as agents: only played, never trained. */
const SHARED_MODELS = new SharedModels();

/** How many networks this thread has built for checkpoints loaded as agents (the rest reused one). */
export function sharedNetworksBuilt(): number {
  return SHARED_MODELS.networksBuilt;
}

/**
 * The policy of `dir`, a checkpoint, a store (whose `latest` is taken) or a training run's folder
 * (its store's `latest`), for `rules` (its own manifest's when absent). Only the policy's files:
 * an agent needs no optimizer state, and a server loading client-named checkpoints reads no more
 * than it plays (and, given `maxWeightBytes`, no network larger than that).
 */
export async function loadPolicyCheckpoint(dir: string, rules: RulesInput | undefined, maxWeightBytes?: number): Promise<LoadedCheckpoint> {
  // A file named as the checkpoint: said as such, not as a store without its latest.json.
  if ((await stat(dir).catch(() => null))?.isDirectory() === false) {
    throw new CheckpointError('missing-file', dir, `not a folder: a checkpoint is a folder holding ${MANIFEST_FILE}, a run's store one holding latest.json`);
  }
  // A symlink loop as manifest.json read as a store without its latest.json; a training run's
  // folder said the run had no latest.json (`eval --agents runs/x`): loadCheckpointOrLatest.
  return loadCheckpointOrLatest(dir, { rules, policyOnly: true, maxWeightBytes, sharedModels: SHARED_MODELS });
}

/** Whether `spec` names an entry of the file system: one that exists, or a symbolic link that leads to nothing. */
export function namesPath(spec: string): boolean {
  return existsSync(spec) || lstatSync(spec, { throwIfNoEntry: false })?.isSymbolicLink() === true;
}

/**
 * Loads `dir` (a checkpoint, a store or a training run's folder: loadPolicyCheckpoint) as a
 * greedy PolicyAgent for `context.rules`. Greedy because tournaments cache checkpoint agents
 * across sessions and workers: a stateless agent plays the same whatever order the deals run in.
 */
export async function loadCheckpoint(dir: string, context: AgentContext): Promise<Agent> {
  if (!existsSync(dir)) {
    // A link whose target is missing or a loop is there, but leads to nothing: said so, not as a name no agent has.
    if (namesPath(dir)) throw new CheckpointError('bad-file', dir, 'a symbolic link that leads to nothing (its target is missing, or it loops)');
    throw unknownAgent(dir);
  }
  // The backend: the caller's, or `auto` when none is chosen yet (the checkpoint loader's ensureBackend).
  const loaded = await loadPolicyCheckpoint(dir, context.rules as RulesInput);
  return loaded.toAgent({ mode: 'greedy', name: `policy:${path.basename(path.resolve(dir))}` });
}
