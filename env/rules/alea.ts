// Baagoe's Alea generator, computing exactly what seedrandom's `alea` computes for the same seed
// (records and pretrained runs depend on those numbers), with its whole state in four doubles of a
// Float64Array [c, s0, s1, s2]. The state machine keeps them in its arena, so drawing a number
// allocates nothing and a clone copies the generator with the rest of the state.

const TWO_POW_MINUS_32 = 2.3283064365386963e-10;

/** Seeds `state` (4 doubles) from `seed` as `seedrandom.alea(seed)` does. */
export function aleaSeed(state: Float64Array, seed: string): void {
  let n = 0xefc8249d;
  const mash = (data: string): number => {
    for (let i = 0; i < data.length; i++) {
      n += data.charCodeAt(i);
      let h = 0.02519603282416938 * n;
      n = h >>> 0;
      h -= n;
      h *= n;
      n = h >>> 0;
      h -= n;
      n += h * 0x100000000;
    }
    return (n >>> 0) * TWO_POW_MINUS_32;
  };
  state[0] = 1;
  state[1] = mash(' ');
  state[2] = mash(' ');
  state[3] = mash(' ');
  for (let k = 1; k <= 3; k++) {
    state[k]! -= mash(seed);
    if (state[k]! < 0) state[k]! += 1;
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
