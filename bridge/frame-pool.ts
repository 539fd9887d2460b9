// Buffers for large binary replies, reused: a fresh 80 KB allocation per 256-env reply cost the
// server more than building the frame (memory new to the process, page by page). A frame goes
// back to the pool only once nothing reads it any more: the socket has taken it (ws.send's
// callback) or another thread got its copy (postMessage clones). A frame that is never given
// back is simply left to the garbage collector. One pool per thread (module state).

/**
 * Smaller frames come from Node's shared Buffer pool (8 KB slabs). A larger slab of our own made
 * one-env replies ~0.3 µs cheaper, but a frame a client leaves unread keeps its whole slab alive:
 * a non-reading client's queue of small replies would hold 32 times the memory it is charged for.
 */
export const MIN_POOLED_BYTES = 16 * 1024;
/**
 * Larger frames are not kept once given back: one client's occasional huge batch must not hold
 * memory for the server's lifetime (a 256-env step's frame is about 80 KB).
 */
export const MAX_POOLED_BYTES = 1024 * 1024;
/** Free buffers kept; more are left to the garbage collector. */
const MAX_FREE = 8;

const free: ArrayBuffer[] = [];
/** Buffers handed out and not yet given back: a frame is never handed out twice (weak: one never given back is collected). */
const lent = new WeakSet<ArrayBufferLike>();

/**
 * A buffer of `size` bytes (contents undefined: the caller writes every byte), starting 8-byte
 * aligned in its ArrayBuffer, so typed arrays can be laid over its aligned parts.
 */
export function takeFrame(size: number): Buffer {
  if (size < MIN_POOLED_BYTES) {
    // Node's shared pool hands out 8-byte aligned slices; should one not be, a buffer of its own is.
    const small = Buffer.allocUnsafe(size);
    return small.byteOffset % 8 === 0 ? small : Buffer.allocUnsafeSlow(size);
  }
  let buffer: ArrayBuffer | undefined;
  for (let i = free.length - 1; i >= 0; i--) {
    if (free[i]!.byteLength >= size) {
      buffer = free[i]!;
      free.splice(i, 1);
      break;
    }
  }
  // Room for a somewhat larger reply next time (the CSR part varies from step to step).
  // Uninitialized, like Buffer.allocUnsafe (the caller writes every byte), in a buffer of its own.
  buffer ??= Buffer.allocUnsafeSlow(size + (size >> 2)).buffer as ArrayBuffer;
  lent.add(buffer);
  return Buffer.from(buffer, 0, size);
}

/** Whether `frame` came from takeFrame and is still out (so `giveBackFrame` applies to it). */
export function isLentFrame(frame: Uint8Array): boolean {
  return lent.has(frame.buffer);
}

/** Returns a frame from takeFrame once nothing reads it any more; anything else is ignored. */
export function giveBackFrame(frame: Uint8Array): void {
  const buffer = frame.buffer;
  if (!lent.delete(buffer)) return;
  if (free.length < MAX_FREE && buffer.byteLength <= MAX_POOLED_BYTES) free.push(buffer as ArrayBuffer);
}
