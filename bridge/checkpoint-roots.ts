// Where the bridge may load policies from: a client names a checkpoint by path, and the server
// reads it only when the path, resolved through every symlink, lies inside one of its roots.
// Anything else (outside, missing, a file, a folder that is no checkpoint) gets one and the same
// answer, so the names of the server's files cannot be probed.

import { existsSync } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFEST_FILE } from '../checkpoints/manifest.js';
import { CheckpointStore, pointerFileName, storeFolderOf } from '../checkpoints/store.js';
import { BridgeError } from './errors.js';

/** The package folder (holding package.json), from this module's place in the source or dist tree. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** The package's checkpoints/ (the pretrained policies) and runs/ in the working directory. */
export function defaultCheckpointRoots(): string[] {
  return [path.join(packageRoot(), 'checkpoints'), path.resolve('runs')];
}

function inside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  // `..ck` is a folder inside; only `..` itself or a path through it leaves.
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The one error for every path a client may not load. */
export function notACheckpoint(spec: string, field: string): BridgeError {
  return new BridgeError(
    'invalid_params',
    `${field}: "${spec.slice(0, 200)}" is not an agent (random, heuristic, pimc) or a checkpoint under this server's checkpoint roots`,
    field,
  );
}

/**
 * The real path of the checkpoint `spec` names (for a checkpoint store or a training run's
 * folder, of the checkpoint its store's `latest` names), when it is a folder with a manifest.json
 * inside a root; relative specs are tried against the working directory and the package folder.
 * Throws `notACheckpoint` otherwise.
 */
export async function resolveCheckpoint(spec: string, roots: readonly string[], field: string): Promise<string> {
  const realRoots = (await Promise.all(roots.map((r) => realpath(r).catch(() => null)))).filter((r): r is string => r !== null);
  const candidates = path.isAbsolute(spec) ? [spec] : [path.resolve(spec), path.resolve(packageRoot(), spec)];
  for (const candidate of candidates) {
    const real = await realpath(candidate).catch(() => null);
    if (!real || !realRoots.some((root) => inside(real, root))) continue;
    const info = await stat(real).catch(() => null);
    if (!info?.isDirectory()) continue;
    if (await isFile(path.join(real, MANIFEST_FILE))) return real;
    // A store, or a training run's folder holding one; its checkpoints/ may be a symlink too.
    const store = await realpath(await storeFolderOf(real, isFile)).catch(() => null);
    if (!store || !realRoots.some((root) => inside(store, root)) || !(await isFile(path.join(store, pointerFileName('latest'))))) continue;
    // The checkpoint the store's `latest` names may itself be a symlink, so it is resolved and
    // checked in turn, and that checkpoint folder is what gets loaded.
    const name = await new CheckpointStore(store, { rules: {} }).pointer('latest').catch(() => null);
    const target = name === null ? null : await realpath(path.join(store, name)).catch(() => null);
    if (target && realRoots.some((root) => inside(target, root)) && (await isFile(path.join(target, MANIFEST_FILE)))) return target;
  }
  throw notACheckpoint(spec, field);
}

/** A regular file itself, not a symlink to one: else whether a link's target exists would show in the answer. */
async function isFile(file: string): Promise<boolean> {
  return (await lstat(file).catch(() => null))?.isFile() ?? false;
}
