// What the env needs from whoever chooses actions for seats it does not learn: a batched
// `act` (the same shape as the Agent interface of agents/, which builds on this).

/** Chooses one action per row: observations N x OBS_SIZE, masks N x NUM_ACTIONS, seats N. */
export interface Policy {
  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array;
}

/** Legal actions of the row being sampled: one pass over the mask instead of two. */
let legalScratch = new Int32Array(128);

/** A uniformly random legal action of `mask` row `row`; -1 when the row has none. */
export function randomLegalAction(mask: Uint8Array, row: number, numActions: number, random: () => number): number {
  if (legalScratch.length < numActions) legalScratch = new Int32Array(numActions);
  const legal = legalScratch;
  const base = row * numActions;
  let count = 0;
  for (let a = 0; a < numActions; a++) if (mask[base + a]) legal[count++] = a;
  if (count === 0) return -1;
  return legal[Math.floor(random() * count)]!;
}

// The word path below reads a mask byte's position from its bit's position in a Uint32.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The last word view made: a vector env's masks keep their buffer, so most calls reuse it (the
 * view keeps that one buffer alive until masks of another buffer are sampled).
 */
let cachedWords: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
let cachedStart = 0;

function wordView(buffer: ArrayBufferLike, start: number, length: number): Uint32Array {
  if (cachedWords.buffer !== buffer || cachedStart !== start || cachedWords.length !== length) {
    cachedWords = new Uint32Array(buffer, start, length);
    cachedStart = start;
  }
  return cachedWords;
}

/**
 * Appends to `legal` (from `count`) the actions of mask word `w` (4 bytes of the rows' buffer,
 * counted from the word view's start) whose bytes are non-zero and inside the row that covers
 * bytes [first, end); returns the new count.
 */
function collectLegal(word: number, w: number, first: number, end: number, legal: Int32Array, count: number): number {
  // Any non-zero byte is legal (as in randomLegalAction): keep one bit per such byte.
  word |= word >>> 4;
  word |= word >>> 2;
  word |= word >>> 1;
  word &= 0x01010101;
  if (w === first >>> 2) word &= -1 << ((first & 3) << 3); // bytes before the row
  const after = end - (w << 2); // bytes of this word inside the row, when under 4
  if (after < 4) word &= (1 << (after << 3)) - 1;
  const action = (w << 2) - first;
  while (word !== 0) {
    const lowest = word & -word;
    legal[count++] = action + ((31 - Math.clz32(lowest)) >>> 3);
    word ^= lowest;
  }
  return count;
}

/**
 * `out[i] = randomLegalAction(masks, i, numActions, random)` for rows 0..numRows-1, drawing the
 * same numbers in the same order (so the same actions), about twice as fast: masks are mostly
 * zero, so it reads them a word at a time, tests two words per branch, and visits only the legal entries.
 */
export function randomLegalActions(
  masks: Uint8Array,
  numRows: number,
  numActions: number,
  random: () => number,
  out: Int32Array,
): Int32Array {
  if (masks.length < numRows * numActions) throw new RangeError(`masks hold ${masks.length} entries, fewer than ${numRows} rows x ${numActions}`);
  if (out.length < numRows) throw new RangeError(`out has ${out.length} entries, fewer than ${numRows} rows`);
  // Few rows do not repay setting up the word view.
  if (!LITTLE_ENDIAN || numActions === 0 || numRows < 8) {
    for (let i = 0; i < numRows; i++) out[i] = randomLegalAction(masks, i, numActions, random);
    return out;
  }
  if (legalScratch.length < numActions) legalScratch = new Int32Array(numActions);
  const legal = legalScratch;
  // Whole words of the buffer from the one holding the first mask byte; a row whose last word
  // would run past the buffer's end takes the byte path.
  const start = masks.byteOffset & ~3;
  const wordsNeeded = (masks.byteOffset + numRows * numActions - start + 3) >>> 2;
  const words = wordView(masks.buffer, start, Math.min(wordsNeeded, (masks.buffer.byteLength - start) >>> 2));
  const skew = masks.byteOffset - start;
  for (let i = 0; i < numRows; i++) {
    const first = skew + i * numActions; // byte of the row's first entry, counted from `start`
    const end = first + numActions;
    const firstWord = first >>> 2;
    const lastWord = (end - 1) >>> 2;
    if (lastWord >= words.length) {
      out[i] = randomLegalAction(masks, i, numActions, random);
      continue;
    }
    let count = 0;
    // Two words per test: most of a row is zero, and a test per 8 bytes is cheaper than per 4.
    let w = firstWord;
    for (; w < lastWord; w += 2) {
      const low = words[w]! | 0;
      const high = words[w + 1]! | 0;
      if ((low | high) === 0) continue;
      if (low !== 0) count = collectLegal(low, w, first, end, legal, count);
      if (high !== 0) count = collectLegal(high, w + 1, first, end, legal, count);
    }
    if (w === lastWord) {
      const word = words[w]! | 0;
      if (word !== 0) count = collectLegal(word, w, first, end, legal, count);
    }
    out[i] = count === 0 ? -1 : legal[Math.floor(random() * count)]!;
  }
  return out;
}
