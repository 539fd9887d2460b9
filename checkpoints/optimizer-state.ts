// An optimizer's state (Adam: the step count and both moments of every variable) as a checkpoint
// extra: one float32 blob, and as meta each array's name and shape in blob order. Decoding checks
// the meta against the blob, so a damaged or hand-edited checkpoint is refused by name.

import { z } from 'zod';
import { CheckpointError } from './errors.js';
import type { ExtraBlob } from './checkpoint.js';
import { firstIssue } from '../env/rules/zod-issue.js';

/** The extra's name in a checkpoint. */
export const OPTIMIZER_EXTRA = 'optimizer';

export interface NamedArray {
  name: string;
  shape: number[];
  data: Float32Array;
}

const metaSchema = z.array(z.strictObject({ name: z.string().max(512), shape: z.array(z.number().int().nonnegative().max(2 ** 31)).max(8) })).max(100_000);

export function encodeOptimizerState(state: readonly NamedArray[]): ExtraBlob {
  const total = state.reduce((n, w) => n + w.data.length, 0);
  const data = new Float32Array(total);
  let offset = 0;
  for (const w of state) {
    data.set(w.data, offset);
    offset += w.data.length;
  }
  return { data: new Uint8Array(data.buffer), meta: state.map((w) => ({ name: w.name, shape: w.shape })) };
}

/** The arrays of an optimizer extra; `path` names the checkpoint in errors. */
export function decodeOptimizerState(blob: ExtraBlob, path: string): NamedArray[] {
  const parsed = metaSchema.safeParse(blob.meta);
  if (!parsed.success) throw new CheckpointError('bad-manifest', path, firstIssue(parsed.error, ['extras', OPTIMIZER_EXTRA, 'meta']).message);
  if (blob.data.byteLength % 4 !== 0) throw new CheckpointError('bad-manifest', path, `extras.${OPTIMIZER_EXTRA}: ${blob.data.byteLength} bytes is not a float32 array`);
  const floats = new Float32Array(blob.data.buffer.slice(blob.data.byteOffset, blob.data.byteOffset + blob.data.byteLength));
  const sizes = parsed.data.map((w) => w.shape.reduce((a, b) => a * b, 1));
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total !== floats.length) {
    throw new CheckpointError('bad-manifest', path, `extras.${OPTIMIZER_EXTRA}: the shapes hold ${total} floats, the blob ${floats.length}`);
  }
  // NaN moments pass every later check and turn the first update's weights into NaN.
  const bad = floats.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new CheckpointError('bad-manifest', path, `extras.${OPTIMIZER_EXTRA}: value ${bad} is ${floats[bad]}, not a finite number`);
  let offset = 0;
  return parsed.data.map((w, k) => {
    const data = floats.slice(offset, offset + sizes[k]!);
    offset += sizes[k]!;
    return { name: w.name, shape: w.shape, data };
  });
}

/** Adam's running products of beta1 and beta2: saved beside its moments under these names (tfjs's fields). */
export const ADAM_POWERS = ['accBeta1', 'accBeta2'] as const;
export type AdamPower = (typeof ADAM_POWERS)[number];
export const isAdamPower = (name: string): name is AdamPower => (ADAM_POWERS as readonly string[]).includes(name);

/**
 * Checks that Adam's arrays of the checkpoint at `path` fit an optimizer of variables of
 * `variableShapes`: Adam keys its moments by position, the step count, then the first moments and
 * the second, each in variable order and of its variable's shape. A run saved before Adam's first
 * step (every rollout empty) has the step count alone. Throws `bad-manifest`, naming the array.
 */
export function checkAdamState(state: readonly NamedArray[], variableShapes: readonly (readonly number[])[], path: string): void {
  const shapes = [[], ...variableShapes, ...variableShapes];
  const moments = state.filter((w) => !isAdamPower(w.name));
  const fresh = moments.length === 1 && moments[0]!.shape.length === 0;
  const wrong = moments.length !== shapes.length ? -1 : moments.findIndex((w, k) => w.shape.join() !== shapes[k]!.join());
  if (fresh || (moments.length === shapes.length && wrong < 0)) return;
  const found = wrong < 0 ? `${moments.length} arrays besides ${ADAM_POWERS.join(' and ')}` : `array ${wrong} (${moments[wrong]!.name}) has shape [${moments[wrong]!.shape}]`;
  throw new CheckpointError('bad-manifest', path, `extras.${OPTIMIZER_EXTRA}.meta: ${found}, but the learner's optimizer takes ${shapes.length}, of shapes ${JSON.stringify(shapes)}`);
}
