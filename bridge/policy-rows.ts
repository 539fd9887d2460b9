// policy.act's rows as typed arrays. The connection packs a well-formed request on arrival, so
// neither the schema (about 8 ms for 512 rows) nor the copy of 40,000 numbers into a worker
// (about 12 ms as arrays, a memcpy as typed arrays) holds the main thread, which reads every
// client's socket; a request it cannot pack goes through the schema, which names what is wrong.

import { MAX_SEATS, NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE, observationSpec } from '../env/observation.js';
import { BridgeError } from './errors.js';
import { MAX_POLICY_ROWS, type ParamsOf } from './protocol.js';

export interface PackedRows {
  /** N x OBS_SIZE, each entry within its slice's bounds. */
  observations: Float32Array;
  /** N x NUM_ACTIONS of 0/1. */
  masks: Uint8Array;
  /** The seats the client gave, or undefined: then each row's encoded seat. */
  seats: Int32Array | undefined;
}

/** policy.act's params packed by the connection (see packPolicyAct). */
export interface PackedPolicyAct {
  policy: string;
  rows: PackedRows;
}

export type PolicyActParams = ParamsOf<'policy.act'> | PackedPolicyAct;

/** The slice of each observation entry, for naming the bounds an entry breaks. */
export const SLICE_OF_ENTRY = observationSpec().slices.flatMap((slice) => Array.from({ length: slice.size }, () => slice));
const LOW = Float64Array.from(SLICE_OF_ENTRY, (slice) => slice.low);
const HIGH = Float64Array.from(SLICE_OF_ENTRY, (slice) => slice.high);

/**
 * The rows of a well-formed policy.act request with observations, each entry within its bounds,
 * packed; or null, and the schema and actWithPolicy then say what is wrong. Accepts only what
 * they accept.
 */
export function packPolicyAct(raw: Record<string, unknown>): PackedPolicyAct | null {
  for (const key in raw) if (key !== 'id' && key !== 'method' && key !== 'params') return null;
  const params = raw.params as Record<string, unknown> | null | undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return null;
  for (const key in params) if (key !== 'policy' && key !== 'observations' && key !== 'masks' && key !== 'seats') return null;
  const { policy, observations, masks, seats } = params;
  if (typeof policy !== 'string' || policy.length > 64 || !Array.isArray(observations) || !Array.isArray(masks)) return null;
  const n = observations.length;
  if (n < 1 || n > MAX_POLICY_ROWS || masks.length !== n) return null;
  const packed: PackedRows = { observations: new Float32Array(n * OBS_SIZE), masks: new Uint8Array(n * NUM_ACTIONS), seats: undefined };
  for (let i = 0; i < n; i++) {
    const row: unknown = observations[i];
    if (!Array.isArray(row) || row.length !== OBS_SIZE) return null;
    const base = i * OBS_SIZE;
    for (let k = 0; k < OBS_SIZE; k++) {
      const value: unknown = row[k];
      if (typeof value !== 'number') return null;
      packed.observations[base + k] = value;
      // The float32 is checked, as packRows does.
      const stored = packed.observations[base + k]!;
      if (!(stored >= LOW[k]! && stored <= HIGH[k]!)) return null;
    }
    const maskRow: unknown = masks[i];
    if (!Array.isArray(maskRow) || maskRow.length !== NUM_ACTIONS) return null;
    for (let a = 0; a < NUM_ACTIONS; a++) {
      const value: unknown = maskRow[a];
      if (!Number.isFinite(value)) return null;
      packed.masks[i * NUM_ACTIONS + a] = value ? 1 : 0;
    }
  }
  if (seats !== undefined) {
    if (!Array.isArray(seats) || seats.length !== n) return null;
    packed.seats = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const seat: unknown = seats[i];
      if (!Number.isInteger(seat) || (seat as number) < 0 || (seat as number) >= MAX_SEATS) return null;
      packed.seats[i] = seat as number;
    }
  }
  return { policy, rows: packed };
}

/** Packs rows the schema accepted; errors name the row and entry. */
export function packRows(params: ParamsOf<'policy.act'>): PackedRows {
  const rows = params.observations!;
  const maskRows = params.masks!;
  const n = rows.length;
  if (maskRows.length !== n) throw new BridgeError('invalid_params', `params.masks: expected ${n} rows like observations, got ${maskRows.length}`, 'params.masks');
  const observations = new Float32Array(n * OBS_SIZE);
  const masks = new Uint8Array(n * NUM_ACTIONS);
  rows.forEach((row, i) => {
    if (row.length !== OBS_SIZE) throw new BridgeError('invalid_params', `params.observations[${i}]: expected ${OBS_SIZE} numbers, got ${row.length}`, `params.observations[${i}]`);
    observations.set(row, i * OBS_SIZE);
  });
  for (let j = 0; j < observations.length; j++) {
    const k = j % OBS_SIZE;
    if (observations[j]! >= LOW[k]! && observations[j]! <= HIGH[k]!) continue;
    const slice = SLICE_OF_ENTRY[k]!;
    const row = Math.floor(j / OBS_SIZE);
    const at = `params.observations[${row}][${k}]`;
    // An encoder never writes such entries, and a network fed, say, 3e38 answers NaN probabilities.
    throw new BridgeError('invalid_params', `${at}: ${rows[row]![k]} is outside [${slice.low}, ${slice.high}], the bounds of slice "${slice.name}" (observationSpec)`, at);
  }
  maskRows.forEach((row, i) => {
    if (row.length !== NUM_ACTIONS) throw new BridgeError('invalid_params', `params.masks[${i}]: expected ${NUM_ACTIONS} numbers, got ${row.length}`, `params.masks[${i}]`);
    for (let a = 0; a < NUM_ACTIONS; a++) masks[i * NUM_ACTIONS + a] = row[a] ? 1 : 0;
  });
  if (params.seats && params.seats.length !== n) throw new BridgeError('invalid_params', `params.seats: expected ${n} seats, got ${params.seats.length}`, 'params.seats');
  return { observations, masks, seats: params.seats ? Int32Array.from(params.seats) : undefined };
}
