// Buffers for large binary replies, reused: a fresh 80 KB allocation per 256-env reply cost the
// server more than building the frame (memory new to the process, page by page). A frame goes
// back to the pool only once nothing reads it any more: the socket has taken it (ws.send's
// callback) or another thread got its copy (postMessage clones). A frame that is never given
// back is simply left to the garbage collector. One pool per thread (module state).

/** Smaller frames are cut from slabs (smallFrame) and never reused. */
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
  if (size < MIN_POOLED_BYTES) return smallFrame(size);
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

/** Bytes of each slab small frames are cut from. */
const SLAB_BYTES = 256 * 1024;
let slab = new ArrayBuffer(0);
let slabUsed = 0;

/**
 * A small frame: the next 8-byte aligned slice of the current slab, which is replaced (and left
 * to the garbage collector with the last frame cut from it) once full. Node's shared pool for
 * Buffer.allocUnsafe is 8 KB: a one-env reply took a new one every 16 replies, and its
 * allocation cost more than the rest of building the frame.
 */
function smallFrame(size: number): Buffer {
  if (slabUsed + size > slab.byteLength) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES).buffer as ArrayBuffer;
    slabUsed = 0;
  }
  const frame = Buffer.from(slab, slabUsed, size);
  slabUsed = (slabUsed + size + 7) & ~7;
  return frame;
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
