// Game records and replay (docs/rules.md §5 and §6): parse and validate a record, replay it
// through the same legality checks as live play, report the result, and write any state back
// out as a record with its decks in full.

import { NUM_CARDS, SUIT_LETTERS, cardToken, parseCard } from './cards.js';
import { actionToString, parseAction } from './actions.js';
import { AmountOverflowError, IllegalActionError, RuleSetError, ValidationError, quoteInput } from './errors.js';
import type { KratzenState } from './game.js';
import { KratzenGame } from './kratzen-game.js';
import type { HandResult } from './results.js';
import { isJsonObject, isWholeUnits, readsAsExactFifth, ruleSetToJson } from './ruleset.js';
import { MAX_UNITS } from './ledger.js';
import { drain } from './steps.js';
import type { StateReader } from './state-reader.js';

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
  /** The seed to deal from: undefined also for an integer past 2^53, which names no one session. */
  seed: number | string | undefined;
  /** `muss` undefined: the profile's default (tavern5 opens with a Muss [D-10]). */
  start: { dealer?: number; pot: number; balances?: number[]; muss?: boolean };
  hands: { deck: number[] | undefined; actions: { seat: number; action: number }[] }[];
}

/** A hand's settlement in chips (`Amount` is a number but for the exact printer, replayToText). */
export interface HandReport<Amount = number> {
  dealer: number;
  trump: string;
  indicator: string | null;
  kind: string;
  walkover: boolean;
  potBeforePlay: Amount;
  in: boolean[];
  tricks: number[];
  payouts: Amount[];
  penalties: Amount[];
  fees?: Amount[];
  potAfter: Amount;
  balances: Amount[];
}

export interface ReplayResult<Amount = number> {
  hands: HandReport<Amount>[];
  final: { balances: Amount[]; pot: Amount; complete: boolean; winners?: number[] };
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
  if (game.unitsPerChip === 5 && !readsAsExactFifth(value)) throw malformed(field, 'past 2^50 chips must be whole chips: a JSON number there cannot tell fifths apart');
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
      start.pot = amountToUnits(game, pot, 'start.pot', game.profile.wholeChipPot);
      if (start.pot < 0) throw malformed('start.pot', 'the pot must not be negative');
    }
    if (balances !== undefined && balances !== null) {
      if (!Array.isArray(balances) || balances.length !== n) {
        throw malformed('start.balances', `must be an array of ${n} amounts`);
      }
      start.balances = Array.from(balances, (b: unknown, i) => amountToUnits(game, b, `start.balances[${i}]`, false));
    }
    if (muss !== undefined && muss !== null) {
      if (!game.profile.opensWithMuss) throw malformed('start.muss', 'start.muss is a tavern5 field');
      if (typeof muss !== 'boolean') throw malformed('start.muss', 'must be true or false');
      start.muss = muss;
    }
  }

  const rawHands = input.hands ?? [];
  if (!Array.isArray(rawHands)) throw malformed('hands', 'hands must be an array');
  // Array.from visits an array's holes (a record built in code) as undefined: map skipped them,
  // and a hole went on to fail as a TypeError.
  const hands = Array.from(rawHands, (hand: unknown, h) => {
    const where = `hands[${h}]`;
    if (!isJsonObject(hand)) throw malformed(where, 'a hand must be an object');
    let deck: number[] | undefined;
    if (hand.deck !== undefined && hand.deck !== null) deck = parseDeck(hand.deck, `${where}.deck`);
    const rawActions = hand.actions ?? [];
    if (!Array.isArray(rawActions)) throw malformed(`${where}.actions`, 'actions must be an array');
    const actions = Array.from(rawActions, (entry: unknown, i) => {
      const at = `${where}.actions[${i}]`;
      if (!isJsonObject(entry)) throw malformed(at, 'an action entry must be {seat, action}');
      if (!isIntegral(entry.seat) || entry.seat < 0 || entry.seat >= n) {
        throw malformed(`${at}.seat`, `seat must be an integer 0..${n - 1}`);
      }
      if (typeof entry.action !== 'string') throw malformed(`${at}.action`, 'action must be a string');
      const action = parseAction(entry.action);
      if (action < 0) throw malformed(`${at}.action`, `unknown action ${quoteInput(entry.action)}`);
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
  const inexact = typeof seed === 'number' && !Number.isSafeInteger(seed);
  if (dealsFromSeed && inexact) {
    throw malformed('seed', 'an integer seed past ±(2^53 - 1) cannot be read exactly, and this record deals from its seed (a hand without a deck, or no start.dealer): give it as a string');
  }
  // Nothing is dealt from an inexact seed after the record either.
  return { game, seed: inexact ? undefined : seed, start, hands };
}

function parseDeck(value: unknown, field: string): number[] {
  if (!Array.isArray(value) || value.length !== NUM_CARDS) throw malformed(field, `a deck lists all ${NUM_CARDS} cards`);
  const seen = new Set<number>();
  return Array.from(value, (token: unknown, i) => {
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
 * can give way during a long record; returns the state after the last action, with the next
 * hand dealt as live play would have it (unless there is no deck for it, or its stakes pass the
 * bound: then the state between the hands).
 */
export function* replayRecordSteps(input: unknown): Generator<void, KratzenState> {
  const record = parseRecord(input);
  // Paused between hands, so only the hands the record holds are dealt here: a deal whose stakes
  // pass the bound is that hand's overflow, with no action of its own, and a record that stops
  // before such a deal replays as far as it goes.
  const state = record.game.newState({
    seed: record.seed,
    decks: record.hands.map((h) => h.deck),
    start: record.start,
    pauseBetweenHands: true,
  });
  for (let h = 0; h < record.hands.length; h++) {
    const hand = record.hands[h]!;
    if (state.complete) throw malformed(`hands[${h}]`, `the session is complete after hand ${h - 1}`);
    if (h > 0) state.dealNextHand();
    for (let i = 0; i < hand.actions.length; i++) {
      const { seat, action } = hand.actions[i]!;
      if (state.handIndex !== h) {
        throw new ReplayIllegalActionError(h, i, seat, state.complete ? 'the session is over' : `hand ${h} is already over`);
      }
      try {
        state.applyAs(seat, action);
      } catch (e) {
        if (e instanceof IllegalActionError) throw new ReplayIllegalActionError(h, i, seat, e.reason);
        if (e instanceof AmountOverflowError) throw new ReplayOverflowError(h, i, seat);
        throw e;
      }
    }
    if (h + 1 < record.hands.length && state.handIndex === h) {
      throw malformed(`hands[${h + 1}]`, `hand ${h} is not finished, so the record cannot continue`);
    }
    yield;
  }
  // What live play would hold: the next hand dealt, no pause between the hands to come.
  const live = state.clone({ pauseBetweenHands: false });
  if (state.phase !== 'deal') return live;
  try {
    live.dealNextHand();
  } catch (e) {
    // No deck and no seed for it (the hand waits, as in live play), or stakes past the bound.
    if (e instanceof ValidationError || e instanceof AmountOverflowError) return state.clone({ pauseBetweenHands: false });
    throw e;
  }
  return live;
}

/**
 * A new state at the start of `state`'s session, from which its first `hands` hands replay by
 * applying their logged actions (`state.handLog(h).actions`): from the seed alone where that
 * deals the session again (a vector env's states), else given those hands' decks and the start.
 * Giving every deck of a long session first took a tenth of a second in one piece.
 */
export function logReplayStart(state: StateReader, hands: number, pauseBetweenHands: boolean): KratzenState {
  if (state.dealtFromSeedAlone) return state.game.newState({ seed: state.seed, pauseBetweenHands });
  const start = state.startInfo;
  return state.game.newState({
    seed: state.seed,
    decks: Array.from({ length: hands }, (_, h) => state.handLog(h).deck),
    start: { dealer: start.dealer, pot: start.pot, balances: start.balances, muss: start.muss },
    pauseBetweenHands,
  });
}

/**
 * `state`'s session as it stood when its first `hands` hands were finished, before the next
 * deal, replayed from its own log a hand at a time: a hand episode that ended while its session
 * went on (dealt the next hand, and maybe played more).
 */
export function* stateAtHandEndSteps(state: StateReader, hands: number): Generator<void, KratzenState> {
  if (!Number.isInteger(hands) || hands < 1 || hands > state.numResults) throw new RangeError(`hands must be 1..${state.numResults} (the hands finished), got ${hands}`);
  const replay = logReplayStart(state, hands, true);
  for (let h = 0; h < hands; h++) {
    if (h > 0) replay.dealNextHand();
    for (const { seat, action } of state.handLog(h).actions) replay.applyAs(seat, action);
    yield;
  }
  return replay;
}

/** Units to chips, exact for quarters and printed to at most 6 decimals for fifths. */
function chips(state: StateReader, units: number): number {
  return Number((units / state.game.unitsPerChip).toFixed(6));
}

export function handReport(state: StateReader, r: HandResult): HandReport {
  return handReportIn(r, (units) => chips(state, units));
}

/** A hand's report with each amount (in units) as `amount` gives it. */
function handReportIn<Amount>(r: HandResult, amount: (units: number) => Amount): HandReport<Amount> {
  const amounts = (values: readonly number[]) => values.map(amount);
  const report: HandReport<Amount> = {
    dealer: r.dealer,
    trump: SUIT_LETTERS[r.trump]!,
    indicator: r.indicator < 0 ? null : cardToken(r.indicator),
    kind: r.kind,
    walkover: r.walkover,
    potBeforePlay: amount(r.potBeforePlay),
    in: [...r.in],
    tricks: [...r.tricks],
    payouts: amounts(r.payouts),
    penalties: amounts(r.penalties),
    potAfter: amount(r.potAfter),
    balances: amounts(r.balances),
  };
  if (r.fees) {
    const { potAfter, balances, ...head } = report;
    return { ...head, fees: amounts(r.fees), potAfter, balances };
  }
  return report;
}

/**
 * The section-6 result of a state: completed hands and the final ledger. With `from`/`to`,
 * `hands` holds only the reports of hands from .. to - 1 (a page of a long session).
 */
export function replayResult(state: StateReader, from = 0, to = Infinity): ReplayResult {
  return replayResultIn(state, (units) => chips(state, units), from, to);
}

function replayResultIn<Amount>(state: StateReader, amount: (units: number) => Amount, from = 0, to = Infinity): ReplayResult<Amount> {
  const count = state.numResults;
  const last = count > 0 ? state.resultOf(count - 1) : undefined;
  const balances = last ? last.balances : state.startInfo.balances;
  const final: ReplayResult<Amount>['final'] = {
    balances: balances.map(amount),
    pot: amount(last ? last.potAfter : state.startInfo.pot),
    complete: state.complete,
  };
  if (state.complete) final.winners = state.winners();
  const hands: HandReport<Amount>[] = [];
  for (let h = from; h < Math.min(to, count); h++) hands.push(handReportIn(state.resultOf(h), amount));
  return { hands, final };
}

/**
 * Writes a state's session so far as a record, every hand with its full deck; with `from`/`to`,
 * only the hands from .. to - 1 (a page of a long session; 0, 0: rules and start alone).
 */
export function stateToRecord(state: StateReader, from = 0, to = Infinity): GameRecord {
  const start: NonNullable<GameRecord['start']> = {
    dealer: state.startInfo.dealer,
    pot: chips(state, state.startInfo.pot),
    balances: state.startInfo.balances.map((u) => chips(state, u)),
  };
  // Written out in tavern5 although true is the default [D-10]: a reader need not know the default.
  if (state.game.profile.opensWithMuss) start.muss = state.startInfo.muss;
  const record: GameRecord = { rules: ruleSetToJson(state.rules) };
  if (state.seed !== undefined) record.seed = state.seed;
  record.start = start;
  record.hands = [];
  for (let h = from; h < Math.min(to, state.numHandsStarted); h++) {
    const { deck, actions } = state.handLog(h);
    record.hands.push({ deck: deck.map(cardToken), actions: actions.map(({ seat, action }) => ({ seat, action: actionToString(action) })) });
  }
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

/** `kratzen replay` as a function: the result JSON and exit code 0, or the error JSON and its code. */
export function replayToJson(input: unknown): { exitCode: number; output: object } {
  try {
    return { exitCode: 0, output: replayRecord(input).result };
  } catch (e) {
    const report = errorReport(e);
    if (report) return report;
    throw e;
  }
}

/** An amount the exact printer writes from its units. */
class ExactChips {
  constructor(
    readonly units: number,
    readonly unitsPerChip: number,
  ) {}

  /** The exact decimal: quarters to 2 decimals, fifths to 1. */
  toString(): string {
    const magnitude = Math.abs(this.units);
    const part = magnitude % this.unitsPerChip;
    const whole = (magnitude - part) / this.unitsPerChip;
    const sign = this.units < 0 ? '-' : '';
    if (part === 0) return `${sign}${whole}`;
    return `${sign}${whole}.${String((part * 100) / this.unitsPerChip).replace(/0$/, '')}`;
  }
}

/**
 * `kratzen replay`'s text: replayToJson's JSON, laid out as JSON.stringify(output, null, indent)
 * would, but with every amount printed exactly from its units (docs/rules.md §6). JSON.stringify
 * writes a number's shortest round-trip form, which past 2^50 chips drops a quarter's last digit
 * (1800000000000002.25 as ...2.2), and there a fifth's double is not even the fifth.
 */
export function replayToText(input: unknown, indent = 2): { exitCode: number; text: string } {
  let result: ReplayResult<ExactChips>;
  try {
    const { state } = replayRecord(input);
    result = replayResultIn(state, (units) => new ExactChips(units, state.game.unitsPerChip));
  } catch (e) {
    const report = errorReport(e);
    if (report) return { exitCode: report.exitCode, text: JSON.stringify(report.output, null, indent) };
    throw e;
  }
  const write = (value: unknown, depth: number): string => {
    if (value instanceof ExactChips) return value.toString();
    if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
    const entries = Array.isArray(value)
      ? value.map((item) => write(item ?? null, depth + 1))
      : Object.entries(value).flatMap(([key, item]) => (item === undefined ? [] : [`${JSON.stringify(key)}:${indent ? ' ' : ''}${write(item, depth + 1)}`]));
    const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) return open + close;
    if (!indent) return open + entries.join(',') + close;
    const inner = '\n' + ' '.repeat(indent * (depth + 1));
    return open + inner + entries.join(',' + inner) + '\n' + ' '.repeat(indent * depth) + close;
  };
  return { exitCode: 0, text: write(result, 0) };
}
