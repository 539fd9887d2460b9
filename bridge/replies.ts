// Reply frames: `{id, result}` and `{id, error}` as JSON text, and the batch replies of env.reset
// and env.step in the session's encoding. Built where the work happens (main thread or worker).

import type { ErrorBody } from './errors.js';
import { BinaryEncoderState, encodeBinary, encodeJsonSteps, type BatchView, type Encoding } from './codec.js';

export type Id = string | number;
export type Reply = string | Uint8Array;

export function ok(id: Id, result: unknown): string {
  return JSON.stringify({ id, result });
}

export function errorReply(id: Id | null, error: ErrorBody): string {
  return JSON.stringify({ id, error });
}

/** A session's encoding and the scratch space its binary replies reuse. */
export class BatchEncoder {
  private readonly state = new BinaryEncoderState();

  constructor(readonly encoding: Encoding) {}

  /**
   * The reply, built a slice at a time (JSON; a binary frame is one copy, written whole): the
   * caller drives the steps, giving way between them, or drains them.
   */
  *encodeSteps(id: Id, view: BatchView): Generator<void, Reply> {
    if (this.encoding === 'binary') return encodeBinary(id, view, this.state);
    return yield* encodeJsonSteps(id, view);
  }
}
