// A tournament plays the checkpoint a store's or a training run's `latest` names when it starts
// (latestCheckpoints). A run that trains on meanwhile prunes its old checkpoints: worker threads,
// which load their agents at their first deal, met that folder gone and said "unknown agent". So
// the policy files of each such checkpoint are copied first into a folder of the tournament's own.

import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import { MANIFEST_FILE, MODEL_FILE, WEIGHTS_FILE } from '../checkpoints/manifest.js';
import { CheckpointError } from '../checkpoints/errors.js';

/** What playing a checkpoint needs (checkpoint.ts reads no more for a policy). */
const POLICY_FILES = [MANIFEST_FILE, MODEL_FILE, WEIGHTS_FILE];
/** Larger folders are played in place: a checkpoint that size is refused by the loader anyway. */
const MAX_PINNED_BYTES = 256 * 1024 * 1024;
/**
 * A run that saves and prunes beside us can name a checkpoint that is gone by the time it is read
 * or copied: `latest` is read again, a few times, a little later each time.
 */
const ATTEMPTS = 8;
const RETRY_MS = 25;

export interface PinnedCheckpoints {
  /** Per spec: the checkpoint folder its `latest` named (for the result). */
  latest: Map<string, string>;
  /** Per spec: the folder the tournament plays (the copy, or `latest` itself where none was made). */
  playing: Map<string, string>;
  /** `e` with the copies' paths written as the checkpoints they are copies of. */
  describe(e: unknown): unknown;
  /** Removes the copies. */
  dispose(): Promise<void>;
}

/**
 * Copies of the checkpoints `resolve` names for `specs` (spec -> folder, read afresh on each
 * try). A checkpoint whose files are not all regular files within MAX_PINNED_BYTES is played in
 * place, and the loader says what is wrong with it.
 */
export async function pinCheckpoints(specs: readonly string[], resolve: (spec: string) => Promise<string | undefined>): Promise<PinnedCheckpoints> {
  const latest = new Map<string, string>();
  const playing = new Map<string, string>();
  const copies = new Map<string, string>();
  let root: string | null = null;
  const dispose = async () => {
    if (root !== null) await rm(root, { recursive: true, force: true });
  };
  /** Pins `spec`'s checkpoint: 'gone' when it vanished under us (read `latest` again), else 'done'. */
  const pin = async (spec: string, lastAttempt: boolean): Promise<'done' | 'gone'> => {
    const folder = await resolve(spec);
    if (folder === undefined) return 'done';
    latest.set(spec, folder);
    playing.set(spec, folder);
    const files = await policyFiles(folder);
    // On the last try a folder without its files is played in place, and the loader says so.
    if (files === 'missing') return lastAttempt ? 'done' : 'gone';
    if (files === 'not-copyable') return 'done';
    root ??= await mkdtemp(path.join(os.tmpdir(), 'kratzen-tournament-'));
    const copy = path.join(root, String(copies.size));
    await rm(copy, { recursive: true, force: true });
    await mkdir(copy);
    for (const file of POLICY_FILES) await copyFile(path.join(folder, file), path.join(copy, file), constants.COPYFILE_EXCL);
    copies.set(copy, folder);
    playing.set(spec, copy);
    return 'done';
  };
  try {
    for (const spec of new Set(specs)) {
      for (let attempt = 1; ; attempt++) {
        let outcome: 'done' | 'gone';
        try {
          outcome = await pin(spec, attempt === ATTEMPTS);
        } catch (e) {
          if (attempt === ATTEMPTS || !prunedUnderUs(e)) throw e;
          outcome = 'gone';
        }
        if (outcome === 'done') break;
        await delay(RETRY_MS * attempt);
      }
    }
  } catch (e) {
    await dispose();
    throw e;
  }
  const describe = (e: unknown): unknown => {
    if (!(e instanceof CheckpointError)) return e;
    for (const [copy, folder] of copies) {
      if (e.path === copy || e.path.startsWith(copy + path.sep)) return new CheckpointError(e.code, folder + e.path.slice(copy.length), e.reason.split(copy).join(folder));
    }
    return e;
  };
  return { latest, playing, describe, dispose };
}

/**
 * Whether `folder`'s policy files are regular files small enough to copy ('copy'; a FIFO would
 * hang the copy), some are missing (pruned, or never there), or they are not copyable.
 */
async function policyFiles(folder: string): Promise<'copy' | 'missing' | 'not-copyable'> {
  let bytes = 0;
  for (const file of POLICY_FILES) {
    const stat = await lstat(path.join(folder, file)).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? 'missing' : null));
    if (stat === 'missing') return 'missing';
    if (!stat?.isFile()) return 'not-copyable';
    bytes += stat.size;
  }
  return bytes <= MAX_PINNED_BYTES ? 'copy' : 'not-copyable';
}

/**
 * Whether `e` is what a checkpoint pruned while we read it gives: a file gone under the copy, or
 * a `latest` pointer whose checkpoint could not be read (the store's own check says bad-pointer).
 */
function prunedUnderUs(e: unknown): boolean {
  return (e as NodeJS.ErrnoException)?.code === 'ENOENT' || (e instanceof CheckpointError && e.code === 'bad-pointer');
}
