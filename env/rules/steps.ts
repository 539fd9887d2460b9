// Work written as a generator that yields between units (a hand of a replay, a hand of a view),
// so a caller serving others can give way between them; `drain` runs one to its end at once.

/** Runs `steps` to its end and returns its result. */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
