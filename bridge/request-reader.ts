// Reading a request frame before it is dispatched: the text, the JSON object up to its method
// (a known one, an id, no key given twice, no padding past the limits of env/json-scan.ts), and
// the hand-checked params of the hottest requests (env.step, ping), which otherwise the schema checks.

import { isAscii } from 'node:buffer';
import type { RawData } from 'ws';
import type { ErrorBody } from './errors.js';
import { MAX_SESSION_ID_LENGTH, MAX_STEP_ACTIONS, METHODS, type Method, type ParamsOf } from './protocol.js';
import type { Id } from './replies.js';
import { BYTES_PER_CONTAINER, MAX_KEY_NAMES, MAX_REQUEST_OBJECT_KEYS, duplicateKeyAt, repeatedKeyReason, scanFrame, utf8Text } from '../env/json-scan.js';

/**
 * A frame's text. Most requests are ASCII, and for those a Latin-1 slice is the same text at a
 * tenth of the cost: the UTF-8 decoder took ~3.5 ms of this thread for a 1 MiB frame.
 */
function frameText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : utf8Text(bytes);
}

/**
 * A text frame read as a request up to its method (JSON, an object, its id, no key given twice,
 * a known method), or why it is refused, with the id to answer it under.
 */
export function readRequest(data: RawData, maxMessageBytes: number): { id: Id; method: Method; raw: Record<string, unknown> } | { refused: ErrorBody; id: Id | null } {
  let message: unknown;
  const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  try {
    const padded = paddingRefused(bytes, maxMessageBytes);
    if (padded) return { refused: padded, id: null };
    message = JSON.parse(frameText(bytes));
  } catch (e) {
    return { refused: { code: 'parse_error', message: `not valid UTF-8 JSON: ${(e as Error).message}` }, id: null };
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return { refused: { code: 'invalid_request', message: 'a request is a JSON object {id, method, params}' }, id: null };
  }
  const raw = message as Record<string, unknown>;
  if (!isId(raw.id)) return { refused: { code: 'invalid_request', message: 'id must be a string (at most 128 characters) or an integer', field: 'id' }, id: null };
  const id = raw.id;
  // JSON.parse keeps the last of a repeated key: a validator or proxy reading the first would
  // see another request than the one run (`"numEnvs":1,"numEnvs":4096`). Refused, naming it.
  const twice = duplicateKeyAt(bytes);
  if (twice !== null) {
    const refused: ErrorBody = { code: twice.field.startsWith('params.') ? 'invalid_params' : 'invalid_request', message: repeatedKeyReason(twice), field: twice.field };
    return { refused, id: twice.field === 'id' ? null : id };
  }
  if (typeof raw.method !== 'string') return { refused: { code: 'invalid_request', message: 'method must be a string', field: 'method' }, id };
  if (!(METHODS as string[]).includes(raw.method)) {
    return { refused: { code: 'unknown_method', message: `unknown method "${raw.method.slice(0, 64)}" (known: ${METHODS.join(', ')})`, field: 'method' }, id };
  }
  return { id, method: raw.method as Method, raw };
}

/** The refusal of a frame whose arrays, objects or keys only padding has (env/json-scan.ts), or null. */
function paddingRefused(bytes: Uint8Array, maxMessageBytes: number): ErrorBody | null {
  const maxContainers = Math.floor(maxMessageBytes / BYTES_PER_CONTAINER);
  const problem = scanFrame(bytes, maxContainers, MAX_REQUEST_OBJECT_KEYS);
  if (!problem) return null;
  if (problem.limit === 'maxContainers') {
    return {
      code: 'limit_exceeded',
      message: `not read: more than ${maxContainers} arrays and objects ([ and { outside strings counted); a request holds at most one per ${BYTES_PER_CONTAINER} bytes of the message limit`,
      details: { limit: 'maxContainers' },
    };
  }
  const { field } = problem;
  const why =
    problem.limit === 'maxKeys'
      ? `more than ${MAX_REQUEST_OBJECT_KEYS} fields; no object in a request has as many`
      : `the request names more than ${MAX_KEY_NAMES} different keys; none has as many`;
  return { code: field.startsWith('params') ? 'invalid_params' : 'invalid_request', message: `${field || '(root)'}: not read: ${why}`, field };
}

/**
 * The params of a well-formed env.step request, checked by hand (the hottest request; the schema
 * costs as much as stepping one env), or null: then the schema checks it and names what is wrong.
 * Accepts exactly what `stepRequest` accepts.
 */
export function validStepParams(raw: Record<string, unknown>): ParamsOf<'env.step'> | null {
  for (const key in raw) if (key !== 'id' && key !== 'method' && key !== 'params') return null;
  const params = raw.params as { session?: unknown; actions?: unknown } | null | undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return null;
  for (const key in params) if (key !== 'session' && key !== 'actions') return null;
  const { session, actions } = params;
  if (typeof session !== 'string' || session.length > MAX_SESSION_ID_LENGTH || !Array.isArray(actions) || actions.length < 1 || actions.length > MAX_STEP_ACTIONS) return null;
  if (firstNonInteger(actions) >= 0) return null;
  return params as ParamsOf<'env.step'>;
}

/**
 * The first action of an env.step that is no whole number, named, or null. The schema would report
 * every bad entry of a batch: 65,536 of them took 0.2-0.3 s of this thread per request.
 */
export function firstBadAction(raw: Record<string, unknown>): ErrorBody | null {
  const actions = (raw.params as { actions?: unknown } | null | undefined)?.actions;
  if (!Array.isArray(actions) || actions.length > MAX_STEP_ACTIONS) return null;
  const bad = firstNonInteger(actions);
  if (bad < 0) return null;
  const field = `params.actions[${bad}]`;
  return { code: 'invalid_params', message: `${field}: an action id is a whole number`, field };
}

/** The index of the first entry of `list` that is no whole number (see protocol.ts, actionId), or -1. */
function firstNonInteger(list: readonly unknown[]): number {
  for (let i = 0; i < list.length; i++) if (!Number.isInteger(list[i])) return i;
  return -1;
}

/** `{}` for a well-formed request without params (ping), else null (the schema then says what is wrong). */
export function validEmptyParams(raw: Record<string, unknown>): Record<string, never> | null {
  for (const key in raw) if (key !== 'id' && key !== 'method' && key !== 'params') return null;
  const params = raw.params;
  if (params === undefined) return {};
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return null;
  for (const _key in params) return null;
  return {};
}

function isId(value: unknown): value is Id {
  return (typeof value === 'string' && codePointsAtMost(value, 128)) || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** Whether `text` has at most `max` code points, as zod and JSON Schema count a string's length. */
export function codePointsAtMost(text: string, max: number): boolean {
  if (text.length <= max) return true;
  if (text.length > 2 * max) return false;
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}
