// Shared benchmark plumbing: run a body repeatedly for a fixed wall time and report rates.

export interface Rate {
  /** Work units done (actions, steps, decisions). */
  count: number;
  seconds: number;
}

/** Calls `body` (which returns the work it did) until `seconds` have passed, after a warm-up. */
export function measure(body: () => number, seconds = 1, warmupSeconds = 0.2): Rate {
  const until = (limit: number) => {
    const start = performance.now();
    let count = 0;
    while (performance.now() - start < limit * 1000) count += body();
    return { count, seconds: (performance.now() - start) / 1000 };
  };
  until(warmupSeconds);
  return until(seconds);
}

/** A tiny seeded generator for choosing actions in benchmarks (mulberry32). */
export function fastRng(seed: number): () => number {
  // The state lives in a typed array: a uint32 over 2^30 kept in a closure variable is a boxed
  // number, one allocation per draw charged to the engine being measured.
  const state = new Uint32Array([seed >>> 0]);
  return () => {
    state[0] = state[0]! + 0x6d2b79f5;
    let t = state[0]!;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
