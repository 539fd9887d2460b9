// What `train --resume` takes from a run's latest checkpoint, checked against that checkpoint and
// the run's config before anything is used, and before anything of the run is deleted: a
// hand-edited or damaged checkpoint whose trainer state said update 2 where the checkpoint was
// update 4 had the resume delete the checkpoint `latest.json` names, and a damaged critic or
// behaviour blob ended the resume with a stack trace.

import { z } from 'zod';
import { CheckpointError, type CheckpointManifest, type LoadedCheckpoint } from '../checkpoints/index.js';
import { firstIssue } from '../env/rules/zod-issue.js';
import { ValidationError } from '../env/rules/index.js';
import { decodeArrays } from './distributed/arrays.js';
import type { TrainConfig } from './config.js';

/** The trainer's own state, saved in every checkpoint as the `trainer` extra's meta. */
export interface TrainerState {
  update: number;
  snapshots: string[];
  /**
   * With overlapped rollouts: the league snapshots the actors held when the next update's
   * rollout was asked for (its weights are the checkpoint's BEHAVIOUR_EXTRA).
   */
  behaviourSnapshots?: string[];
  /**
   * The run's settings it was trained with, but those a resume may change (RESUMABLE_FIELDS):
   * config.json edited by hand went on without a word under other settings. Missing in
   * checkpoints of runs from before it was kept.
   */
  trainedWith?: Record<string, Json>;
}

/** A JSON value, as checkpoint metadata holds them. */
type Json = z.infer<ReturnType<typeof z.json>>;

/** What a resumed run may be asked to change: its length, where it lives, and the machine's backend. */
export const RESUMABLE_FIELDS: ReadonlySet<string> = new Set(['name', 'runsDir', 'updates', 'backend']);

/** The settings of `config` that a resume must keep (TrainerState.trainedWith). */
export function trainedWith(config: TrainConfig): Record<string, Json> {
  // The config is JSON (parsed from it, saved as config.json).
  return Object.fromEntries(Object.entries(config).filter(([field, value]) => !RESUMABLE_FIELDS.has(field) && value !== undefined)) as Record<string, Json>;
}

/**
 * Refuses a run config that differs from the settings its checkpoint was trained with, naming the
 * first field that does. Fields the checkpoint does not record, or this version no longer has, are
 * not compared (a trainer of another version may add or drop settings).
 */
export function checkTrainedWith(state: TrainerState, config: TrainConfig, dir: string): void {
  if (state.trainedWith === undefined) return;
  for (const [field, then] of Object.entries(state.trainedWith)) {
    if (RESUMABLE_FIELDS.has(field) || !(field in config)) continue;
    const now = JSON.stringify(config[field as keyof TrainConfig]);
    if (now !== JSON.stringify(then)) {
      throw new ValidationError('cannot resume', field, `the run's config says ${field} ${now ?? 'unset'}, but its checkpoint ${dir} was trained with ${JSON.stringify(then).slice(0, 200)} (restore config.json or start another run)`);
    }
  }
}

/** The checkpoint extra holding the trainer state (as meta, no data). */
export const TRAINER_EXTRA = 'trainer';

/** A league snapshot is named after the update that made it. */
export const snapshotName = (update: number) => `snapshot-u${update}`;
export const SNAPSHOT_NAME = /^snapshot-u(0|[1-9]\d{0,15})$/;

function snapshotList(maxSnapshots: number) {
  return z.array(z.string().regex(SNAPSHOT_NAME, 'is not a league snapshot name (snapshot-u<update>)')).max(maxSnapshots);
}

/**
 * The trainer state `loaded` saved: its update must be the checkpoint's step, and every snapshot
 * it names one of the league's (at most `maxSnapshots`) made at that update or before.
 */
export function savedTrainerState(loaded: LoadedCheckpoint, config: TrainConfig): TrainerState {
  const field = ['extras', TRAINER_EXTRA, 'meta'];
  const schema = z.strictObject({
    update: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    snapshots: snapshotList(config.league.maxSnapshots),
    behaviourSnapshots: snapshotList(config.league.maxSnapshots).optional(),
    trainedWith: z.record(z.string(), z.json()).optional(),
  });
  const parsed = schema.safeParse(loaded.extras.get(TRAINER_EXTRA)?.meta);
  if (!parsed.success) throw new CheckpointError('bad-manifest', loaded.dir, firstIssue(parsed.error, field).message);
  const state = parsed.data;
  if (state.update !== loaded.manifest.step) {
    throw new CheckpointError('bad-manifest', loaded.dir, `${field.join('.')}.update: ${state.update}, but the checkpoint is of update ${loaded.manifest.step}`);
  }
  for (const key of ['snapshots', 'behaviourSnapshots'] as const) {
    const late = (state[key] ?? []).findIndex((name) => Number(SNAPSHOT_NAME.exec(name)![1]) > state.update);
    if (late >= 0) throw new CheckpointError('bad-manifest', loaded.dir, `${field.join('.')}.${key}[${late}]: ${state[key]![late]} is later than the checkpoint's update ${state.update}`);
  }
  return state;
}

/** Refuses a checkpoint whose policy is not the one the run's config describes (config.json edited, say). */
export function checkSavedPolicy(loaded: LoadedCheckpoint, config: TrainConfig): void {
  const saved = loaded.manifest;
  if (saved.architecture.hiddenSizes.join() !== config.hiddenSizes.join()) {
    throw new ValidationError('cannot resume', 'hiddenSizes', `the run's config says hiddenSizes ${JSON.stringify(config.hiddenSizes)}, its checkpoint ${loaded.dir} holds ${JSON.stringify(saved.architecture.hiddenSizes)}`);
  }
  if ((saved.suitSymmetry ?? false) !== config.suitSymmetry) {
    throw new ValidationError('cannot resume', 'suitSymmetry', `the run's config says suitSymmetry ${JSON.stringify(config.suitSymmetry)}, its checkpoint ${loaded.dir} was trained with ${JSON.stringify(saved.suitSymmetry ?? false)}`);
  }
}

/**
 * The float32 arrays of extra `name` (saved with `encodeArrays`), each of the size `sizes` lists
 * in order: what the model they go into holds.
 */
export function savedArrays(loaded: LoadedCheckpoint, name: string, sizes: readonly number[]): Float32Array[] {
  const data = loaded.extras.get(name)!.data;
  let arrays;
  try {
    arrays = decodeArrays(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  } catch (e) {
    throw new CheckpointError('bad-manifest', loaded.dir, `extras.${name}: ${(e as Error).message}`);
  }
  const wrong = arrays.length !== sizes.length ? -1 : arrays.findIndex((a, k) => !(a instanceof Float32Array) || a.length !== sizes[k]);
  if (arrays.length !== sizes.length || wrong >= 0) {
    const found = wrong < 0 ? `${arrays.length} arrays` : `array ${wrong} holds ${arrays[wrong]!.length} values`;
    throw new CheckpointError('bad-manifest', loaded.dir, `extras.${name}: ${found}, but the model takes ${sizes.length} arrays of ${JSON.stringify(sizes)} values`);
  }
  for (const [k, array] of (arrays as Float32Array[]).entries()) {
    const bad = array.findIndex((x) => !Number.isFinite(x));
    if (bad >= 0) throw new CheckpointError('bad-manifest', loaded.dir, `extras.${name}: array ${k} holds ${array[bad]} at ${bad}, not a finite number`);
  }
  return arrays as Float32Array[];
}

/**
 * The league snapshots a checkpoint names (its trainer state's `snapshots` and
 * `behaviourSnapshots`, from its manifest's extras): what resuming from it loads. Empty for a
 * checkpoint without a trainer state.
 */
export function snapshotsNamedBy(checkpoint: Pick<CheckpointManifest, 'extras'>): string[] {
  const meta = checkpoint.extras?.[TRAINER_EXTRA]?.meta as { snapshots?: unknown; behaviourSnapshots?: unknown } | null | undefined;
  const lists = [meta?.snapshots, meta?.behaviourSnapshots];
  return lists.flatMap((list) => (Array.isArray(list) ? list.filter((name): name is string => typeof name === 'string') : []));
}
