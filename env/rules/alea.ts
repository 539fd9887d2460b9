// Baagoe's Alea generator, computing exactly what seedrandom's `alea` computes for the same seed
// (records and pretrained runs depend on those numbers), with its whole state in four doubles of a
// Float64Array [c, s0, s1, s2]. The state machine keeps them in its arena, so drawing a number
// allocates nothing and a clone copies the generator with the rest of the state.

const TWO_POW_MINUS_32 = 2.3283064365386963e-10;

/**
 * Seeds `state` (4 doubles) from `seed` as `seedrandom.alea(seed)` does: s0, s1, s2 are three
 * mashes of ' ', then each has a mash of `seed` taken off (mod 1), the masher's `n` carried
 * through all six. `n` lives in a local: as the closure variable of a `mash` function it was
 * boxed on every write, and seeding cost 1.6x as much.
 */
export function aleaSeed(state: Float64Array, seed: string): void {
  let n = 0xefc8249d;
  state[0] = 1;
  for (let pass = 0; pass < 6; pass++) {
    const text = pass < 3 ? ' ' : seed;
    for (let i = 0; i < text.length; i++) {
      n += text.charCodeAt(i);
      let h = 0.02519603282416938 * n;
      n = h >>> 0;
      h -= n;
      h *= n;
      n = h >>> 0;
      h -= n;
      n += h * 0x100000000;
    }
    const mashed = (n >>> 0) * TWO_POW_MINUS_32;
    const k = (pass % 3) + 1;
    if (pass < 3) state[k] = mashed;
    else {
      const value = state[k]! - mashed;
      state[k] = value < 0 ? value + 1 : value;
    }
  }
}

/** The next number in [0, 1). */
export function aleaNext(state: Float64Array): number {
  const t = 2091639 * state[1]! + state[0]! * TWO_POW_MINUS_32;
  state[1] = state[2]!;
  state[2] = state[3]!;
  const c = t | 0;
  state[0] = c;
  return (state[3] = t - c);
}

/**
 * Fisher-Yates over `deck[start .. start + length)` with `state`'s numbers, exactly as `length - 1` calls of
 * aleaNext would draw them (j = floor(next * (i + 1)) for i from the top down). The generator
 * lives in locals for the whole deck: a deal is then a third cheaper than loading and storing
 * the four doubles per card.
 */
export function aleaShuffle(state: Float64Array, deck: Uint8Array | Int8Array, start: number, length: number): void {
  let c = state[0]!;
  let s0 = state[1]!;
  let s1 = state[2]!;
  let s2 = state[3]!;
  for (let i = length - 1; i > 0; i--) {
    const t = 2091639 * s0 + c * TWO_POW_MINUS_32;
    s0 = s1;
    s1 = s2;
    c = t | 0;
    s2 = t - c;
    const j = Math.floor(s2 * (i + 1));
    const card = deck[start + i]!;
    deck[start + i] = deck[start + j]!;
    deck[start + j] = card;
  }
  state[0] = c;
  state[1] = s0;
  state[2] = s1;
  state[3] = s2;
}
