// The bridge's error codes, and the mapping from the project's typed errors to error replies.
// Every failure a request can cause becomes one of these codes; nothing escapes to `ws`.

import { AmountOverflowError, IllegalActionError, ValidationError } from '../env/rules/index.js';
import { ReplayIllegalActionError, ReplayOverflowError } from '../env/rules/record.js';
import { CHECKPOINT_ERROR_CODES, CheckpointError } from '../checkpoints/errors.js';

export const ERROR_CODES = {
  parse_error: 'the frame is not valid UTF-8 JSON (id is null)',
  invalid_request: 'not a request object: id or method missing or of the wrong type',
  unknown_method: 'no such method',
  invalid_params: 'params violate the method schema or the env config / rule set; field names the path',
  handshake_required: 'the first request must be hello',
  unsupported_version: 'the protocol version of hello is not the server one',
  unauthorized: 'missing or wrong token in hello; the server closes a connection it had not greeted after this reply (a repeated hello on a greeted one is only answered)',
  unknown_session: 'no session with this id on this connection',
  unknown_policy: 'no policy with this id on this connection',
  not_reset: 'env.step, env.view, env.record or env.observe before the first env.reset of the session',
  illegal_action: 'an action the rules do not allow; nothing was stepped',
  invalid_record: 'the record is malformed or replays an illegal action',
  no_decision: 'nobody is to act in the record state (the session is over, or the next hand cannot be dealt)',
  amount_overflow: 'an amount would pass 2^53 - 1 units (docs/rules.md §3): the session cannot start or go on',
  checkpoint_error: 'the checkpoint could not be loaded (details.reason is the CheckpointError code)',
  limit_exceeded: 'a limit would be passed: per connection sessions, envs, hands or policies, envs or hands over all connections, or a request longer than the message limit (refused by the client itself); at hello, the server-wide connection limit (the socket is then closed, 1013)',
  shutting_down: 'the server is closing and accepts no new work',
  internal_error: 'an unexpected failure; the connection and other sessions keep working',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error that becomes an error reply with this code. */
export class BridgeError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
  details?: Record<string, unknown>;
}

/**
 * Maps anything a handler threw to a reply body. `fieldPrefix` places ValidationError fields
 * (relative to what was validated, e.g. `rules.players`) in the request, e.g. `params.config`.
 */
export function toErrorBody(e: unknown, fieldPrefix = 'params'): ErrorBody {
  if (e instanceof BridgeError) return withOptional({ code: e.code, message: e.message }, e.field, e.details);
  if (e instanceof ReplayIllegalActionError) {
    return { code: 'invalid_record', message: e.message, field: 'params.record', details: { hand: e.hand, action: e.actionIndex, seat: e.seat, reason: e.reason } };
  }
  if (e instanceof ValidationError) {
    const field = e.field ? `${fieldPrefix}.${e.field}` : fieldPrefix;
    return { code: 'invalid_params', message: `${field}: ${e.reason}`, field };
  }
  if (e instanceof IllegalActionError) {
    return { code: 'illegal_action', message: e.message, details: { action: e.action, seat: e.seat, reason: e.reason } };
  }
  if (e instanceof AmountOverflowError) return { code: 'amount_overflow', message: e.message, details: { hand: e.hand } };
  if (e instanceof ReplayOverflowError) {
    return { code: 'amount_overflow', message: e.message, field: 'params.record', details: { hand: e.hand, action: e.actionIndex, seat: e.seat } };
  }
  if (e instanceof CheckpointError) return { code: 'checkpoint_error', message: checkpointMessage(e, 'the checkpoint'), details: { reason: e.code } };
  const message = e instanceof Error ? e.message : String(e);
  return { code: 'internal_error', message };
}

function withOptional(body: ErrorBody, field?: string, details?: Record<string, unknown>): ErrorBody {
  if (field !== undefined) body.field = field;
  if (details !== undefined) body.details = details;
  return body;
}

/**
 * A checkpoint error as a client may read it: named by the spec the client sent, never by the
 * server's resolved path (a symlink's target, the server's folders).
 */
export function checkpointMessage(e: CheckpointError, spec: string): string {
  const reason = e.reason.split(e.path).join(spec);
  return `checkpoint ${CHECKPOINT_ERROR_CODES[e.code]}: ${spec}: ${reason}`;
}
