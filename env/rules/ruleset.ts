// Rule sets (docs/rules.md §0): the zod schema, profile defaults and variant switches.
// Input is a plain JSON object; the output is a complete, frozen `RuleSet` with every default
// filled in and every amount also given in exact integer units.

import { z } from 'zod';
import { RuleSetError } from './errors.js';
import { MAX_SEATS, MIN_PLAYERS } from './sizes.js';
import { MAX_NAMED_KEYS, echoedKey, firstIssue, unknownKeysReason } from './zod-issue.js';

/** The rule profiles (docs/rules.md §0), in the order observations one-hot them. */
export const PROFILES = ['didactic4', 'tavern5'] as const;
export type Profile = (typeof PROFILES)[number];
export type DeckStyle = 'german' | 'french' | 'french-joker';

export interface ExchangeVariant {
  /** Most cards one player may exchange (1-5). */
  maxCards: number;
  /** Chips paid into the pot per exchanged card. */
  feePerCard: number;
}

export interface RuleSet {
  profile: Profile;
  /** Seats at the table, 3-6. */
  players: number;
  /** Hands (deals) in a session; default one full rotation of dealers. */
  hands: number;
  /** Card names and symbols only; never changes play. */
  deckStyle: DeckStyle;
  // ---- tavern5 only (defaults are kept for didactic4 but never used there) ----
  /** Chips each player dealt in puts in the pot every deal. */
  ante: number;
  /** `highest`: the Salzburg rule, Weli above the trump Ace. */
  weliRank: 'second' | 'highest';
  /** Tricks the dealer needs. */
  dealerMinTricks: 2 | 3;
  /** What a player who missed the quota pays: twice the ante, or the pot before play. */
  failPenalty: 'double-ante' | 'pot';
  /** Card exchange with the talon after the declarations; null when off. */
  exchange: ExchangeVariant | null;
  /** Zero-trick contract; null when off. */
  bettler: { bonus: number } | null;
  /** Each player's stack at the start; null when absent. */
  startingChips: number | null;
  /** A stack at or above this ends the session; null when absent. */
  targetChips: number | null;
}

/** Exact money: didactic4 pays P/4 per trick (quarter chips), tavern5 uses fifths of a chip. */
export function unitsPerChip(profile: Profile): number {
  return profile === 'didactic4' ? 4 : 5;
}

const TAVERN5_ONLY = [
  'ante',
  'weliRank',
  'dealerMinTricks',
  'failPenalty',
  'exchange',
  'bettler',
  'startingChips',
  'targetChips',
] as const;

const UNDEFINED_RITUALS_REASON =
  'Schlagen/Oder/Weiter-Oder/Weiter and the cut rituals are named but not defined by the sources ' +
  '(seed 001, section 07: names alone do not define a procedure)';

/**
 * True when `chips` is exactly a whole number of units (1/unitsPerChip chip): the decimal the
 * user wrote must be that multiple, so 1e-300 or 0.250000000000001 are refused, never rounded.
 * A multiple such as 0.6 = 3/5 passes because k / u is the double nearest to k / u.
 */
export function isWholeUnits(chips: number, unitsPerChip: number): boolean {
  return Math.round(chips * unitsPerChip) / unitsPerChip === chips;
}
const isFifth = (x: number) => isWholeUnits(x, 5);
/**
 * From 2^50 chips up a double holds only quarters, so k.4 and k.6 chips are one JSON number:
 * there only whole chips are read exactly, and a fraction of a chip is refused. Below it, the
 * double nearest a fifth is that fifth's alone. (Quarters are exact up to 2^51 chips, past every
 * didactic4 amount.)
 */
export const EXACT_FIFTHS_BELOW_CHIPS = 2 ** 50;
export const readsAsExactFifth = (x: number) => Number.isInteger(x) || Math.abs(x) < EXACT_FIFTHS_BELOW_CHIPS;
/**
 * Whether an amount of `units` (`unitsPerChip` a chip) reads back exactly from a JSON number of
 * chips, as records write amounts: a session whose start could not be written so is refused,
 * or parseRecord would refuse what stateToRecord wrote. (Quarters always do.)
 */
export const unitsReadExactly = (units: number, unitsPerChip: number) => unitsPerChip !== 5 || readsAsExactFifth(units / 5);
/** The largest rule-set amount: its units must stay exact integers (docs/rules.md §3, Ledger). */
export const MAX_RULE_CHIPS = Math.floor(Number.MAX_SAFE_INTEGER / 5);
const fifths = (what: string) =>
  z
    .number()
    .refine(Number.isFinite, `${what} must be a finite number`)
    .refine((x) => Math.abs(x) <= MAX_RULE_CHIPS, `${what} must be at most ${MAX_RULE_CHIPS} chips`)
    .refine(isFifth, `${what} must be a multiple of 1/5 chip`)
    .refine(readsAsExactFifth, `${what} past 2^50 chips must be whole chips: a JSON number there cannot tell fifths apart`);

const ruleSetSchema = z.strictObject({
  profile: z.enum(PROFILES).default('didactic4'),
  players: z.number().int().min(MIN_PLAYERS).max(MAX_SEATS).default(4),
  hands: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  deckStyle: z.enum(['german', 'french', 'french-joker']).default('german'),
  ante: fifths('ante').refine((x) => x > 0, 'ante must be positive').default(1),
  weliRank: z.enum(['second', 'highest']).default('second'),
  dealerMinTricks: z.union([z.literal(2), z.literal(3)], { error: 'Invalid option: expected one of 2|3' }).default(2),
  failPenalty: z.enum(['double-ante', 'pot']).default('double-ante'),
  exchange: z
    .strictObject({
      maxCards: z.number().int().min(1).max(5).default(2),
      feePerCard: fifths('feePerCard').refine((x) => x >= 0, 'feePerCard must not be negative').default(1),
    })
    .optional(),
  bettler: z
    .strictObject({
      bonus: fifths('bonus').refine((x) => x >= 0, 'bonus must not be negative').default(2),
    })
    .optional(),
  startingChips: fifths('startingChips').refine((x) => x > 0, 'startingChips must be positive').optional(),
  targetChips: fifths('targetChips').refine((x) => x > 0, 'targetChips must be positive').optional(),
});

/**
 * Rule fields nest one level (`exchange.maxCards`); input nested deeper than this is refused here,
 * before a recursion over tens of thousands of levels (a hostile rule set) could overflow the stack.
 */
const MAX_RULE_DEPTH = 4;

function dropNulls(value: unknown, field = '', depth = 0): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (depth >= MAX_RULE_DEPTH) throw new RuleSetError(field, `nested more than ${MAX_RULE_DEPTH} levels deep (rule fields nest one level)`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    // JSON.parse makes "__proto__" an own key; assigned below it would become the prototype,
    // and its fields would be read as rules.
    if (key === '__proto__') throw new RuleSetError(field ? `${field}.${key}` : key, `unknown field ${key}`);
    if (v !== null) out[key] = dropNulls(v, field ? `${field}.${key}` : key, depth + 1);
  }
  return out;
}

/**
 * Validates a rule set and fills in its defaults. Throws `RuleSetError` naming the first bad
 * field (`players`, `exchange.maxCards`, ...). `null` means absent, as in records.
 */
/** A JSON object: not null, not an array (rule sets, records, configs, metrics lines). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON object as it arrives (a rule set, a record), passed on as the very object for its own
 * parser to check: zod's record and object schemas drop a `__proto__` key unseen, where
 * parseRuleSet and the record parser refuse it by name. Shown as an object in JSON Schema.
 */
export function rawJsonObject(what: string) {
  return z
    .custom<Record<string, unknown>>(isJsonObject, `must be a JSON object (${what})`)
    .meta({ type: 'object', additionalProperties: {} });
}

/** Keys a rule set may have, at its top level and in its nested objects (null values aside). */
const KNOWN_KEYS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  // The rituals are refused below with a reason of their own.
  ['', new Set([...Object.keys(ruleSetSchema.shape), 'dealerChoice', 'cutRitual'])],
  ['exchange', new Set(Object.keys(ruleSetSchema.shape.exchange.unwrap().shape))],
  ['bettler', new Set(Object.keys(ruleSetSchema.shape.bettler.unwrap().shape))],
]);

/**
 * Refuses keys no rule set has before the object is copied or walked by the schema: for 30,000
 * of them that took ~40 ms of the thread (a bridge request's worth), now one pass over the keys.
 */
function refuseUnknownKeys(input: object): void {
  for (const [field, known] of KNOWN_KEYS) {
    const value = field ? (input as Record<string, unknown>)[field] : input;
    if (!isJsonObject(value)) continue;
    const named: string[] = [];
    let total = 0;
    for (const key in value) {
      if (known.has(key) || value[key] === null) continue;
      if (total++ < MAX_NAMED_KEYS) named.push(key);
    }
    if (total > 0) throw new RuleSetError(field ? `${field}.${echoedKey(named[0]!)}` : echoedKey(named[0]!), unknownKeysReason(named, total));
  }
}

export function parseRuleSet(input: unknown): RuleSet {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new RuleSetError('', 'a rule set must be a JSON object');
  }
  refuseUnknownKeys(input);
  const raw = dropNulls(input) as Record<string, unknown>;
  for (const field of ['dealerChoice', 'cutRitual']) {
    if (field in raw) throw new RuleSetError(field, UNDEFINED_RITUALS_REASON);
  }
  if ((raw.profile ?? 'didactic4') === 'didactic4') {
    for (const field of TAVERN5_ONLY) {
      if (field in raw) throw new RuleSetError(field, `${field} is a tavern5 rule; it is not allowed in didactic4`);
    }
  }
  const parsed = ruleSetSchema.safeParse(raw);
  if (!parsed.success) {
    const { field, reason } = firstIssue(parsed.error);
    throw new RuleSetError(field, reason);
  }
  const r = parsed.data;
  return Object.freeze({
    profile: r.profile,
    players: r.players,
    hands: r.hands ?? r.players,
    deckStyle: r.deckStyle,
    ante: r.ante,
    weliRank: r.weliRank,
    dealerMinTricks: r.dealerMinTricks,
    failPenalty: r.failPenalty,
    exchange: r.exchange ? Object.freeze({ ...r.exchange }) : null,
    bettler: r.bettler ? Object.freeze({ ...r.bettler }) : null,
    startingChips: r.startingChips ?? null,
    targetChips: r.targetChips ?? null,
  });
}

/** The rule set as a record writes it: only the fields that differ from the defaults. */
export function ruleSetToJson(rules: RuleSet): Record<string, unknown> {
  const out: Record<string, unknown> = { profile: rules.profile, players: rules.players };
  if (rules.hands !== rules.players) out.hands = rules.hands;
  if (rules.deckStyle !== 'german') out.deckStyle = rules.deckStyle;
  if (rules.profile === 'tavern5') {
    if (rules.ante !== 1) out.ante = rules.ante;
    if (rules.weliRank !== 'second') out.weliRank = rules.weliRank;
    if (rules.dealerMinTricks !== 2) out.dealerMinTricks = rules.dealerMinTricks;
    if (rules.failPenalty !== 'double-ante') out.failPenalty = rules.failPenalty;
    if (rules.exchange) out.exchange = { ...rules.exchange };
    if (rules.bettler) out.bettler = { ...rules.bettler };
    if (rules.startingChips !== null) out.startingChips = rules.startingChips;
    if (rules.targetChips !== null) out.targetChips = rules.targetChips;
  }
  return out;
}
