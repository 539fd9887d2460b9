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
