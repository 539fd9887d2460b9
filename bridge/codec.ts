// Encodes a batch of env results (after env.reset / env.step) as a JSON reply or as the binary
// frame documented in protocol.ts (JSON header + aligned little-endian buffers, observations CSR).

import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE, type ObservationRows } from '../env/observation.js';
import { takeFrame } from './frame-pool.js';
import { BINARY_ARRAYS } from './protocol.js';

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
  /** When the observations are written through ObservationRows that list their entries: so CSR need not scan. */
  observationRows?: ObservationRows;
}

type Typed = Float32Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;

const align8 = (n: number) => (n + 7) & ~7;

/**
 * Rows per slice of a JSON reply: a slice of 64 observation rows takes ~2 ms to write here, so a
 * worker that drives the encoding (`encodeJsonSteps`) gives way about as often as in its steps
 * (one 4096-env reply written whole took ~0.1 s, and every session of that worker waited).
 */
const JSON_ROWS_PER_SLICE = 64;

/** The JSON text of `[item(0), ..., item(count - 1)]`, written a slice of items at a time. */
function* jsonArraySteps(count: number, item: (i: number) => unknown): Generator<void, string> {
  const parts: string[] = [];
  for (let start = 0; start < count; start += JSON_ROWS_PER_SLICE) {
    const end = Math.min(count, start + JSON_ROWS_PER_SLICE);
    const items: unknown[] = [];
    for (let i = start; i < end; i++) items.push(item(i));
    parts.push(JSON.stringify(items).slice(1, -1));
    if (end < count) yield;
  }
  return `[${parts.join(',')}]`;
}

/**
 * The JSON reply, arrays inline (slow for large batches, simple for any client): the text
 * `JSON.stringify({id, result})` would give, written in slices that yield between them.
 */
export function* encodeJsonSteps(id: string | number, view: BatchView): Generator<void, string> {
  const n = view.numEnvs;
  const row = <T extends Typed>(a: T, width: number, i: number) => Array.from(a.subarray(i * width, (i + 1) * width));
  const observations = yield* jsonArraySteps(n, (i) => row(view.observations, OBS_SIZE, i));
  const masks = yield* jsonArraySteps(n, (i) => row(view.masks, NUM_ACTIONS, i));
  const rewards = view.rewardWidth === 1 ? JSON.stringify(Array.from(view.rewards)) : yield* jsonArraySteps(n, (i) => row(view.rewards, view.rewardWidth, i));
  const final = yield* jsonArraySteps(view.final.length, (k) => {
    const f = view.final[k]!;
    return { env: f.env, observation: row(view.finalObservations, OBS_SIZE, f.env), info: f.info };
  });
  const scalars = (a: Int32Array | Uint8Array, map?: (x: number) => unknown) => JSON.stringify(map ? Array.from(a, map) : Array.from(a));
  return (
    `{"id":${JSON.stringify(id)},"result":{"session":${JSON.stringify(view.session)},"numEnvs":${n},` +
    `"observations":${observations},"masks":${masks},"seats":${scalars(view.seats)},"rewards":${rewards},` +
    `"terminated":${scalars(view.terminated, Boolean)},"truncated":${scalars(view.truncated, Boolean)},"final":${final}}}`
  );
}

/**
 * Sparse rows of a float32 matrix, in scratch arrays reused between calls (`indptr`, `indices`,
 * and `values` as the float32 bit patterns, which copies them without conversion).
 */
export class CsrEncoder {
  indptr = new Uint32Array(1);
  indices = new Uint16Array(0);
  values = new Uint32Array(0);
  numRows = 0;
  nnz = 0;

  /** Encodes rows `rows` (or the first `rows` rows) of `matrix` (width OBS_SIZE) by scanning them. */
  encode(matrix: Float32Array, rows: number[] | number): this {
    const bits = new Uint32Array(matrix.buffer, matrix.byteOffset, matrix.length);
    const numRows = typeof rows === 'number' ? rows : rows.length;
    this.reserve(numRows, numRows * OBS_SIZE);
    const { indices, values, indptr } = this;
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
    this.numRows = numRows;
    this.nnz = k;
    return this;
  }

  private reserve(numRows: number, entries: number): void {
    if (this.indptr.length < numRows + 1) this.indptr = new Uint32Array(2 * numRows + 1);
    if (this.indices.length < entries) {
      this.indices = new Uint16Array(2 * entries);
      this.values = new Uint32Array(2 * entries);
    }
  }
}

export type BinaryArrayName = (typeof BINARY_ARRAYS)[number][0];
const CTORS = { float32: Float32Array, int32: Int32Array, uint32: Uint32Array, uint16: Uint16Array, uint8: Uint8Array } as const;
const NUM_PARTS = BINARY_ARRAYS.length;
/** Bytes per element of each array of a frame, in BINARY_ARRAYS order. */
const ELEMENT_BYTES = BINARY_ARRAYS.map(([, dtype]) => CTORS[dtype].BYTES_PER_ELEMENT);
/** Parts this short are copied a byte at a time: a call to Buffer.copy costs more. */
const SHORT_COPY_BYTES = 64;
const ASCII = /^[\x00-\x7f]*$/;

/** Decimal digits of a non-negative integer. */
function digitCount(x: number): number {
  let count = 1;
  for (; x >= 10; count++) x = (x - (x % 10)) / 10;
  return count;
}

/** Writes non-negative integer `x` in decimal at `at`; returns where it ends. */
function writeDigits(frame: Buffer, at: number, x: number): number {
  const end = at + digitCount(x);
  for (let i = end - 1; i >= at; i--) {
    const digit = x % 10;
    frame[i] = 48 + digit;
    x = (x - digit) / 10;
  }
  return end;
}

const ID_OPEN = Buffer.from('{"id":');
const LENGTHS_CLOSE = Buffer.from(']}}');

/**
 * Writes a frame: header length, the JSON header (`{"id":`, the id, then `middle`, which stops
 * right after `"lengths":[`, each array's element count, and `]}}`), padding to 8, then the
 * arrays, each starting 8-byte aligned. Part k has `state.lengths[k]` elements, copied from
 * `state.sources[k]`, or left unwritten where that is null (its padding is zeroed): the caller
 * fills it, from `state.starts[k]`. With a non-negative integer id and an ASCII middle (a
 * session's usual step), the header is written as bytes: building it as text and encoding that
 * cost as much as the rest of a one-env reply.
 */
function writeFrame(id: string | number, middle: string, middleIsAscii: boolean, state: BinaryEncoderState): Buffer {
  const { lengths, sources, starts } = state;
  let bytes = 0;
  for (let k = 0; k < NUM_PARTS; k++) bytes = align8(bytes + lengths[k]! * ELEMENT_BYTES[k]!);
  let frame: Buffer;
  let headerEnd: number;
  if (middleIsAscii && typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) {
    let headerLength = ID_OPEN.length + digitCount(id) + middle.length + NUM_PARTS - 1 + LENGTHS_CLOSE.length;
    for (let k = 0; k < NUM_PARTS; k++) headerLength += digitCount(lengths[k]!);
    headerEnd = 4 + headerLength;
    frame = takeFrame(align8(headerEnd) + bytes);
    frame.writeUInt32LE(headerLength, 0);
    let at = 4 + ID_OPEN.copy(frame, 4);
    at = writeDigits(frame, at, id);
    at += frame.write(middle, at, 'latin1');
    for (let k = 0; k < NUM_PARTS; k++) {
      if (k > 0) frame[at++] = 44; // ','
      at = writeDigits(frame, at, lengths[k]!);
    }
    LENGTHS_CLOSE.copy(frame, at);
  } else {
    let text = `{"id":${JSON.stringify(id)}${middle}`;
    for (let k = 0; k < NUM_PARTS; k++) text += k === 0 ? `${lengths[k]}` : `,${lengths[k]}`;
    text += ']}}';
    const headerLength = Buffer.byteLength(text, 'utf8');
    headerEnd = 4 + headerLength;
    frame = takeFrame(align8(headerEnd) + bytes);
    frame.writeUInt32LE(headerLength, 0);
    frame.write(text, 4, 'utf8');
  }
  const payloadStart = align8(headerEnd);
  // Padding bytes are zeroed so frames are reproducible byte for byte.
  for (let i = headerEnd; i < payloadStart; i++) frame[i] = 0;
  let at = payloadStart;
  for (let k = 0; k < NUM_PARTS; k++) {
    starts[k] = at;
    const byteLength = lengths[k]! * ELEMENT_BYTES[k]!;
    const source = sources[k];
    if (source) {
      const from = state.bytesOf(k, source);
      if (byteLength <= SHORT_COPY_BYTES) for (let j = 0; j < byteLength; j++) frame[at + j] = from[j]!;
      else from.copy(frame, at, 0, byteLength);
    }
    const end = at + byteLength;
    at = payloadStart + align8(end - payloadStart);
    for (let i = end; i < at; i++) frame[i] = 0;
  }
  return frame;
}

/**
 * Writes the CSR of `rows`' first `numRows` rows (`nnz` entries) straight into `frame` (indptr,
 * indices and values from the byte offsets `starts`): every entry ObservationRows lists, which
 * are exactly the row's non-zero entries, each once (env/observation.ts), in the order they were
 * written.
 */
function writeRowsCsr(rows: ObservationRows, numRows: number, nnz: number, frame: Buffer, starts: readonly number[]): void {
  // takeFrame's frames start 8-byte aligned in their buffer, as do the parts within a frame.
  const at = (k: number) => frame.byteOffset + starts[k]!;
  const indptr = new Uint32Array(frame.buffer, at(0), numRows + 1);
  const indices = new Uint16Array(frame.buffer, at(1), nnz);
  const values = new Uint32Array(frame.buffer, at(2), nnz);
  const matrix = rows.out;
  const bits = new Uint32Array(matrix.buffer, matrix.byteOffset, matrix.length);
  const set = rows.setIndices;
  let k = 0;
  indptr[0] = 0;
  for (let r = 0; r < numRows; r++) {
    const base = r * OBS_SIZE;
    const slot = r * rows.stride;
    const count = rows.setCounts[r]!;
    for (let j = 0; j < count; j++) {
      const column = set[slot + j]!;
      indices[k] = column;
      values[k++] = bits[base + column]!;
    }
    indptr[r + 1] = k;
  }
}

function countEntries(rows: ObservationRows, numRows: number): number {
  let count = 0;
  for (let r = 0; r < numRows; r++) count += rows.setCounts[r]!;
  return count;
}

/** A session's scratch space for binary replies. */
export class BinaryEncoderState {
  readonly csr = new CsrEncoder();
  readonly finalCsr = new CsrEncoder();
  /**
   * The header of a step in which no episode ended differs from the session's previous one only
   * in id and counts: its middle part is kept (a session's replies are mostly these).
   */
  middle = '';
  middleIsAscii = false;
  /** Per array of the frame (writeFrame): element count, source (null: written in place), start. */
  readonly lengths: number[] = new Array<number>(NUM_PARTS).fill(0);
  readonly sources: (Typed | null)[] = new Array<Typed | null>(NUM_PARTS).fill(null);
  readonly starts: number[] = new Array<number>(NUM_PARTS).fill(0);
  private readonly viewed: (Typed | null)[] = new Array<Typed | null>(NUM_PARTS).fill(null);
  private readonly views: Buffer[] = [];

  /** Array k's source as bytes. A session replies from the same arrays every time: their views are kept. */
  bytesOf(k: number, source: Typed): Buffer {
    if (this.viewed[k] !== source) {
      this.views[k] = Buffer.from(source.buffer, source.byteOffset, source.byteLength);
      this.viewed[k] = source;
    }
    return this.views[k]!;
  }

  /** Sets array k of the next frame. */
  set(k: number, source: Typed | null, length: number): void {
    this.sources[k] = source;
    this.lengths[k] = length;
  }
}

/** The binary reply of a batch (see protocol.ts). */
export function encodeBinary(id: string | number, view: BatchView, state: BinaryEncoderState): Buffer {
  const { csr, finalCsr } = state;
  const n = view.numEnvs;
  // Observations written through ObservationRows that list their entries go into the frame
  // directly; others are scanned.
  const rows = view.observationRows?.listsEntries ? view.observationRows : undefined;
  const obs = rows ? null : csr.encode(view.observations, n);
  const fin = view.final.length === 0 ? finalCsr.encode(view.finalObservations, 0) : finalCsr.encode(view.finalObservations, view.final.map((f) => f.env));
  let middle: string;
  let middleIsAscii = false;
  if (view.final.length === 0) {
    if (!state.middle) {
      state.middle = `,"result":${JSON.stringify({ session: view.session, numEnvs: n, rewardWidth: view.rewardWidth }).slice(0, -1)},"final":[],"lengths":[`;
      state.middleIsAscii = ASCII.test(state.middle);
    }
    middle = state.middle;
    middleIsAscii = state.middleIsAscii;
  } else {
    const result = JSON.stringify({ session: view.session, numEnvs: n, rewardWidth: view.rewardWidth, final: view.final });
    middle = `,"result":${result.slice(0, -1)},"lengths":[`;
  }
  const nnz = rows ? countEntries(rows, n) : obs!.nnz;
  state.set(0, obs && obs.indptr, n + 1);
  state.set(1, obs && obs.indices, nnz);
  state.set(2, obs && obs.values, nnz);
  state.set(3, view.masks, n * NUM_ACTIONS);
  state.set(4, view.seats, n);
  state.set(5, view.rewards, n * view.rewardWidth);
  state.set(6, view.terminated, n);
  state.set(7, view.truncated, n);
  state.set(8, fin.indptr, fin.numRows + 1);
  state.set(9, fin.indices, fin.nnz);
  state.set(10, fin.values, fin.nnz);
  const frame = writeFrame(id, middle, middleIsAscii, state);
  if (rows) writeRowsCsr(rows, n, nnz, frame, state.starts);
  return frame;
}

/**
 * The arrays of a decoded frame, each a view into the frame, made when first read (a reply is
 * often read for one or two of them).
 */
export class FrameArrays {
  private readonly cache: (Typed | undefined)[] = [];

  constructor(
    private readonly frame: Uint8Array,
    private readonly offsets: number[],
    private readonly lengths: number[],
  ) {}

  get(k: number): Typed {
    let array = this.cache[k];
    if (!array) {
      const Ctor = CTORS[BINARY_ARRAYS[k]![1]];
      array = new Ctor(this.frame.buffer as ArrayBuffer, this.offsets[k]!, this.lengths[k]!);
      this.cache[k] = array;
    }
    return array;
  }
}
BINARY_ARRAYS.forEach(([name], k) => {
  Object.defineProperty(FrameArrays.prototype, name, { get(this: FrameArrays) { return this.get(k); }, enumerable: true });
});

/** The typed array class of each dtype of BINARY_ARRAYS. */
interface ArrayOfDtype {
  float32: Float32Array;
  int32: Int32Array;
  uint32: Uint32Array;
  uint16: Uint16Array;
  uint8: Uint8Array;
}

/**
 * A decoded frame's arrays by name, each typed by its dtype in BINARY_ARRAYS (they were all the
 * union of the five, so `denseFromCsr(arrays['observations.indptr'], ...)` needed casts).
 */
export type DecodedArrays = FrameArrays & { readonly [A in (typeof BINARY_ARRAYS)[number] as A[0]]: ArrayOfDtype[A[1]] };

/** Decodes a binary frame (for TypeScript clients and tests): the header, and the arrays as views. */
export function decodeBinaryFrame(received: Uint8Array): { header: { id: string | number; result: Record<string, unknown> }; arrays: DecodedArrays } {
  // The payload is 8-byte aligned within the frame; a frame that does not start aligned in its
  // buffer (a slice of a socket read) is copied once, whole, rather than array by array.
  const frame = received.byteOffset % 8 === 0 ? received : new Uint8Array(received);
  const headerLength = frame[0]! | (frame[1]! << 8) | (frame[2]! << 16) | (frame[3]! << 24);
  const header = JSON.parse(Buffer.from(frame.buffer, frame.byteOffset + 4, headerLength).toString('utf8'));
  const lengths = header.result.lengths as number[];
  const offsets: number[] = [];
  let at = frame.byteOffset + align8(4 + headerLength);
  for (let k = 0; k < BINARY_ARRAYS.length; k++) {
    offsets.push(at);
    at += align8(lengths[k]! * ELEMENT_BYTES[k]!);
  }
  return { header, arrays: new FrameArrays(frame, offsets, lengths) as DecodedArrays };
}

/** Expands CSR rows back to a dense N x OBS_SIZE matrix. */
export function denseFromCsr(indptr: Uint32Array, indices: Uint16Array, values: Float32Array): Float32Array {
  const n = indptr.length - 1;
  const out = new Float32Array(n * OBS_SIZE);
  for (let r = 0; r < n; r++) for (let k = indptr[r]!; k < indptr[r + 1]!; k++) out[r * OBS_SIZE + indices[k]!] = values[k]!;
  return out;
}
