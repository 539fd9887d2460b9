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

/**
 * Throws a TypeError naming the first key of `options` that `owner` does not take: a
 * misplaced or misspelt option was ignored without a word (`new VecEnv({ numEnvs: 2, rules:
 * { players: 5 } })` gave a 4-player table).
 */
export function checkOptionKeys(options: object, allowed: readonly string[], owner: string): void {
  // null read its keys with the engine's "Cannot convert undefined or null to object".
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${owner} takes an object of options (${allowed.join(', ')}), got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const unknown = Object.keys(options).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new TypeError(`${owner} has no option ${JSON.stringify(unknown).slice(0, 40)} (it takes ${allowed.join(', ')})`);
}

/**
 * A seed that is none, as an error message shows it: JSON quoted and cut, where JSON.stringify
 * threw (a BigInt, one inside an object, a cycle), the error about the seed became a TypeError of
 * its own ("Do not know how to serialize a BigInt").
 */
function shownSeed(seed: unknown): string {
  if (typeof seed === 'number') return String(seed);
  if (typeof seed === 'bigint') return `the BigInt ${quoteInput(`${seed}n`, 40)}`;
  try {
    const json = JSON.stringify(seed);
    return json === undefined ? `a ${typeof seed}` : quoteInput(json);
  } catch {
    return 'an object JSON cannot write (a BigInt in it, or a cycle)';
  }
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Throws a ValidationError naming `field` unless `seed` names one session: a safe integer or a (well-formed) string. */
export function checkSeed(seed: unknown, field = 'seed'): asserts seed is number | string {
  if (typeof seed === 'string') {
    // A lone surrogate has no UTF-8: a worker or a client received '\uFFFD' instead, so
    // '\uD800' and '\uDC00' dealt one game there and two here.
    if (LONE_SURROGATE.test(seed)) throw new ValidationError('invalid seed', field, 'a string seed must be well-formed Unicode text (it holds a lone surrogate)');
    return;
  }
  if (Number.isSafeInteger(seed)) return;
  // Every object was the seed "[object Object]", NaN the seed "NaN".
  throw new ValidationError('invalid seed', field, `a seed is an integer up to ±(2^53 - 1) or a string, got ${shownSeed(seed)}`);
}
