// The observation of one seat: a fixed-length Float32Array with a versioned layout of named
// slices, and its encoder. The structured JSON view of the same information and the decoder from
// vector to view are in observation-view.ts.
//
// Everything here is what the seat may know and nothing more: its own hand and discards, the
// face-up card(s), trump, every card played (by relative seat and trick), declarations, exchange
// counts, tricks won, quotas, dealer, hand kind, pot, balances, session progress and the rule set
// of the table. Other hands, the undealt cards / talon and other seats' discards never enter
// (tested by permuting them).
//
// Seats in the vector are *relative*: slot 0 is the observer, slot k the k-th seat clockwise.
// Amounts (chips) are squashed by symlog(x) = sign(x) * ln(1 + |x|), which keeps every value
// within [-AMOUNT_BOUND, AMOUNT_BOUND] for any amount the engine can hold (2^53 units).
//
// | slice            | size   | meaning                                                          |
// |------------------|--------|------------------------------------------------------------------|
// | hand             | 33     | 1 for each card in the observer's hand (card ids of cards.ts)     |
// | ownDiscards      | 33     | cards the observer discarded this hand (dealer discard, exchange) |
// | faceUp           | 33     | face-up cards: didactic4 indicator(s), tavern5 turned card        |
// | trump            | 4      | one-hot trump suit c,s,h,d (all 0 while a named trump is pending) |
// | currentTrick     | 33     | cards in the trick in progress (who played each: playedBy)        |
// | playedBy         | 6 x 33 | card played this hand (finished or current trick) by relative seat|
// | playedTrick      | 33     | (t + 1) / 5 for a card played in trick t (0-based), 0 if unplayed |
// | trickLeader      | 6      | one-hot relative seat that led the trick in progress              |
// | declarations     | 6 x 4  | per relative seat one-hot none, out, in, bettler                  |
// | exchanged        | 6      | cards exchanged by each relative seat / 5                         |
// | tricksWon        | 6      | tricks won by each relative seat / 5                              |
// | quotas           | 6      | trick quota of each relative seat / 5 (0 when not dealt in)       |
// | dealtIn          | 6      | 1 for relative seats dealt into this hand                         |
// | seatExists       | 6      | 1 for relative seats at the table (numPlayers of them)            |
// | dealer           | 6      | one-hot relative seat of the dealer (the didactic4 declarer)      |
// | toAct            | 6      | one-hot relative seat to act (all 0 when none)                    |
// | seat             | 6      | one-hot absolute seat of the observer                             |
// | numPlayers       | 4      | one-hot 3, 4, 5, 6                                                |
// | profile          | 2      | one-hot didactic4, tavern5                                        |
// | kind             | 5      | one-hot funding-muss, forced-muss, normal, muss, tie-break        |
// | phase            | 7      | one-hot deal, trump, discard, declare, exchange, play, over        |
// | trickNumber      | 1      | tricks finished this hand / 5                                     |
// | talonLeft        | 1      | tavern5 talon cards left / 33                                     |
// | pot              | 1      | symlog(pot in chips)                                              |
// | potBeforePlay    | 1      | symlog(P in chips), 0 before play                                 |
// | balances         | 6      | symlog(balance in chips) by relative seat                         |
// | handsPlayed      | 1      | regular hands finished / hands in the session                     |
// | tieBreak         | 1      | 1 during a tavern5 tie-break deal                                 |
// | -- the rule set (docs/rules.md §0), the same in every phase; 0 for tavern5 rules in didactic4 -- |
// | weliHighest      | 1      | 1 when weliRank is "highest" (the Weli above the trump Ace)       |
// | dealerMinTricks  | 1      | the tavern5 dealer's quota (2 or 3) / 5                           |
// | failPenaltyPot   | 1      | 1 when failPenalty is "pot" (else twice the ante)                 |
// | exchangeOn       | 1      | 1 when the exchange variant is on                                 |
// | exchangeMaxCards | 1      | exchange.maxCards / 5                                             |
// | exchangeFee      | 1      | symlog(exchange.feePerCard in chips)                              |
// | bettlerOn        | 1      | 1 when the bettler variant is on                                  |
// | bettlerBonus     | 1      | symlog(bettler.bonus in chips)                                    |
// | ante             | 1      | symlog(ante in chips)                                             |
// | startingChipsSet | 1      | 1 when startingChips is set                                       |
// | startingChips    | 1      | symlog(startingChips)                                             |
// | targetChipsSet   | 1      | 1 when targetChips is set                                         |
// | targetChips      | 1      | symlog(targetChips)                                               |
// | sessionHands     | 1      | symlog(hands in the session)                                      |
// | handsLeft        | 1      | symlog(regular hands still to play; 0 during a tie-break)         |
//
// Version history: 1 - first layout. 2 - the rule set and the hands left (rules revision 2);
// a policy could not tell, say, whether the Weli beats the trump Ace.

import {
  DECLARATION_NAMES,
  HAND_KINDS,
  MAX_SEATS,
  MAX_TRICKS,
  NUM_CARDS,
  PHASES,
  handKindIndex,
  phaseIndex,
  type KratzenGame,
  type StateReader,
} from './rules/index.js';
// The zero-copy view of the state's public table: this encoder alone reads it (see rules/index.ts).
import { LiveSeatView, TableAt, liveSeatView } from './rules/seat-view.js';

export const OBS_VERSION = 2;
const NUM_DECLARATIONS = DECLARATION_NAMES.length;
/** Largest |symlog(chips)| for amounts up to 2^53 units of a quarter chip. */
export const AMOUNT_BOUND = 37;

/** The slices in order: [name, size, low, high]. The layout is derived from this list alone. */
export const OBS_LAYOUT = [
  ['hand', NUM_CARDS, 0, 1],
  ['ownDiscards', NUM_CARDS, 0, 1],
  ['faceUp', NUM_CARDS, 0, 1],
  ['trump', 4, 0, 1],
  ['currentTrick', NUM_CARDS, 0, 1],
  ['playedBy', MAX_SEATS * NUM_CARDS, 0, 1],
  ['playedTrick', NUM_CARDS, 0, 1],
  ['trickLeader', MAX_SEATS, 0, 1],
  ['declarations', MAX_SEATS * NUM_DECLARATIONS, 0, 1],
  ['exchanged', MAX_SEATS, 0, 1],
  ['tricksWon', MAX_SEATS, 0, 1],
  ['quotas', MAX_SEATS, 0, 1],
  ['dealtIn', MAX_SEATS, 0, 1],
  ['seatExists', MAX_SEATS, 0, 1],
  ['dealer', MAX_SEATS, 0, 1],
  ['toAct', MAX_SEATS, 0, 1],
  ['seat', MAX_SEATS, 0, 1],
  ['numPlayers', 4, 0, 1],
  ['profile', 2, 0, 1],
  ['kind', HAND_KINDS.length, 0, 1],
  ['phase', PHASES.length, 0, 1],
  ['trickNumber', 1, 0, 1],
  ['talonLeft', 1, 0, 1],
  ['pot', 1, 0, AMOUNT_BOUND],
  ['potBeforePlay', 1, 0, AMOUNT_BOUND],
  ['balances', MAX_SEATS, -AMOUNT_BOUND, AMOUNT_BOUND],
  ['handsPlayed', 1, 0, 1],
  ['tieBreak', 1, 0, 1],
  ['weliHighest', 1, 0, 1],
  ['dealerMinTricks', 1, 0, 1],
  ['failPenaltyPot', 1, 0, 1],
  ['exchangeOn', 1, 0, 1],
  ['exchangeMaxCards', 1, 0, 1],
  ['exchangeFee', 1, 0, AMOUNT_BOUND],
  ['bettlerOn', 1, 0, 1],
  ['bettlerBonus', 1, 0, AMOUNT_BOUND],
  ['ante', 1, 0, AMOUNT_BOUND],
  ['startingChipsSet', 1, 0, 1],
  ['startingChips', 1, 0, AMOUNT_BOUND],
  ['targetChipsSet', 1, 0, 1],
  ['targetChips', 1, 0, AMOUNT_BOUND],
  ['sessionHands', 1, 0, AMOUNT_BOUND],
  ['handsLeft', 1, 0, AMOUNT_BOUND],
] as const;

export type SliceName = (typeof OBS_LAYOUT)[number][0];

export interface ObservationSlice {
  name: SliceName;
  offset: number;
  size: number;
  low: number;
  high: number;
}

export interface ObservationSpec {
  version: number;
  size: number;
  slices: ObservationSlice[];
}

const SLICES: ObservationSlice[] = [];
let cursor = 0;
for (const [name, size, low, high] of OBS_LAYOUT) {
  SLICES.push({ name, offset: cursor, size, low, high });
  cursor += size;
}
/**
 * Slices whose entries are indexed by card id, in blocks of NUM_CARDS: what a relabelling of the
 * suits moves (env/suit-symmetry.ts). Apart from `trump`, every other slice is suit-blind.
 */
export const CARD_INDEXED_SLICES: readonly SliceName[] = ['hand', 'ownDiscards', 'faceUp', 'currentTrick', 'playedBy', 'playedTrick'];
/** Observation length; the same for every rule set so policies carry over between tables. */
export const OBS_SIZE = cursor;
/** Slices whose entries are only ever 0 or 1: one digit each in JSON. */
const ZERO_ONE_SLICES: ReadonlySet<SliceName> = new Set<SliceName>([
  'hand', 'ownDiscards', 'faceUp', 'trump', 'currentTrick', 'playedBy', 'trickLeader', 'declarations',
  'dealtIn', 'seatExists', 'dealer', 'toAct', 'seat', 'numPlayers', 'profile', 'kind', 'phase', 'tieBreak',
]);
/**
 * The longest JSON number of a float32 value as JSON.stringify writes it (as a double): a sign,
 * `0.00000` and 17 significant digits (`-0.0000012345678901234567`; exponents are shorter).
 */
const MAX_JSON_NUMBER_CHARS = 25;
/**
 * The most bytes one observation row takes as a JSON array written by JSON.stringify (`[`, `]`,
 * the entries and the commas between them): what a policy.act row may cost a client that sends
 * rows as the server sent them (bridge/connection.ts sizes its row limit by it).
 */
export const MAX_OBSERVATION_JSON_BYTES =
  1 + SLICES.reduce((bytes, s) => bytes + s.size * (ZERO_ONE_SLICES.has(s.name) ? 2 : MAX_JSON_NUMBER_CHARS + 1), 0);
/** Where slice `name` starts in an observation row. */
export function sliceOffset(name: SliceName): number {
  return SLICES.find((s) => s.name === name)!.offset;
}
// Offsets as plain constants: the hot encoder must not look names up in an object.
const O_hand = sliceOffset('hand');
const O_ownDiscards = sliceOffset('ownDiscards');
const O_faceUp = sliceOffset('faceUp');
const O_trump = sliceOffset('trump');
const O_currentTrick = sliceOffset('currentTrick');
const O_playedBy = sliceOffset('playedBy');
const O_playedTrick = sliceOffset('playedTrick');
const O_trickLeader = sliceOffset('trickLeader');
const O_declarations = sliceOffset('declarations');
const O_exchanged = sliceOffset('exchanged');
const O_tricksWon = sliceOffset('tricksWon');
const O_quotas = sliceOffset('quotas');
const O_dealtIn = sliceOffset('dealtIn');
const O_seatExists = sliceOffset('seatExists');
const O_dealer = sliceOffset('dealer');
const O_toAct = sliceOffset('toAct');
const O_seat = sliceOffset('seat');
const O_numPlayers = sliceOffset('numPlayers');
const O_profile = sliceOffset('profile');
const O_kind = sliceOffset('kind');
const O_phase = sliceOffset('phase');
const O_trickNumber = sliceOffset('trickNumber');
const O_talonLeft = sliceOffset('talonLeft');
const O_pot = sliceOffset('pot');
const O_potBeforePlay = sliceOffset('potBeforePlay');
const O_balances = sliceOffset('balances');
const O_handsPlayed = sliceOffset('handsPlayed');
const O_tieBreak = sliceOffset('tieBreak');
const O_handsLeft = sliceOffset('handsLeft');

/** Where each slice starts, by name (for code that reads slices by name: the decoder, checks). */
export const SLICE_OFFSETS: Readonly<Record<SliceName, number>> = Object.fromEntries(SLICES.map((s) => [s.name, s.offset])) as Record<SliceName, number>;
const O = SLICE_OFFSETS;

/** The documented layout: named slices with offsets, sizes and bounds. */
export function observationSpec(): ObservationSpec {
  return { version: OBS_VERSION, size: OBS_SIZE, slices: SLICES.map((s) => ({ ...s })) };
}

export function symlog(x: number): number {
  return x < 0 ? -Math.log1p(-x) : Math.log1p(x);
}

/** The inverse of symlog. */
export function symexp(y: number): number {
  return y < 0 ? -Math.expm1(-y) : Math.expm1(y);
}

// The encoder writes the observation's non-zero entries (at most MAX_NONZERO) straight into the
// target row, and lists their indices when asked. Callers either clear the whole row first, or,
// for rows they own, keep the list per row and clear only those entries next time
// (ObservationRows). Rows in shared memory need the latter: TypedArray.fill on a
// SharedArrayBuffer takes V8's slow relaxed-atomic path. The list costs a vector env's step a
// few percent, so rows cleared whole list their entries only for sparse wire formats (the
// bridge).
const MAX_NONZERO = 256;
const NO_LIST = new Uint16Array(0);

// symlog of amounts in units, looked up rather than computed (ln1p costs more than the rest of
// the encoding of a seat). Amounts under AMOUNT_TABLE_LIMIT units (almost every balance and pot)
// come from a table per unitsPerChip (4 in didactic4, 5 in tavern5); others from a direct-mapped
// memo: a session sees few distinct amounts. The table read is cheaper than the memo's hash and
// compares.
const AMOUNT_TABLE_LIMIT = 1024;
const amountTables = new Map<number, Float32Array>();
let tableUnitsPerChip = 0;
let amountTable: Float32Array = new Float32Array(0);

/** Points `amountTable` at the table of `unitsPerChip`, made at its first use. */
function useAmountTable(unitsPerChip: number): void {
  let table = amountTables.get(unitsPerChip);
  if (!table) {
    table = new Float32Array(2 * AMOUNT_TABLE_LIMIT + 1);
    for (let u = -AMOUNT_TABLE_LIMIT; u <= AMOUNT_TABLE_LIMIT; u++) table[u + AMOUNT_TABLE_LIMIT] = symlog(u / unitsPerChip);
    amountTables.set(unitsPerChip, table);
  }
  tableUnitsPerChip = unitsPerChip;
  amountTable = table;
}

const MEMO_SIZE = 1024;
const memoUnits = new Float64Array(MEMO_SIZE).fill(NaN);
const memoChip = new Float64Array(MEMO_SIZE);
const memoValue = new Float64Array(MEMO_SIZE);

/**
 * Writes symlog(units in chips) at `at`. It writes rather than returns: a double returned from
 * a call that is not inlined is boxed (garbage on every step).
 */
function writeAmount(out: Float32Array, at: number, units: number, unitsPerChip: number): void {
  if (unitsPerChip === tableUnitsPerChip && units > -AMOUNT_TABLE_LIMIT && units < AMOUNT_TABLE_LIMIT) {
    out[at] = amountTable[units + AMOUNT_TABLE_LIMIT]!;
    return;
  }
  const slot = (units + unitsPerChip * 7919) & (MEMO_SIZE - 1);
  if (memoUnits[slot] !== units || memoChip[slot] !== unitsPerChip) {
    memoUnits[slot] = units;
    memoChip[slot] = unitsPerChip;
    memoValue[slot] = symlog(units / unitsPerChip);
  }
  out[at] = memoValue[slot]!;
}

// The rule-set entries are the same for every state of a game: computed once per game and
// copied. Vector envs share one game, so the cache almost always hits.
const MAX_RULE_ENTRIES = 16;
const ruleIndices = new Uint16Array(MAX_RULE_ENTRIES);
const ruleValues = new Float32Array(MAX_RULE_ENTRIES);
let numRuleEntries = 0;
let ruleEntriesGame: KratzenGame | null = null;

function prepareRuleEntries(game: KratzenGame): void {
  ruleEntriesGame = game;
  numRuleEntries = 0;
  const put = (name: SliceName, value: number) => {
    if (value === 0) return;
    ruleIndices[numRuleEntries] = O[name];
    ruleValues[numRuleEntries++] = value;
  };
  const r = game.rules;
  put('sessionHands', symlog(r.hands));
  if (r.profile !== 'tavern5') return;
  put('weliHighest', r.weliRank === 'highest' ? 1 : 0);
  put('dealerMinTricks', r.dealerMinTricks / MAX_TRICKS);
  put('failPenaltyPot', r.failPenalty === 'pot' ? 1 : 0);
  if (r.exchange) {
    put('exchangeOn', 1);
    put('exchangeMaxCards', r.exchange.maxCards / 5);
    put('exchangeFee', symlog(r.exchange.feePerCard));
  }
  if (r.bettler) {
    put('bettlerOn', 1);
    put('bettlerBonus', symlog(r.bettler.bonus));
  }
  put('ante', symlog(r.ante));
  if (r.startingChips !== null) {
    put('startingChipsSet', 1);
    put('startingChips', symlog(r.startingChips));
  }
  if (r.targetChips !== null) {
    put('targetChipsSet', 1);
    put('targetChips', symlog(r.targetChips));
  }
}

/**
 * Writes the entries of the observation of `seat` that may be non-zero into `out` at `offset`
 * (the rest of the row must already be zero) and, if `list`, lists their indices in `w` from
 * `wBase`; returns their count. Reads only what `seat` may know: see the file header.
 *
 * Written straight-line, one `i = index; out[offset + i] = value; if (list) w[k] = i; k++` per entry:
 * with ~40 calls to small helpers this function passed TurboFan's inlining budget, and the
 * calls left un-inlined were a third of the encoding time. Entries that are 0 are skipped: fewer
 * to clear next time in shared rows.
 */
function writeNonZeros(v: LiveSeatView, out: Float32Array, offset: number, list: boolean, w: Uint16Array, wBase: number): number {
  const n = v.numPlayers;
  const seat = v.seat;
  const chip = v.game.unitsPerChip;
  if (chip !== tableUnitsPerChip) useAmountTable(chip);
  let k = wBase;
  let i = 0;
  const { bytes, ubytes, units } = v;
  // Relative seat of s is s - seat, wrapped into 0..n-1 (a branch: cheaper than %).

  const hand = v.hand;
  for (let j = 0; j < v.handLength; j++) {
    i = O_hand + hand[j]!;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }
  const ownDiscards = v.ownDiscards;
  for (let j = 0; j < v.numOwnDiscards; j++) {
    i = O_ownDiscards + ownDiscards[j]!;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }
  for (let j = 0; j < v.numFaceUp; j++) {
    i = O_faceUp + bytes[TableAt.faceUp + j]!;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }
  if (v.trump >= 0) {
    i = O_trump + v.trump;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }

  const lastTrick = Math.min(v.trickNumber, MAX_TRICKS - 1);
  for (let t = 0; t <= lastTrick; t++) {
    const trickValue = (t + 1) / MAX_TRICKS;
    for (let s = 0; s < n; s++) {
      const card = bytes[TableAt.playedCards + t * MAX_SEATS + s]!;
      if (card < 0) continue;
      const r = s >= seat ? s - seat : s - seat + n;
      i = O_playedBy + r * NUM_CARDS + card;
      out[offset + i] = 1;
      if (list) w[k] = i;
      k++;
      i = O_playedTrick + card;
      out[offset + i] = trickValue;
      if (list) w[k] = i;
      k++;
    }
  }
  if (v.phase === 'play') {
    for (let j = 0; j < v.trickLength; j++) {
      i = O_currentTrick + bytes[TableAt.trickCards + j]!;
      out[offset + i] = 1;
      if (list) w[k] = i;
      k++;
    }
    const leader = v.leader;
    i = O_trickLeader + (leader >= seat ? leader - seat : leader - seat + n);
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }

  for (let s = 0; s < n; s++) {
    const r = s >= seat ? s - seat : s - seat + n;
    i = O_declarations + r * NUM_DECLARATIONS + ubytes[TableAt.declaration + s]!;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
    if (ubytes[TableAt.exchanged + s]) {
      i = O_exchanged + r;
      out[offset + i] = ubytes[TableAt.exchanged + s]! / 5;
      if (list) w[k] = i;
      k++;
    }
    if (ubytes[TableAt.tricksWon + s]) {
      i = O_tricksWon + r;
      out[offset + i] = ubytes[TableAt.tricksWon + s]! / MAX_TRICKS;
      if (list) w[k] = i;
      k++;
    }
    if (ubytes[TableAt.quotas + s]) {
      i = O_quotas + r;
      out[offset + i] = ubytes[TableAt.quotas + s]! / MAX_TRICKS;
      if (list) w[k] = i;
      k++;
    }
    if (ubytes[TableAt.dealtIn + s]) {
      i = O_dealtIn + r;
      out[offset + i] = 1;
      if (list) w[k] = i;
      k++;
    }
    i = O_seatExists + r;
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
    if (units[TableAt.balances + s] !== 0) {
      i = O_balances + r;
      writeAmount(out, offset + i, units[TableAt.balances + s]!, chip);
      if (list) w[k] = i;
      k++;
    }
  }
  const dealer = v.dealer;
  i = O_dealer + (dealer >= seat ? dealer - seat : dealer - seat + n);
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  const toAct = v.toAct;
  if (toAct >= 0) {
    i = O_toAct + (toAct >= seat ? toAct - seat : toAct - seat + n);
    out[offset + i] = 1;
    if (list) w[k] = i;
    k++;
  }
  i = O_seat + seat;
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  i = O_numPlayers + n - 3;
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  const rules = v.rules;
  const tavern = rules.profile === 'tavern5';
  i = O_profile + (tavern ? 1 : 0);
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  i = O_kind + handKindIndex(v.kind);
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  i = O_phase + phaseIndex(v.phase);
  out[offset + i] = 1;
  if (list) w[k] = i;
  k++;
  if (v.trickNumber > 0) {
    out[offset + O_trickNumber] = v.trickNumber / MAX_TRICKS;
    if (list) w[k] = O_trickNumber;
    k++;
  }
  if (v.talonLeft > 0) {
    out[offset + O_talonLeft] = v.talonLeft / NUM_CARDS;
    if (list) w[k] = O_talonLeft;
    k++;
  }
  if (v.pot !== 0) {
    writeAmount(out, offset + O_pot, v.pot, chip);
    if (list) w[k] = O_pot;
    k++;
  }
  if (v.potBeforePlay !== 0) {
    writeAmount(out, offset + O_potBeforePlay, v.potBeforePlay, chip);
    if (list) w[k] = O_potBeforePlay;
    k++;
  }
  if (v.handsPlayed > 0) {
    out[offset + O_handsPlayed] = v.handsPlayed / rules.hands;
    if (list) w[k] = O_handsPlayed;
    k++;
  }
  if (v.isTieBreak) {
    out[offset + O_tieBreak] = 1;
    if (list) w[k] = O_tieBreak;
    k++;
  } else {
    const handsLeft = rules.hands - v.handsPlayed;
    if (handsLeft > 0) {
      writeAmount(out, offset + O_handsLeft, handsLeft, 1);
      if (list) w[k] = O_handsLeft;
      k++;
    }
  }
  if (v.game !== ruleEntriesGame) prepareRuleEntries(v.game);
  for (let j = 0; j < numRuleEntries; j++) {
    i = ruleIndices[j]!;
    out[offset + i] = ruleValues[j]!;
    if (list) w[k] = i;
    k++;
  }
  return k - wBase;
}

/**
 * Throws a RangeError unless `out` is a Float32Array holding `size` floats from `offset` (an
 * integer): a short buffer or an offset past it took writes past its end without a word.
 */
export function checkFloatRows(out: unknown, offset: number, size: number, what: string): void {
  if (out instanceof Float32Array && Number.isSafeInteger(offset) && offset >= 0 && offset + size <= out.length) return;
  const holds = out instanceof Float32Array ? `; it holds ${out.length}` : `, not ${out === null ? 'null' : typeof out === 'object' ? (out.constructor?.name ?? 'an object') : typeof out}`;
  throw new RangeError(`${what} needs ${size} floats of a Float32Array from offset ${String(offset).slice(0, 20)}${holds}`);
}

// One view for the encoder to fill: encoding allocates nothing.
const scratchView = new LiveSeatView();

/** Writes the observation of `seat` into `out` at `offset` (OBS_SIZE floats). Allocates nothing. */
export function encodeObservation(state: StateReader, seat: number, out: Float32Array, offset = 0): void {
  checkFloatRows(out, offset, OBS_SIZE, 'an observation');
  // Checked before the row is cleared: a bad seat left the caller's buffer zeroed.
  state.assertSeat(seat);
  out.fill(0, offset, offset + OBS_SIZE);
  writeNonZeros(liveSeatView(state, seat, scratchView), out, offset, false, NO_LIST, 0);
}

/**
 * Observation rows that this writer alone fills. Rows in shared memory (`clearWhole` false) are
 * cleared entry by entry; private ones with a plain fill, which is faster there. With
 * `listEntries` (always when not `clearWhole`) each row keeps the list of the entries its last
 * write set (`setCounts` / `setIndices`, in no particular order): exactly the row's non-zero
 * entries, each once, so sparse encodings need not scan the row (tested). Callers must treat the
 * rows as read-only (an entry written by someone else would not be cleared).
 */
export class ObservationRows {
  /** Whether `setIndices` lists each row's entries. */
  readonly listsEntries: boolean;
  /** Per row, MAX_NONZERO slots: the indices within the row that the last write set (empty when not listed). */
  readonly setIndices: Uint16Array;
  /** Per row, how many entries the last write set (kept either way). */
  readonly setCounts: Uint16Array;
  /** Slots per row in `setIndices`. */
  readonly stride = MAX_NONZERO;

  constructor(
    readonly out: Float32Array,
    readonly numRows: number,
    private readonly clearWhole = false,
    listEntries = false,
  ) {
    this.listsEntries = listEntries || !clearWhole;
    this.setIndices = this.listsEntries ? new Uint16Array(numRows * MAX_NONZERO) : NO_LIST;
    this.setCounts = new Uint16Array(numRows);
    out.fill(0, 0, numRows * OBS_SIZE);
  }

  write(state: StateReader, seat: number, row: number): void {
    const out = this.out;
    const offset = row * OBS_SIZE;
    const base = row * MAX_NONZERO;
    if (this.clearWhole) out.fill(0, offset, offset + OBS_SIZE);
    else {
      const previous = this.setCounts[row]!;
      for (let k = 0; k < previous; k++) out[offset + this.setIndices[base + k]!] = 0;
    }
    this.setCounts[row] = writeNonZeros(liveSeatView(state, seat, scratchView), out, offset, this.listsEntries, this.setIndices, base);
  }
}
