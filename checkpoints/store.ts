// A directory of checkpoints for one rule set: `step-<n>` checkpoint directories, the pointers
// `latest.json` and `best.json` (replaced atomically, each naming a checkpoint and the sha256 of
// its manifest), listing by step, and pruning. One writer per store at a time.

import type { Dirent } from 'node:fs';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { PolicyAgent } from '../agents/policy-agent.js';
import {
  loadCheckpoint,
  readManifest,
  writeCheckpoint,
  type ExtraBlob,
  type LoadCheckpointOptions,
  type LoadedCheckpoint,
  type RulesInput,
  type WrittenCheckpoint,
} from './checkpoint.js';
import { replaceFileAtomic } from './durable-fs.js';
import { MAX_METADATA_BYTES, parseCheckpointJson, readRegularFile } from './safe-read.js';
import { CheckpointError } from './errors.js';
import { MANIFEST_FILE, NAME_PATTERN, sha256, type CheckpointManifest } from './manifest.js';
import { firstIssue } from '../env/rules/zod-issue.js';

export type PointerName = 'latest' | 'best';

/** The store inside a training run's folder (`runs/<name>/checkpoints`): loaders take the run folder for it. */
export const RUN_STORE_FOLDER = 'checkpoints';

/** The file of a store's pointer, in its folder. */
export function pointerFileName(which: PointerName): string {
  return `${which}.json`;
}

/**
 * The store `dir` names: itself, or the store of the training run it is (a folder without
 * latest.json whose checkpoints/ has one). `exists` tells whether a path is there (sync or not).
 */
export async function storeFolderOf(dir: string, exists: (file: string) => boolean | Promise<boolean>): Promise<string> {
  const latest = pointerFileName('latest');
  if (await exists(path.join(dir, latest))) return dir;
  const run = path.join(dir, RUN_STORE_FOLDER);
  return (await exists(path.join(run, latest))) ? run : dir;
}

/**
 * The checkpoint folder `dir` names: itself, or the one the `latest` pointer of the store it is
 * (or a training run's folder holds) names, that pointer checked against the manifest it
 * recorded (loading the folder then checks its files, as loading the store would); null when it
 * names none. A damaged pointer is a CheckpointError naming the file.
 */
export async function checkpointFolderOf(dir: string): Promise<string | null> {
  if (await pathExists(path.join(dir, MANIFEST_FILE))) return dir;
  const store = await storeFolderOf(dir, pathExists);
  const name = await new CheckpointStore(store, { rules: {} }).verifiedPointer('latest');
  return name === null ? null : path.join(store, name);
}

/** Whether anything (a dangling link too) is at `file`. */
function pathExists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/**
 * The checkpoint `dir` names, loaded: a checkpoint folder itself (anything named manifest.json
 * makes one, to be refused as such if it is no regular file), else the latest of the store it is
 * or, for a training run's folder, holds (storeFolderOf).
 */
export async function loadCheckpointOrLatest(dir: string, options: Omit<LoadCheckpointOptions, 'manifestSha256'> = {}): Promise<LoadedCheckpoint> {
  if (await pathExists(path.join(dir, MANIFEST_FILE))) return loadCheckpoint(dir, options);
  const { rules, ...rest } = options;
  const store = new CheckpointStore(await storeFolderOf(dir, pathExists), { rules: rules as RulesInput });
  // A folder that is none of the three: said so, not as a store that lacks its latest.json.
  if ((await store.pointer('latest')) === null) {
    throw new CheckpointError('missing-file', dir, `no ${MANIFEST_FILE} (so no checkpoint) and no latest checkpoint (so no store and no training run's folder)`);
  }
  return store.load('latest', rest);
}

const pointerSchema = z.strictObject({
  checkpoint: z.string().regex(NAME_PATTERN),
  step: z.number().int().nonnegative(),
  manifestSha256: z.string().regex(/^[0-9a-f]{64}$/),
});
type Pointer = z.output<typeof pointerSchema>;

export interface CheckpointStoreOptions {
  /** The rule set every checkpoint of this store is for; loads of other rules fail. */
  rules: RulesInput;
  /** Makes `save` move `best` when this metric improves on the best checkpoint's. */
  bestMetric?: { name: string; higherIsBetter: boolean };
}

export interface SaveOptions {
  step: number;
  metrics?: Record<string, number>;
  extras?: Record<string, ExtraBlob>;
  /** @default `step-<step, 12 digits>` (sorts by step as text too) */
  name?: string;
  /** Points `best` at this checkpoint whatever the metrics say. @default false */
  best?: boolean;
}

export interface CheckpointSummary {
  name: string;
  dir: string;
  step: number;
  createdAt: string;
  metrics: Record<string, number>;
  /** The manifest's extras (their metadata; the blobs are not read). */
  extras: CheckpointManifest['extras'];
}

export function checkpointName(step: number): string {
  return `step-${String(step).padStart(12, '0')}`;
}

export class CheckpointStore {
  readonly root: string;
  private readonly options: CheckpointStoreOptions;

  constructor(root: string, options: CheckpointStoreOptions) {
    // path.resolve('') is the working directory: a store there would list and prune its folders.
    if (typeof root !== 'string' || root === '') throw new CheckpointError('invalid-argument', String(root), 'a checkpoint store needs a folder');
    this.root = path.resolve(root);
    this.options = options;
  }

  /** Writes a checkpoint, then points `latest` (and `best`, when it is) at it. */
  async save(agent: PolicyAgent, options: SaveOptions): Promise<WrittenCheckpoint & { name: string }> {
    // Checked as load checks it: a name such as ../x would be written beside the store.
    const name = this.checkName(options.name ?? checkpointName(options.step));
    if (name === 'latest' || name === 'best') throw new CheckpointError('invalid-argument', name, 'latest and best name the pointers');
    const written = await writeCheckpoint(this.dir(name), {
      agent,
      rules: this.options.rules,
      step: options.step,
      metrics: options.metrics,
      extras: options.extras,
    });
    const pointer: Pointer = { checkpoint: name, step: written.manifest.step, manifestSha256: written.manifestSha256 };
    // A crash between the rename and here leaves a complete checkpoint that `latest` does not
    // name yet: still a consistent store.
    await this.writePointer('latest', pointer);
    if (options.best || (await this.improvesBest(written.manifest))) await this.writePointer('best', pointer);
    return { ...written, name };
  }

  /** Loads a checkpoint by name, or the one `latest` / `best` names (verifying its manifest hash). */
  async load(nameOrPointer: string, options: Pick<LoadCheckpointOptions, 'policyOnly' | 'maxWeightBytes' | 'sharedModels'> = {}): Promise<LoadedCheckpoint> {
    if (nameOrPointer === 'latest' || nameOrPointer === 'best') {
      const pointer = await this.readPointer(nameOrPointer);
      if (!pointer) throw new CheckpointError('missing-file', this.pointerFile(nameOrPointer), `the store has no ${nameOrPointer} checkpoint`);
      const loaded = await loadCheckpoint(this.dir(pointer.checkpoint), { rules: this.options.rules, manifestSha256: pointer.manifestSha256, ...options });
      // The manifest hash binds the checkpoint; a step that contradicts it was read as it stood.
      if (loaded.manifest.step !== pointer.step) {
        throw new CheckpointError('bad-pointer', this.pointerFile(nameOrPointer), `it says step ${pointer.step}, but its checkpoint ${pointer.checkpoint} is step ${loaded.manifest.step}`);
      }
      return loaded;
    }
    return loadCheckpoint(this.dir(this.checkName(nameOrPointer)), { rules: this.options.rules, ...options });
  }

  /** The checkpoint a pointer names, or null when the store has none. */
  async pointer(which: PointerName): Promise<string | null> {
    return (await this.readPointer(which))?.checkpoint ?? null;
  }

  /**
   * Checks that pointer `which`, when there is one, names a checkpoint of this store whose
   * manifest is the one it recorded (CheckpointError `bad-pointer` naming the file otherwise): a
   * resumed run found a damaged `best.json` only after each update it saved.
   */
  async verifyPointer(which: PointerName): Promise<void> {
    await this.verifiedPointer(which);
  }

  /** The checkpoint pointer `which` names, read once and checked as verifyPointer checks it; null when there is none. */
  async verifiedPointer(which: PointerName): Promise<string | null> {
    const pointer = await this.readPointer(which);
    if (!pointer) return null;
    // readPointer's schema already refused a name that is no checkpoint of this store (`../../x`).
    const file = this.pointerFile(which);
    const { bytes } = await readManifest(this.dir(pointer.checkpoint)).catch((e: unknown) => {
      throw new CheckpointError('bad-pointer', file, `its checkpoint ${pointer.checkpoint} cannot be read: ${(e as Error).message}`);
    });
    if (sha256(bytes) !== pointer.manifestSha256) throw new CheckpointError('bad-pointer', file, `the manifest of ${pointer.checkpoint} is not the one it recorded`);
    return pointer.checkpoint;
  }

  /**
   * The newest checkpoint folder by step (its name), when its manifest reads; null when that
   * newest one cannot be read (an older one is no stand-in for it) or there is none.
   */
  async newestIfReadable(): Promise<string | null> {
    // Default names sort by step as text (checkpointName).
    const newest = (await this.entries()).filter((e) => e.isDirectory() && /^step-\d+$/.test(e.name)).map((e) => e.name).sort().at(-1);
    if (newest === undefined) return null;
    return readManifest(this.dir(newest)).then(
      () => newest,
      () => null,
    );
  }

  /** Points `latest` at an existing checkpoint. */
  async setLatest(name: string): Promise<void> {
    await this.pointAt('latest', name);
  }

  /** Points `best` at an existing checkpoint. */
  async setBest(name: string): Promise<void> {
    await this.pointAt('best', name);
  }

  /**
   * Points `best` at checkpoint `name` when its metric beats the one `best` names, as `save`
   * decides: a run stopped between save's two pointer writes left `best` behind the checkpoint
   * `latest` names (and pruning later removed the better one). Whether `best` moved.
   */
  async catchUpBest(name: string): Promise<boolean> {
    const read = await readManifest(this.dir(this.checkName(name)));
    if ((await this.readPointer('best'))?.checkpoint === name || !(await this.improvesBest(read.manifest))) return false;
    await this.writePointerTo('best', name, read);
    return true;
  }

  private async pointAt(which: PointerName, name: string): Promise<void> {
    await this.writePointerTo(which, name, await readManifest(this.dir(this.checkName(name))));
  }

  /** Points `which` at checkpoint `name`, whose manifest (and its bytes) `read` holds. */
  private async writePointerTo(which: PointerName, name: string, read: { manifest: CheckpointManifest; bytes: Uint8Array }): Promise<void> {
    await this.writePointer(which, { checkpoint: name, step: read.manifest.step, manifestSha256: sha256(read.bytes) });
  }

  /** The store folder's entries; none before anything was saved in it (a run's league before its first snapshot). */
  private async entries(): Promise<Dirent[]> {
    return readdir(this.root, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
  }

  /** Checkpoints with a valid manifest, by step (then name). Temp and foreign entries are skipped. */
  async list(): Promise<CheckpointSummary[]> {
    const out: CheckpointSummary[] = [];
    for (const entry of await this.entries()) {
      if (!entry.isDirectory() || !NAME_PATTERN.test(entry.name)) continue;
      const dir = this.dir(entry.name);
      const manifest = await readManifest(dir).then(
        (m) => m.manifest,
        () => null,
      );
      if (manifest) out.push({ name: entry.name, dir, step: manifest.step, createdAt: manifest.createdAt, metrics: manifest.metrics, extras: manifest.extras });
    }
    return out.sort((a, b) => a.step - b.step || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Removes the checkpoints past `step`: a run that crashed after writing them but before its
   * trainer checkpoint recorded them redoes those steps on resume, under the same names.
   * Returns the names removed.
   */
  async removeAfter(step: number): Promise<string[]> {
    // Every comparison with NaN is false: removeAfter(NaN) removed every checkpoint.
    if (!Number.isSafeInteger(step) || step < 0) throw new CheckpointError('invalid-argument', this.root, `removeAfter needs a step (a non-negative integer), got ${String(step).slice(0, 40)}`);
    const removed: string[] = [];
    for (const { name, step: saved } of await this.list()) {
      if (saved <= step) continue;
      await this.removeDir(name);
      removed.push(name);
    }
    return removed;
  }

  /**
   * Removes every checkpoint not in `names`, and leftovers of interrupted writes; returns the
   * names removed. Pointers are not consulted: the caller names all it keeps (a training run's
   * league, the snapshots its checkpoints name).
   */
  async keepOnly(names: ReadonlySet<string>): Promise<string[]> {
    return this.removeAllBut(await this.list(), names);
  }

  /** Renamed away first, so a crash mid-delete leaves no half checkpoint under its name. */
  private async removeDir(name: string): Promise<void> {
    const doomed = this.dir(`.tmp-deleted-${name}-${process.pid}`);
    await rename(this.dir(name), doomed);
    await rm(doomed, { recursive: true, force: true });
  }

  /**
   * Keeps the `keep` newest checkpoints (by step) and whatever `latest` and `best` name; removes
   * the rest and leftovers of interrupted writes. Returns the names removed.
   */
  async prune(keep: number): Promise<string[]> {
    if (!Number.isInteger(keep) || keep < 1) throw new CheckpointError('invalid-argument', this.root, 'prune must keep at least one checkpoint');
    const listed = await this.list();
    const kept = new Set(listed.slice(-keep).map((c) => c.name));
    for (const which of ['latest', 'best'] as const) {
      const name = await this.pointer(which);
      if (name) kept.add(name);
    }
    return this.removeAllBut(listed, kept);
  }

  /** Removes the `listed` checkpoints not in `kept`, then leftovers of interrupted writes; returns the names removed. */
  private async removeAllBut(listed: readonly CheckpointSummary[], kept: ReadonlySet<string>): Promise<string[]> {
    const removed: string[] = [];
    for (const { name } of listed) {
      if (kept.has(name)) continue;
      await this.removeDir(name);
      removed.push(name);
    }
    for (const { name } of await this.entries()) {
      if (name.startsWith('.tmp-') || /\.json\.tmp-/.test(name)) await rm(this.dir(name), { recursive: true, force: true });
    }
    return removed;
  }

  private async improvesBest(manifest: CheckpointManifest): Promise<boolean> {
    const metric = this.options.bestMetric;
    const value = metric ? manifest.metrics[metric.name] : undefined;
    if (!metric || value === undefined) return false;
    const current = await this.readPointer('best');
    if (!current) return true;
    const best = await readManifest(this.dir(current.checkpoint)).then(
      (m) => m.manifest.metrics[metric.name],
      () => undefined,
    );
    return best === undefined || (metric.higherIsBetter ? value > best : value < best);
  }

  private async readPointer(which: PointerName): Promise<Pointer | null> {
    const file = this.pointerFile(which);
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(file, file, { maxBytes: MAX_METADATA_BYTES });
    } catch (e) {
      if (e instanceof CheckpointError && e.code === 'missing-file') return null;
      if (e instanceof CheckpointError) throw new CheckpointError('bad-pointer', file, e.reason);
      throw e;
    }
    const parsed = pointerSchema.safeParse(parseCheckpointJson(bytes, path.basename(file), file, 'bad-pointer'));
    if (!parsed.success) throw new CheckpointError('bad-pointer', file, firstIssue(parsed.error).message);
    return parsed.data;
  }

  private writePointer(which: PointerName, pointer: Pointer): Promise<void> {
    return replaceFileAtomic(this.pointerFile(which), `${JSON.stringify(pointer, null, 2)}\n`);
  }

  private pointerFile(which: PointerName): string {
    return path.join(this.root, pointerFileName(which));
  }

  private checkName(name: string): string {
    if (typeof name !== 'string' || !NAME_PATTERN.test(name)) throw new CheckpointError('invalid-argument', name, `checkpoint name must match ${NAME_PATTERN}`);
    return name;
  }

  private dir(name: string): string {
    return path.join(this.root, name);
  }
}
