// Game records and replay (docs/rules.md §5 and §6): parse and validate a record, replay it
// through the same legality checks as live play, report the result, and write any state back
// out as a record with its decks in full.

import { NUM_CARDS, SUIT_LETTERS, cardToken, parseCard } from './cards.js';
import { actionToString, parseAction } from './actions.js';
import { AmountOverflowError, IllegalActionError, RuleSetError, ValidationError } from './errors.js';
import type { KratzenState } from './game.js';
import { KratzenGame } from './kratzen-game.js';
import type { HandResult } from './results.js';
import { isJsonObject, isWholeUnits, ruleSetToJson } from './ruleset.js';
import { MAX_UNITS } from './ledger.js';
import { drain } from './steps.js';

export interface RecordAction {
  seat: number;
  action: string;
}

export interface RecordHand {
  deck?: string[] | null;
  actions?: RecordAction[] | null;
}

export interface GameRecord {
  rules: Record<string, unknown>;
  seed?: number | string | null;
  start?: { dealer?: number | null; pot?: number | null; balances?: number[] | null; muss?: boolean | null } | null;
  hands?: RecordHand[] | null;
}

/** A record after validation: ids instead of tokens, amounts in units. */
export interface ParsedRecord {
  game: KratzenGame;
  seed: number | string | undefined;
  /** `muss` undefined: the profile's default (tavern5 opens with a Muss [D-10]). */
  start: { dealer?: number; pot: number; balances?: number[]; muss?: boolean };
  hands: { deck: number[] | undefined; actions: { seat: number; action: number }[] }[];
}

export interface HandReport {
  dealer: number;
  trump: string;
  indicator: string | null;
  kind: string;
  walkover: boolean;
  potBeforePlay: number;
  in: boolean[];
  tricks: number[];
  payouts: number[];
  penalties: number[];
  fees?: number[];
  potAfter: number;
  balances: number[];
}

export interface ReplayResult {
  hands: HandReport[];
  final: { balances: number[]; pot: number; complete: boolean; winners?: number[] };
}

/** The first illegal action of a replay: 0-based hand and action index. */
export class ReplayIllegalActionError extends Error {
  constructor(
    readonly hand: number,
    readonly actionIndex: number,
    readonly seat: number,
    readonly reason: string,
  ) {
    super(`illegal action: hand ${hand}, action ${actionIndex}, seat ${seat}: ${reason}`);
    this.name = 'ReplayIllegalActionError';
  }
}

export class ReplayOverflowError extends Error {
  constructor(
    readonly hand: number,
    readonly actionIndex: number,
    readonly seat: number,
  ) {
    super(`amount overflow: hand ${hand}, action ${actionIndex}`);
    this.name = 'ReplayOverflowError';
  }
}

const malformed = (field: string, reason: string) => new ValidationError('malformed record', field, reason);

const isIntegral = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function amountToUnits(game: KratzenGame, value: unknown, field: string, wholeChips: boolean): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw malformed(field, 'must be a number');
  // Past 2^53 - 1 units amounts are no longer exact (docs/rules.md §3): say so, not "not a multiple".
  if (Math.abs(value * game.unitsPerChip) > MAX_UNITS) throw malformed(field, `must be at most ${Math.floor(MAX_UNITS / game.unitsPerChip)} chips in size (2^53 - 1 units)`);
  if (!isWholeUnits(value, game.unitsPerChip)) throw malformed(field, `must be a multiple of 1/${game.unitsPerChip} chip`);
  if (wholeChips && !Number.isInteger(value)) throw malformed(field, 'must be a whole number of chips in didactic4');
  return Math.round(value * game.unitsPerChip);
}

/** Validates a whole record before anything is replayed; throws ValidationError naming the field. */
export function parseRecord(input: unknown): ParsedRecord {
  if (!isJsonObject(input)) throw malformed('', 'a record must be a JSON object');
  if (input.rules === undefined || input.rules === null) throw malformed('rules', 'a record must carry rules');
  let game: KratzenGame;
  try {
    game = new KratzenGame(input.rules);
  } catch (e) {
    if (e instanceof RuleSetError) throw new RuleSetError(e.field ? `rules.${e.field}` : 'rules', e.reason);
    throw e;
  }
  const n = game.numPlayers;
  const seed = input.seed ?? undefined;
  if (seed !== undefined && !isIntegral(seed) && typeof seed !== 'string') {
    throw malformed('seed', 'seed must be an integer or a string');
  }

  const start: ParsedRecord['start'] = { pot: 0 };
  const rawStart = input.start ?? undefined;
  if (rawStart !== undefined) {
    if (!isJsonObject(rawStart)) throw malformed('start', 'start must be an object');
    const { dealer, pot, balances, muss } = rawStart;
    if (dealer !== undefined && dealer !== null) {
      if (!isIntegral(dealer) || dealer < 0 || dealer >= n) throw malformed('start.dealer', `must be a seat 0..${n - 1}`);
      start.dealer = dealer;
    }
    if (pot !== undefined && pot !== null) {
      start.pot = amountToUnits(game, pot, 'start.pot', game.rules.profile === 'didactic4');
      if (start.pot < 0) throw malformed('start.pot', 'the pot must not be negative');
    }
    if (balances !== undefined && balances !== null) {
      if (!Array.isArray(balances) || balances.length !== n) {
        throw malformed('start.balances', `must be an array of ${n} amounts`);
      }
      start.balances = balances.map((b, i) => amountToUnits(game, b, `start.balances[${i}]`, false));
    }
    if (muss !== undefined && muss !== null) {
      if (game.rules.profile !== 'tavern5') throw malformed('start.muss', 'start.muss is a tavern5 field');
      if (typeof muss !== 'boolean') throw malformed('start.muss', 'must be true or false');
      start.muss = muss;
    }
  }

  const rawHands = input.hands ?? [];
  if (!Array.isArray(rawHands)) throw malformed('hands', 'hands must be an array');
  const hands = rawHands.map((hand: unknown, h) => {
    const where = `hands[${h}]`;
    if (!isJsonObject(hand)) throw malformed(where, 'a hand must be an object');
    let deck: number[] | undefined;
    if (hand.deck !== undefined && hand.deck !== null) deck = parseDeck(hand.deck, `${where}.deck`);
    const rawActions = hand.actions ?? [];
    if (!Array.isArray(rawActions)) throw malformed(`${where}.actions`, 'actions must be an array');
    const actions = rawActions.map((entry: unknown, i) => {
      const at = `${where}.actions[${i}]`;
      if (!isJsonObject(entry)) throw malformed(at, 'an action entry must be {seat, action}');
      if (!isIntegral(entry.seat) || entry.seat < 0 || entry.seat >= n) {
        throw malformed(`${at}.seat`, `seat must be an integer 0..${n - 1}`);
      }
      if (typeof entry.action !== 'string') throw malformed(`${at}.action`, 'action must be a string');
      const action = parseAction(entry.action);
      if (action < 0) throw malformed(`${at}.action`, `unknown action "${entry.action}"`);
      return { seat: entry.seat, action };
    });
    return { deck, actions };
  });
  const dealsFromSeed = start.dealer === undefined || hands.some((h) => !h.deck);
  if (dealsFromSeed && seed === undefined) {
    throw malformed('seed', 'a seed is needed when start.dealer or a hand deck is absent');
  }
  // 10^30 and 10^30 + 1 are one double, so such a seed would name one session by many values.
  // That matters only when the record deals from it: one with every deck and a dealer (another
  // engine's, say) replays whatever integer it carries.
  if (dealsFromSeed && typeof seed === 'number' && !Number.isSafeInteger(seed)) {
    throw malformed('seed', 'an integer seed past ±(2^53 - 1) cannot be read exactly, and this record deals from its seed (a hand without a deck, or no start.dealer): give it as a string');
  }
  return { game, seed, start, hands };
}

function parseDeck(value: unknown, field: string): number[] {
  if (!Array.isArray(value) || value.length !== NUM_CARDS) throw malformed(field, `a deck lists all ${NUM_CARDS} cards`);
  const seen = new Set<number>();
  return value.map((token, i) => {
    const card = typeof token === 'string' ? parseCard(token) : -1;
    if (card < 0) throw malformed(`${field}[${i}]`, `not a card: ${JSON.stringify(token)}`);
    if (seen.has(card)) throw malformed(`${field}[${i}]`, `card ${token} appears twice`);
    seen.add(card);
    return card;
  });
}

/** Replays a record. Throws ValidationError (malformed), ReplayIllegalActionError or ReplayOverflowError. */
export function replayRecord(input: unknown): { result: ReplayResult; state: KratzenState } {
  const state = drain(replayRecordSteps(input));
  return { result: replayResult(state), state };
}

/**
 * `replayRecord`'s state, a hand at a time: yields after each hand, so a caller serving others
 * can give way during a long record; returns the state after the last action.
 */
export function* replayRecordSteps(input: unknown): Generator<void, KratzenState> {
  const record = parseRecord(input);
  const state = record.game.newState({
    seed: record.seed,
    decks: record.hands.map((h) => h.deck),
    start: record.start,
  });
  for (let h = 0; h < record.hands.length; h++) {
    const hand = record.hands[h]!;
    if (state.complete) throw malformed(`hands[${h}]`, `the session is complete after hand ${h - 1}`);
    for (let i = 0; i < hand.actions.length; i++) {
      const { seat, action } = hand.actions[i]!;
      if (state.handIndex !== h) {
        throw new ReplayIllegalActionError(h, i, seat, state.complete ? 'the session is over' : `hand ${h} is already over`);
      }
      try {
        state.applyAs(seat, action);
      } catch (e) {
        if (e instanceof IllegalActionError) throw new ReplayIllegalActionError(h, i, seat, e.reason);
        if (!(e instanceof AmountOverflowError)) throw e;
        if (e.hand === h) throw new ReplayOverflowError(h, i, seat);
        // The action finished hand h, and the next deal's stakes passed the bound: that belongs
        // to the next hand, no action of its own. A record that stops here never asked for it.
        if (h + 1 === record.hands.length) return state;
        throw e;
      }
    }
    if (h + 1 < record.hands.length && state.handIndex === h) {
      throw malformed(`hands[${h + 1}]`, `hand ${h} is not finished, so the record cannot continue`);
    }
    yield;
  }
  return state;
}

/** Units to chips, exact for quarters and printed to at most 6 decimals for fifths. */
function chips(state: KratzenState, units: number): number {
  return Number((units / state.game.unitsPerChip).toFixed(6));
}

export function handReport(state: KratzenState, r: HandResult): HandReport {
  const toChips = (values: number[]) => values.map((u) => chips(state, u));
  const report: HandReport = {
    dealer: r.dealer,
    trump: SUIT_LETTERS[r.trump]!,
    indicator: r.indicator < 0 ? null : cardToken(r.indicator),
    kind: r.kind,
    walkover: r.walkover,
    potBeforePlay: chips(state, r.potBeforePlay),
    in: r.in,
    tricks: r.tricks,
    payouts: toChips(r.payouts),
    penalties: toChips(r.penalties),
    potAfter: chips(state, r.potAfter),
    balances: toChips(r.balances),
  };
  if (r.fees) {
    const { potAfter, balances, ...head } = report;
    return { ...head, fees: toChips(r.fees), potAfter, balances };
  }
  return report;
}

/** The section-6 result of a state: completed hands and the final ledger. */
export function replayResult(state: KratzenState): ReplayResult {
  const last = state.results[state.results.length - 1];
  const balances = last ? last.balances : state.startInfo.balances;
  const final: ReplayResult['final'] = {
    balances: balances.map((u) => chips(state, u)),
    pot: chips(state, last ? last.potAfter : state.startInfo.pot),
    complete: state.complete,
  };
  if (state.complete) final.winners = state.winners();
  return { hands: state.results.map((r) => handReport(state, r)), final };
}

/** Writes a state's session so far as a record, every hand with its full deck. */
export function stateToRecord(state: KratzenState): GameRecord {
  const start: NonNullable<GameRecord['start']> = {
    dealer: state.startInfo.dealer,
    pot: chips(state, state.startInfo.pot),
    balances: state.startInfo.balances.map((u) => chips(state, u)),
  };
  // Written out in tavern5 although true is the default [D-10]: a reader need not know the default.
  if (state.rules.profile === 'tavern5') start.muss = state.startInfo.muss;
  const record: GameRecord = { rules: ruleSetToJson(state.rules) };
  if (state.seed !== undefined) record.seed = state.seed;
  record.start = start;
  record.hands = state.handLogs().map(({ deck, actions }) => ({
    deck: deck.map(cardToken),
    actions: actions.map(({ seat, action }) => ({ seat, action: actionToString(action) })),
  }));
  return record;
}

/** The JSON an error is reported as, with its exit code: 1 illegal action or overflow, 2 bad input. */
export function errorReport(e: unknown): { exitCode: number; output: Record<string, unknown> } | null {
  if (e instanceof ValidationError) return { exitCode: 2, output: { error: e.error, field: e.field, reason: e.reason } };
  if (e instanceof ReplayIllegalActionError) {
    return { exitCode: 1, output: { error: 'illegal action', hand: e.hand, action: e.actionIndex, seat: e.seat, reason: e.reason } };
  }
  if (e instanceof ReplayOverflowError) {
    return {
      exitCode: 1,
      output: {
        error: 'amount overflow',
        hand: e.hand,
        action: e.actionIndex,
        seat: e.seat,
        reason: 'an amount would pass 2^53 - 1 units; the session stops rather than round',
      },
    };
  }
  if (e instanceof AmountOverflowError) {
    // Outside any action: the stakes of a deal (the session's first, or one a finished hand led to) pass the bound.
    return { exitCode: 1, output: { error: 'amount overflow', hand: e.hand, reason: 'an amount would pass 2^53 - 1 units; the session stops rather than round' } };
  }
  return null;
}

/**
 * `kratzen replay` as a function: the result JSON and exit code 0, or the error JSON and its code;
 * `unitsPerChip` of the record's rules (1 when they are invalid), for `replayJsonText`.
 */
export function replayToJson(input: unknown): { exitCode: number; output: object; unitsPerChip: number } {
  let unitsPerChip = 1;
  try {
    const { result, state } = replayRecord(input);
    return { exitCode: 0, output: result, unitsPerChip: state.game.unitsPerChip };
  } catch (e) {
    const report = errorReport(e);
    if (!report) throw e;
    if (isJsonObject(input)) {
      try {
        unitsPerChip = new KratzenGame(input.rules).unitsPerChip;
      } catch {
        // An invalid rule set: its error report holds no amounts.
      }
    }
    return { ...report, unitsPerChip };
  }
}

/** Exact decimal text of `units` in chips: quarters to 2 decimals, fifths to 1. */
function chipsText(units: number, unitsPerChip: number): string {
  const magnitude = Math.abs(units);
  const part = magnitude % unitsPerChip;
  const whole = (magnitude - part) / unitsPerChip;
  const sign = units < 0 ? '-' : '';
  if (part === 0) return `${sign}${whole}`;
  const decimals = String((part * 100) / unitsPerChip).padStart(2, '0').replace(/0$/, '');
  return `${sign}${whole}.${decimals}`;
}

/**
 * A replay output as JSON text with every amount printed exactly (docs/rules.md §6). Amounts are
 * its only non-integers; JSON.stringify prints a number's shortest round-trip form, which past
 * 2^50 chips drops a quarter's last digit (1800000000000002.25 as ...2.2), and a fifth's double
 * is not the fifth itself: each is printed from its units instead. Laid out as
 * JSON.stringify(output, null, indent) would.
 */
export function replayJsonText(output: object, unitsPerChip: number, indent = 2): string {
  const write = (value: unknown, depth: number): string => {
    if (typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value)) return chipsText(Math.round(value * unitsPerChip), unitsPerChip);
    if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
    const entries = Array.isArray(value)
      ? value.map((item) => write(item === undefined ? null : item, depth + 1))
      : Object.entries(value).flatMap(([key, item]) => (item === undefined ? [] : [`${JSON.stringify(key)}:${indent ? ' ' : ''}${write(item, depth + 1)}`]));
    const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) return open + close;
    if (!indent) return open + entries.join(',') + close;
    const inner = '\n' + ' '.repeat(indent * (depth + 1));
    return open + inner + entries.join(',' + inner) + '\n' + ' '.repeat(indent * depth) + close;
  };
  return write(output, 0);
}
