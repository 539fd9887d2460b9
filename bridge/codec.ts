// Encodes a batch of env results (after env.reset / env.step) as a JSON reply or as the binary
// frame documented in protocol.ts (JSON header + aligned little-endian buffers, observations CSR).

import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';

export type Encoding = 'json' | 'binary';

export interface FinalEntry {
  env: number;
  info: Record<string, unknown>;
}

/** A session's current arrays; rows are envs. Read-only to the codec. */
export interface BatchView {
  session: string;
  numEnvs: number;
  observations: Float32Array;
  masks: Uint8Array;
  seats: Int32Array;
  /** numEnvs x rewardWidth; rewardWidth 1 is sent as a vector. */
  rewards: Float32Array;
  rewardWidth: number;
  terminated: Uint8Array;
  truncated: Uint8Array;
  /** Row i holds env i's final observation when env i is in `final`. */
  finalObservations: Float32Array;
  final: FinalEntry[];
}

type Dtype = 'float32' | 'int32' | 'uint32' | 'uint16' | 'uint8';
interface BufferSpec {
  dtype: Dtype;
  shape: number[];
  offset: number;
  byteLength: number;
}
type Typed = Float32Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;

const align8 = (n: number) => (n + 7) & ~7;

/** The JSON reply: arrays inline (slow for large batches, simple for any client). */
export function encodeJson(id: string | number, view: BatchView): string {
  const n = view.numEnvs;
  const rows = <T extends Typed>(a: T, width: number, i: number) => Array.from(a.subarray(i * width, (i + 1) * width));
  const result = {
    session: view.session,
    numEnvs: n,
    observations: Array.from({ length: n }, (_, i) => rows(view.observations, OBS_SIZE, i)),
    masks: Array.from({ length: n }, (_, i) => rows(view.masks, NUM_ACTIONS, i)),
    seats: Array.from(view.seats),
    rewards: view.rewardWidth === 1 ? Array.from(view.rewards) : Array.from({ length: n }, (_, i) => rows(view.rewards, view.rewardWidth, i)),
    terminated: Array.from(view.terminated, Boolean),
    truncated: Array.from(view.truncated, Boolean),
    final: view.final.map((f) => ({ env: f.env, observation: rows(view.finalObservations, OBS_SIZE, f.env), info: f.info })),
  };
  return JSON.stringify({ id, result });
}

/**
 * Sparse rows of a float32 matrix, reusing its scratch space between calls. Non-zeros are found
 * on the bit patterns (a Uint32 view), which also copies the values without float conversion.
 */
export class CsrEncoder {
  private indices = new Uint16Array(0);
  private values = new Uint32Array(0);
  private indptr = new Uint32Array(0);

  /** Encodes rows `rows` (or all rows) of `matrix` (width OBS_SIZE). */
  encode(matrix: Float32Array, rows: number[] | number): { indptr: Uint32Array; indices: Uint16Array; values: Float32Array } {
    const bits = new Uint32Array(matrix.buffer, matrix.byteOffset, matrix.length);
    const numRows = typeof rows === 'number' ? rows : rows.length;
    if (this.indptr.length < numRows + 1) this.indptr = new Uint32Array(numRows + 1);
    if (this.indices.length < numRows * OBS_SIZE) {
      this.indices = new Uint16Array(numRows * OBS_SIZE);
      this.values = new Uint32Array(numRows * OBS_SIZE);
    }
    const indices = this.indices;
    const values = this.values;
    const indptr = this.indptr;
    let k = 0;
    indptr[0] = 0;
    for (let r = 0; r < numRows; r++) {
      const base = (typeof rows === 'number' ? r : rows[r]!) * OBS_SIZE;
      for (let j = 0; j < OBS_SIZE; j++) {
        const v = bits[base + j]!;
        if (v !== 0) {
          indices[k] = j;
          values[k++] = v;
        }
      }
      indptr[r + 1] = k;
    }
    return {
      indptr: indptr.subarray(0, numRows + 1),
      indices: indices.subarray(0, k),
      values: new Float32Array(values.buffer, 0, k),
    };
  }
}

/** Builds the binary frame: header length, JSON header with buffer specs, aligned payload. */
export function binaryFrame(header: { id: string | number; result: Record<string, unknown> }, arrays: [string, Typed, number[]][]): Buffer {
  const buffers: Record<string, BufferSpec> = {};
  let offset = 0;
  for (const [name, array, shape] of arrays) {
    buffers[name] = { dtype: dtypeOf(array), shape, offset, byteLength: array.byteLength };
    offset = align8(offset + array.byteLength);
  }
  header.result.buffers = buffers;
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const payloadStart = align8(4 + json.length);
  const frame = Buffer.allocUnsafe(payloadStart + offset);
  frame.writeUInt32LE(json.length, 0);
  json.copy(frame, 4);
  // Padding bytes are zeroed so frames are reproducible byte for byte.
  frame.fill(0, 4 + json.length, payloadStart);
  for (const [name, array] of arrays) {
    const at = payloadStart + buffers[name]!.offset;
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    frame.set(bytes, at);
    frame.fill(0, at + array.byteLength, align8(at + array.byteLength - payloadStart) + payloadStart);
  }
  return frame;
}

function dtypeOf(a: Typed): Dtype {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Uint32Array) return 'uint32';
  if (a instanceof Uint16Array) return 'uint16';
  return 'uint8';
}

/** The binary reply of a batch (see protocol.ts); `csr` holds the session's scratch space. */
export function encodeBinary(id: string | number, view: BatchView, csr: CsrEncoder, finalCsr: CsrEncoder): Buffer {
  const n = view.numEnvs;
  const obs = csr.encode(view.observations, n);
  const finalRows = view.final.map((f) => f.env);
  const fin = finalCsr.encode(view.finalObservations, finalRows);
  const rewardShape = view.rewardWidth === 1 ? [n] : [n, view.rewardWidth];
  return binaryFrame({ id, result: { session: view.session, numEnvs: n, final: view.final } }, [
    ['observations.indptr', obs.indptr, [n + 1]],
    ['observations.indices', obs.indices, [obs.indices.length]],
    ['observations.values', obs.values, [obs.values.length]],
    ['masks', view.masks, [n, NUM_ACTIONS]],
    ['seats', view.seats, [n]],
    ['rewards', view.rewards, rewardShape],
    ['terminated', view.terminated, [n]],
    ['truncated', view.truncated, [n]],
    ['finalObservations.indptr', fin.indptr, [finalRows.length + 1]],
    ['finalObservations.indices', fin.indices, [fin.indices.length]],
    ['finalObservations.values', fin.values, [fin.values.length]],
  ]);
}

/** Decodes a binary frame (for TypeScript clients and tests). */
export function decodeBinaryFrame(frame: Uint8Array): { header: { id: string | number; result: Record<string, unknown> }; arrays: Record<string, Typed> } {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(Buffer.from(frame.buffer, frame.byteOffset + 4, headerLength).toString('utf8'));
  const payloadStart = align8(4 + headerLength);
  const arrays: Record<string, Typed> = {};
  const specs = (header.result.buffers ?? {}) as Record<string, BufferSpec>;
  for (const [name, spec] of Object.entries(specs)) {
    const Ctor = { float32: Float32Array, int32: Int32Array, uint32: Uint32Array, uint16: Uint16Array, uint8: Uint8Array }[spec.dtype];
    const at = frame.byteOffset + payloadStart + spec.offset;
    // A view when the frame happens to sit aligned in its buffer; else a copy, which always is.
    const bytes = at % Ctor.BYTES_PER_ELEMENT === 0 ? frame : new Uint8Array(frame.subarray(at - frame.byteOffset, at - frame.byteOffset + spec.byteLength));
    const byteOffset = bytes === frame ? at : bytes.byteOffset;
    arrays[name] = new Ctor(bytes.buffer as ArrayBuffer, byteOffset, spec.byteLength / Ctor.BYTES_PER_ELEMENT);
  }
  return { header, arrays };
}

/** Expands CSR rows back to a dense N x OBS_SIZE matrix. */
export function denseFromCsr(indptr: Uint32Array, indices: Uint16Array, values: Float32Array): Float32Array {
  const n = indptr.length - 1;
  const out = new Float32Array(n * OBS_SIZE);
  for (let r = 0; r < n; r++) for (let k = indptr[r]!; k < indptr[r + 1]!; k++) out[r * OBS_SIZE + indices[k]!] = values[k]!;
  return out;
}
