// Typed errors of the rules core: each names what was wrong so callers can report it precisely.

/** An action that the current state does not allow; the state is left unchanged. */
export class IllegalActionError extends Error {
  constructor(
    readonly action: number,
    readonly seat: number,
    readonly reason: string,
  ) {
    super(`illegal action ${action} by seat ${seat}: ${reason}`);
    this.name = 'IllegalActionError';
  }
}

/** A rule set, record or option that fails validation; `field` is a path like `rules.players`. */
export class ValidationError extends Error {
  constructor(
    readonly error: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${error}: ${field ? `${field}: ` : ''}${reason}`);
    this.name = 'ValidationError';
  }
}

export class RuleSetError extends ValidationError {
  constructor(field: string, reason: string) {
    super('invalid rule set', field, reason);
    this.name = 'RuleSetError';
  }
}

/** A settlement whose amounts would pass 2^53 - 1 units (docs/rules.md §3, Ledger). */
export class AmountOverflowError extends Error {
  constructor(readonly hand: number) {
    super(`amount overflow in hand ${hand}: an amount would pass 2^53 - 1 units`);
    this.name = 'AmountOverflowError';
  }
}

/**
 * Input text quoted in an error message, cut to `max` characters: a 50 MB action string was
 * echoed whole.
 */
export function quoteInput(text: string, max = 64): string {
  return text.length <= max ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, max))}... (${text.length} characters)`;
}

/**
 * Longest string seed a client or a training config may give: a 10 MB seed slowed training 200
 * times (every deal hashes it) and was written into every report.
 */
export const MAX_SEED_LENGTH = 256;

/** `value` as JSON, or its kind where JSON.stringify throws (a BigInt inside, a cycle) or gives nothing. */
function jsonOrKind(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    // The error about the input became a TypeError of its own ("Do not know how to serialize a BigInt").
    return `a ${typeof value} that is no JSON`;
  }
}

/** Throws a ValidationError naming `field` unless `seed` names one session: a safe integer or a string. */
export function checkSeed(seed: unknown, field = 'seed'): asserts seed is number | string {
  if (typeof seed === 'string' || Number.isSafeInteger(seed)) return;
  // Every object was the seed "[object Object]", NaN the seed "NaN".
  const shown = typeof seed === 'number' ? String(seed) : typeof seed === 'bigint' ? `${seed}n (a BigInt)` : quoteInput(jsonOrKind(seed));
  throw new ValidationError('invalid seed', field, `a seed is an integer up to ±(2^53 - 1) or a string, got ${shown}`);
}
