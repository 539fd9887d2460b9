// Size limits of the bridge's messages and of what a connection may send before its hello:
// what hello advertises (rows per policy.act, envs per step) follows from the message limit here.

import { NUM_ACTIONS } from '../env/rules/index.js';
import { MAX_OBSERVATION_JSON_BYTES } from '../env/observation.js';
import { MAX_POLICY_ROWS } from './protocol.js';

/**
 * Bytes of queued frames past which a connection's further frames are not kept: each is refused
 * in its turn (connection.ts, UNREAD_FRAME). The socket is read on, so a close frame is seen at once.
 */
export const MAX_QUEUED_BYTES = 4 << 20;

/**
 * The most bytes one policy.act row takes as JSON.stringify writes it: its observation at its
 * longest (real observations hold values such as 0.20000000298023224) and its mask (a digit and
 * a comma per entry), with the brackets and commas around them.
 */
const POLICY_ROW_BYTES = MAX_OBSERVATION_JSON_BYTES + 2 * NUM_ACTIONS + 4;
/**
 * Room for the rest of a request beside its rows or actions: its keys, a request id of 128
 * characters (code points: each at worst 12 bytes, as an ASCII-only encoder escapes one outside
 * the BMP, `\ud83d\ude00`; 512 bytes let 128 emoji close the connection at the smallest limit)
 * and a session or policy id. What hello advertises fits the message limit beside it.
 */
const ENVELOPE_BYTES = 2048;
const POLICY_ACT_ENVELOPE_BYTES = ENVELOPE_BYTES;
/** The smallest message limit a server may have: one policy.act row must fit. */
export const MIN_MESSAGE_BYTES = POLICY_ACT_ENVELOPE_BYTES + POLICY_ROW_BYTES;

/** The most policy.act rows a request of `maxMessageBytes` surely carries, however its values are written by JSON.stringify. */
export function maxPolicyRowsFor(maxMessageBytes: number): number {
  return Math.max(0, Math.min(MAX_POLICY_ROWS, Math.floor((maxMessageBytes - POLICY_ACT_ENVELOPE_BYTES) / POLICY_ROW_BYTES)));
}

const STEP_ENVELOPE_BYTES = ENVELOPE_BYTES;
/** Bytes of one action in an env.step request as JSON.stringify writes it: up to 2 digits and a comma. */
const STEP_ACTION_BYTES = 3;

/**
 * The most envs whose env.step request surely fits `maxMessageBytes`: a connection gets no more
 * (with a small message limit, a session was created and reset that no step could reach).
 */
export function maxStepEnvsFor(maxMessageBytes: number): number {
  return Math.max(1, Math.floor((maxMessageBytes - STEP_ENVELOPE_BYTES) / STEP_ACTION_BYTES));
}

/**
 * The largest frame a connection may send before its hello succeeds, unless a hello is already
 * queued ahead of it. A hello is at most ~8 KiB (a 1024-character token and a 128-character id,
 * every character escaped); unauthenticated sockets sending 1 MiB frames, each decoded and
 * parsed, held another client's ping up for a second.
 */
export const MAX_PRE_HELLO_FRAME_BYTES = 16 << 10;
/** The close code for a frame past MAX_PRE_HELLO_FRAME_BYTES (RFC 6455: message too big). */
export const CLOSE_TOO_BIG = 1009;
/**
 * The most frames a connection may send before its hello succeeds, the hello included; the next
 * closes it (1008) unread. Frames before hello are handled as they are read, not in turn: three
 * sockets writing 60,000 tiny pings each in one go had ~450,000 refusals answered and held a
 * greeted client's ping up for over a second.
 */
export const MAX_FRAMES_BEFORE_HELLO = 8;
/**
 * The most bytes a socket may send before its hello succeeds: MAX_FRAMES_BEFORE_HELLO frames of
 * MAX_PRE_HELLO_FRAME_BYTES with their headers (14 bytes at most). ws hands a frame over only
 * once it holds all of it, so the frame bound alone let 200 silent sockets each send 1 MiB less a
 * byte and hold 200 MB until their hello deadline; the server counts the socket's bytes instead.
 */
export const MAX_PRE_HELLO_BYTES = MAX_FRAMES_BEFORE_HELLO * (MAX_PRE_HELLO_FRAME_BYTES + 14);
