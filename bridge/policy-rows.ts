// policy.act's rows as typed arrays. The connection packs a well-formed request on arrival, so
// neither the schema (8-40 ms for 512 rows) nor the copy of 250,000 numbers into a worker
// (about 12 ms as arrays, a memcpy as typed arrays) holds the main thread, which reads every
// client's socket. A request it cannot pack is screened on one row of each matrix (the first
// refused, or the first), which names what is wrong at the price of a row (screenPolicyAct).

import { MAX_SEATS, NUM_ACTIONS } from '../env/rules/index.js';
import { firstIssue } from '../env/rules/zod-issue.js';
import { OBS_SIZE, observationSpec } from '../env/observation.js';
import { BridgeError, toErrorBody, type ErrorBody } from './errors.js';
import { MAX_POLICY_ROWS, REQUEST_SCHEMAS, type ParamsOf } from './protocol.js';

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

/**
 * policy.act's params whose rows the main thread refused (screenPolicyAct): the error goes out
 * once the policy is resolved, as the schema-checked rows' errors used to from the worker.
 */
export interface RefusedPolicyAct {
  policy: string;
  refused: ErrorBody;
}

export type PolicyActParams = ParamsOf<'policy.act'> | PackedPolicyAct | RefusedPolicyAct;

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
    const maskRow: unknown = masks[i];
    if (!observationRowPacks(row) || !maskRowPacks(maskRow)) return null;
    packed.observations.set(row as number[], i * OBS_SIZE);
    for (let a = 0; a < NUM_ACTIONS; a++) packed.masks[i * NUM_ACTIONS + a] = (maskRow as number[])[a] ? 1 : 0;
  }
  if (seats !== undefined) {
    if (!Array.isArray(seats) || seats.length !== n || !seats.every(seatAccepted)) return null;
    packed.seats = Int32Array.from(seats as number[]);
  }
  return { policy, rows: packed };
}

/** The row counts packRows checks: masks like observations, and a seat per row when seats are given. */
function checkRowCounts(n: number, numMasks: number, numSeats: number | undefined): void {
  if (numMasks !== n) throw new BridgeError('invalid_params', `params.masks: expected ${n} rows like observations, got ${numMasks}`, 'params.masks');
  if (numSeats !== undefined && numSeats !== n) throw new BridgeError('invalid_params', `params.seats: expected ${n} seats, got ${numSeats}`, 'params.seats');
}

/** Packs rows the schema accepted; errors name the row and entry. */
export function packRows(params: ParamsOf<'policy.act'>): PackedRows {
  const rows = params.observations!;
  const maskRows = params.masks!;
  const n = rows.length;
  checkRowCounts(n, maskRows.length, undefined);
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
  checkRowCounts(n, n, params.seats?.length);
  return { observations, masks, seats: params.seats ? Int32Array.from(params.seats) : undefined };
}

/** Whether the schema accepts `row` as a row of observations or masks: an array of finite numbers. */
function rowOfNumbers(row: unknown): boolean {
  if (!Array.isArray(row)) return false;
  for (let k = 0; k < row.length; k++) if (!Number.isFinite(row[k])) return false;
  return true;
}

/**
 * Whether the schema accepts `row` and packRows packs it as an observation row: OBS_SIZE numbers,
 * each within its slice's bounds as the float32 it is stored as (NaN and infinities are not).
 */
function observationRowPacks(row: unknown): boolean {
  if (!Array.isArray(row) || row.length !== OBS_SIZE) return false;
  for (let k = 0; k < OBS_SIZE; k++) {
    const value: unknown = row[k];
    if (typeof value !== 'number') return false;
    const stored = Math.fround(value);
    if (!(stored >= LOW[k]! && stored <= HIGH[k]!)) return false;
  }
  return true;
}

/** Whether the schema accepts `row` and packRows packs it as a mask row: NUM_ACTIONS finite numbers. */
const maskRowPacks = (row: unknown) => Array.isArray(row) && row.length === NUM_ACTIONS && rowOfNumbers(row);
const seatAccepted = (seat: unknown) => Number.isInteger(seat) && (seat as number) >= 0 && (seat as number) < MAX_SEATS;

/**
 * The row of `list` to check: the first the schema refuses, else the first packRows refuses, else
 * 0. The schema's errors come before packRows' (it runs first), so a schema error anywhere wins.
 */
function rowToCheck(list: unknown[], schemaAccepts: (row: unknown) => boolean, packs: (row: unknown) => boolean): number {
  // A list past the bound is refused for its length (narrowed): 500,000 seats were walked first.
  if (list.length > MAX_POLICY_ROWS) return 0;
  for (let i = 0; i < list.length; i++) if (!schemaAccepts(list[i])) return i;
  for (let i = 0; i < list.length; i++) if (!packs(list[i])) return i;
  return 0;
}

/**
 * `list` cut to its entry `at` for the schema: one row is checked instead of up to 512. A list
 * longer than the schema allows becomes MAX_POLICY_ROWS + 1 empty rows, so that the schema says
 * so (its message names the limit, not the length) without checking 300,000 of them.
 */
function narrowed(list: unknown[], at: number, filler: () => unknown = () => []): unknown[] {
  if (list.length > MAX_POLICY_ROWS) return Array.from({ length: MAX_POLICY_ROWS + 1 }, filler);
  return list.length === 0 ? list : [list[at]];
}

/**
 * What is wrong with a policy.act request with observation or mask rows that packPolicyAct
 * refused, found without running the schema over every row: the schema, then packRows, check a
 * copy holding one row of each list (see rowToCheck) and the row counts come from the whole
 * request. The error names the row of the whole request. Returns
 * - `{ invalid }`: the schema refuses the request (answered at once, as before);
 * - `{ params }`: the schema would accept it but its rows cannot be packed; the error is
 *   reported once the policy is resolved (RefusedPolicyAct), where packRows used to throw it;
 * - null: nothing found this way (no row lists, or the fast path is stricter than the schema
 *   here): the whole request goes through the schema as before.
 * Where a request has several faults the one named may differ from the whole schema's first.
 */
export function screenPolicyAct(raw: Record<string, unknown>): { invalid: ErrorBody } | { params: RefusedPolicyAct } | null {
  const params = raw.params;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return null;
  const { observations, masks, seats } = params as Record<string, unknown>;
  if (!Array.isArray(observations) && !Array.isArray(masks)) return null;
  const rowOf = { observations: 0, masks: 0, seats: 0 };
  const copy: Record<string, unknown> = { ...(params as Record<string, unknown>) };
  if (Array.isArray(observations)) {
    rowOf.observations = rowToCheck(observations, rowOfNumbers, observationRowPacks);
    copy.observations = narrowed(observations, rowOf.observations);
  }
  if (Array.isArray(masks)) {
    rowOf.masks = rowToCheck(masks, rowOfNumbers, maskRowPacks);
    copy.masks = narrowed(masks, rowOf.masks);
  }
  if (Array.isArray(seats)) {
    rowOf.seats = rowToCheck(seats, seatAccepted, seatAccepted);
    copy.seats = narrowed(seats, rowOf.seats, () => 0);
  }
  // Index 0 of a narrowed list is its row rowOf[list] in the whole request.
  const inWhole = (field: string) =>
    field.replace(/^params\.(observations|masks|seats)\[0\]/, (_, list: keyof typeof rowOf) => `params.${list}[${rowOf[list]}]`);
  const parsed = REQUEST_SCHEMAS['policy.act'].safeParse({ ...raw, params: copy });
  if (!parsed.success) {
    const { field, reason } = firstIssue(parsed.error);
    const whole = inWhole(field);
    return { invalid: { code: whole.startsWith('params') ? 'invalid_params' : 'invalid_request', message: `${whole || '(root)'}: ${reason}`, field: whole } };
  }
  const checked = (parsed.data as { params: ParamsOf<'policy.act'> }).params;
  if (checked.record !== undefined || !Array.isArray(observations) || !Array.isArray(masks)) return null;
  try {
    checkRowCounts(observations.length, masks.length, Array.isArray(seats) ? seats.length : undefined);
    packRows(checked);
  } catch (e) {
    const body = toErrorBody(e);
    if (body.field === undefined) return null;
    const whole = inWhole(body.field);
    return { params: { policy: checked.policy, refused: { ...body, field: whole, message: body.message.replace(body.field, whole) } } };
  }
  return null;
}
