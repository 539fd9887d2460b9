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
