// The observation of one seat: a fixed-length Float32Array with a versioned layout of named
// slices, a structured JSON view of the same information, and a decoder from vector to view.
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
  DECL_NONE,
  HAND_KINDS,
  MAX_SEATS,
  HAND_CAPACITY,
  MAX_TRICKS,
  nextSeatWith,
  NUM_CARDS,
  PHASES,
  PROFILES,
  SUIT_LETTERS,
  SeatView,
  cardToken,
  handKindIndex,
  parseCard,
  parseRuleSet,
  phaseIndex,
  ruleSetToJson,
  seatView,
  createGame,
  WELI,
  EXACT_FIFTHS_BELOW_CHIPS,
  playsByDeclaration,
  type HandKind,
  type KratzenGame,
  type KratzenState,
  type Phase,
  type Profile,
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

const O: Record<SliceName, number> = Object.fromEntries(SLICES.map((s) => [s.name, s.offset])) as Record<SliceName, number>;

/** The documented layout: named slices with offsets, sizes and bounds. */
export function observationSpec(): ObservationSpec {
  return { version: OBS_VERSION, size: OBS_SIZE, slices: SLICES.map((s) => ({ ...s })) };
}

export function symlog(x: number): number {
  return x < 0 ? -Math.log1p(-x) : Math.log1p(x);
}

function symexp(y: number): number {
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

/** Slices that hold exactly one 1 in every observation (decodeSeatView checks them). */
const STRICT_ONE_HOT: readonly [SliceName, number][] = [['seat', MAX_SEATS], ['numPlayers', 4], ['profile', 2], ['phase', PHASES.length], ['kind', HAND_KINDS.length]];

/** The structured view of an observation; seats here are absolute. */
export interface ObservationView {
  obsVersion: number;
  profile: Profile;
  numPlayers: number;
  seat: number;
  phase: Phase;
  /** Absolute seat to act, -1 when none. */
  toAct: number;
  dealer: number;
  kind: HandKind;
  trump: string | null;
  faceUp: string[];
  hand: string[];
  ownDiscards: string[];
  /** Per seat: none, out, in, bettler. */
  declarations: string[];
  exchanged: number[];
  tricksWon: number[];
  quotas: number[];
  dealtIn: boolean[];
  /** The card each seat played to the trick in progress, null when none. */
  currentTrick: (string | null)[];
  trickLeader: number;
  /** playedBy[seat] = cards that seat played this hand, in trick order. */
  playedBy: string[][];
  trickNumber: number;
  talonLeft: number;
  pot: number;
  potBeforePlay: number;
  balances: number[];
  handsPlayedFraction: number;
  tieBreak: boolean;
  /** Regular hands still to play in the session (0 during a tie-break deal). */
  handsLeft: number;
  /**
   * The table's rule set as a record writes it (docs/rules.md §0; `deckStyle`, display only, is
   * not observed). Decoded views share one frozen object per rule set.
   */
  rules: Readonly<Record<string, unknown>>;
}

const tokens = (cards: Iterable<number>) => Array.from(cards, cardToken).sort(cardOrder);
function cardOrder(a: string, b: string): number {
  return parseCard(a) - parseCard(b);
}

/** The structured view of what `seat` sees of `state` (the decoder must agree with it). */
export function observationView(state: StateReader, seat: number): ObservationView {
  // seatViewJson copies what it reads, so one view serves every call.
  return seatViewJson(seatView(state, seat, jsonView));
}
const jsonView = new SeatView();

/** A SeatView as JSON: card tokens, absolute seats, amounts in chips. */
export function seatViewJson(v: SeatView): ObservationView {
  const n = v.numPlayers;
  const seats = Array.from({ length: n }, (_, s) => s);
  const currentTrick: (string | null)[] = seats.map(() => null);
  if (v.phase === 'play') {
    for (let i = 0; i < v.trickLength; i++) currentTrick[v.trickSeats[i]!] = cardToken(v.trickCards[i]!);
  }
  const playedBy = seats.map((s) => {
    const cards: number[] = [];
    for (let t = 0; t < MAX_TRICKS; t++) {
      const card = v.playedCards[t * MAX_SEATS + s]!;
      if (card >= 0) cards.push(card);
    }
    return cards.map(cardToken);
  });
  return {
    obsVersion: OBS_VERSION,
    profile: v.rules.profile,
    numPlayers: n,
    seat: v.seat,
    phase: v.phase,
    toAct: v.toAct,
    dealer: v.dealer,
    kind: v.kind,
    trump: v.trump >= 0 ? SUIT_LETTERS[v.trump]! : null,
    faceUp: tokens(Array.from({ length: v.numFaceUp }, (_, i) => v.faceUp[i]!)),
    hand: tokens(v.hand.subarray(0, v.handLength)),
    ownDiscards: tokens(v.ownDiscards.subarray(0, v.numOwnDiscards)),
    declarations: seats.map((s) => DECLARATION_NAMES[v.declaration[s]!]!),
    exchanged: seats.map((s) => v.exchanged[s]!),
    tricksWon: seats.map((s) => v.tricksWon[s]!),
    quotas: seats.map((s) => v.quotas[s]!),
    dealtIn: seats.map((s) => v.dealtIn[s] === 1),
    currentTrick,
    trickLeader: v.phase === 'play' ? v.leader : -1,
    playedBy,
    trickNumber: v.trickNumber,
    talonLeft: v.talonLeft,
    pot: v.game.toChips(v.pot),
    potBeforePlay: v.game.toChips(v.potBeforePlay),
    balances: seats.map((s) => v.game.toChips(v.balances[s]!)),
    handsPlayedFraction: v.handsPlayed / v.rules.hands,
    tieBreak: v.isTieBreak,
    handsLeft: v.isTieBreak ? 0 : v.rules.hands - v.handsPlayed,
    rules: observedRules(v.rules),
  };
}

/** The rule set as observed: everything but the display-only deck style. */
function observedRules(rules: KratzenGame['rules']): Record<string, unknown> {
  const { deckStyle: _display, ...observed } = ruleSetToJson(rules);
  return observed;
}

/**
 * Chips from a symlog entry, back on the grid every rule-set amount lies on: fifths of a chip,
 * whole chips from EXACT_FIFTHS_BELOW_CHIPS up (ruleset.ts).
 */
function fifthsFrom(y: number): number {
  const chips = symexp(y);
  return Math.abs(chips) < EXACT_FIFTHS_BELOW_CHIPS ? Math.round(chips * 5) / 5 : Math.round(chips);
}

// Decoded rule sets by the values of their slices: decoding validates through the rule-set
// schema, which is too slow to run for every decision an agent takes.
/**
 * The slices that encode the rule set rather than the state: equal in every observation of one
 * game (handsLeft, among them in the layout, counts down and is state).
 */
export const RULE_SET_SLICES: readonly SliceName[] = [
  'numPlayers',
  'profile',
  ...OBS_LAYOUT.slice(OBS_LAYOUT.findIndex(([name]) => name === 'weliHighest'))
    .map(([name]) => name as SliceName)
    .filter((name) => name !== 'handsLeft'),
];
const decodedRules = new Map<string, Readonly<Record<string, unknown>>>();

function decodeRules(at: (name: SliceName) => number, profile: Profile, numPlayers: number): Readonly<Record<string, unknown>> {
  // One-hot slices (profile, numPlayers) are keyed by their decoded values; the others are one entry each.
  let key = `${profile}/${numPlayers}`;
  for (const name of RULE_SET_SLICES) if (name !== 'profile' && name !== 'numPlayers') key += `/${at(name)}`;
  let rules = decodedRules.get(key);
  if (!rules) {
    if (decodedRules.size >= 256) decodedRules.clear();
    rules = Object.freeze(decodeRulesUncached(at, profile, numPlayers));
    decodedRules.set(key, rules);
  }
  return rules;
}

function decodeRulesUncached(at: (name: SliceName) => number, profile: Profile, numPlayers: number): Record<string, unknown> {
  // symlog(hands) in a float32 gives the count back exactly up to about a million hands; past
  // that, the nearest count it can say, kept within the rule set's range (2^53 - 1 came back one
  // above it, and every agent decoding its observation refused it).
  const hands = Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, Math.round(symexp(at('sessionHands')))));
  if (profile !== 'tavern5') return observedRules(parseRuleSet({ profile, players: numPlayers, hands }));
  const rules: Record<string, unknown> = {
    profile,
    players: numPlayers,
    hands,
    ante: fifthsFrom(at('ante')),
    weliRank: at('weliHighest') === 1 ? 'highest' : 'second',
    dealerMinTricks: Math.round(at('dealerMinTricks') * MAX_TRICKS),
    failPenalty: at('failPenaltyPot') === 1 ? 'pot' : 'double-ante',
  };
  if (at('exchangeOn') === 1) {
    rules.exchange = { maxCards: Math.round(at('exchangeMaxCards') * 5), feePerCard: fifthsFrom(at('exchangeFee')) };
  }
  if (at('bettlerOn') === 1) rules.bettler = { bonus: fifthsFrom(at('bettlerBonus')) };
  if (at('startingChipsSet') === 1) rules.startingChips = fifthsFrom(at('startingChips'));
  if (at('targetChipsSet') === 1) rules.targetChips = fifthsFrom(at('targetChips'));
  return observedRules(parseRuleSet(rules));
}

/**
 * Turns an observation vector back into its structured view. Amounts are what the float32
 * entries say (symexp of each): agents deciding on them see what a network sees; the SeatView of
 * `decodeSeatView` has them as exact units.
 */
export function decodeObservation(vector: Float32Array, offset = 0): ObservationView {
  const view = seatViewJson(decodeSeatView(vector, offset));
  const at = (name: SliceName, i = 0) => vector[offset + O[name] + i]!;
  view.pot = symexp(at('pot'));
  view.potBeforePlay = symexp(at('potBeforePlay'));
  view.handsPlayedFraction = at('handsPlayed');
  for (let r = 0; r < view.numPlayers; r++) view.balances[(r + view.seat) % view.numPlayers] = symexp(at('balances', r));
  return view;
}

// Games of decoded rule sets, by the shared rules object (decodeRules returns one per rule set).
const decodedGames = new WeakMap<object, KratzenGame>();

/** The amount (in units) whose encoding is `y`: exact wherever float32 tells neighbours apart. */
function unitsFrom(y: number, unitsPerChip: number): number {
  if (y === 0) return 0;
  const guess = Math.round(symexp(y) * unitsPerChip);
  for (let d = 0; d <= 8; d++) {
    for (const u of d === 0 ? [guess] : [guess - d, guess + d]) {
      if (Math.fround(symlog(u / unitsPerChip)) === y) return u;
    }
  }
  return guess;
}

/**
 * Turns an observation vector back into the SeatView it was encoded from (what that seat knows):
 * the input of the hidden-card sampler. Amounts come back exact where float32 tells them apart;
 * sets come back in card order (the face-up Weli first: it was turned first).
 */
export function decodeSeatView(vector: Float32Array, offset = 0, into = new SeatView()): SeatView {
  // What no encoder writes is named before anything is read from it: a vector one float short
  // was read past its end, null failed inside, and all-ones decoded to an 8-card hand.
  checkFloatRows(vector, offset, OBS_SIZE, 'an observation');
  const at = (name: SliceName, i = 0) => vector[offset + O[name] + i]!;
  for (const [name, size] of STRICT_ONE_HOT) {
    let ones = 0;
    for (let i = 0; i < size; i++) {
      const value = at(name, i);
      if (value === 1) ones++;
      else if (value !== 0) ones = 2;
    }
    if (ones !== 1) throw new RangeError(`slice ${name} is not one-hot (one 1, the rest 0)`);
  }
  const oneHot = (name: SliceName, size: number) => {
    for (let i = 0; i < size; i++) if (at(name, i) === 1) return i;
    return -1;
  };
  const cardsIn = (name: SliceName, base = 0) => {
    const out: number[] = [];
    for (let c = 0; c < NUM_CARDS; c++) if (at(name, base + c) === 1) out.push(c);
    return out;
  };
  const v = into;
  const seat = oneHot('seat', MAX_SEATS);
  const n = oneHot('numPlayers', 4) + 3;
  const abs = (r: number) => (r < 0 ? -1 : (r + seat) % n);
  const profile = PROFILES[oneHot('profile', 2)]!;
  const rules = decodeRules(at, profile, n);
  let game = decodedGames.get(rules);
  if (!game) {
    game = createGame(rules);
    decodedGames.set(rules, game);
  }
  const chip = game.unitsPerChip;
  v.game = game;
  v.rules = game.rules;
  v.numPlayers = n;
  v.seat = seat;
  v.phase = PHASES[oneHot('phase', PHASES.length)]!;
  v.kind = HAND_KINDS[oneHot('kind', HAND_KINDS.length)]!;
  v.dealer = abs(oneHot('dealer', MAX_SEATS));
  v.toAct = abs(oneHot('toAct', MAX_SEATS));
  v.trump = oneHot('trump', 4);
  v.trickNumber = Math.round(at('trickNumber') * MAX_TRICKS);
  v.talonLeft = Math.round(at('talonLeft') * NUM_CARDS);
  v.pot = unitsFrom(at('pot'), chip);
  v.potBeforePlay = unitsFrom(at('potBeforePlay'), chip);
  v.isTieBreak = at('tieBreak') === 1;
  const fraction = at('handsPlayed');
  v.handsPlayed = Math.round(fraction * game.rules.hands);
  const hand = cardsIn('hand');
  if (hand.length > HAND_CAPACITY || seat >= n) throw new RangeError(hand.length > HAND_CAPACITY ? `a hand of ${hand.length} cards` : `seat ${seat} at a table of ${n}`);
  hand.forEach((c, i) => (v.hand[i] = c));
  v.handLength = hand.length;
  const discards = cardsIn('ownDiscards');
  discards.forEach((c, i) => (v.ownDiscards[i] = c));
  v.numOwnDiscards = discards.length;
  const faceUp = cardsIn('faceUp').sort((a, b) => (a === WELI ? -1 : b === WELI ? 1 : a - b));
  v.faceUp = faceUp;
  v.numFaceUp = faceUp.length;
  const declaration = new Array<number>(MAX_SEATS).fill(DECL_NONE);
  const exchanged = new Array<number>(MAX_SEATS).fill(0);
  const tricksWon = new Array<number>(MAX_SEATS).fill(0);
  const quotas = new Array<number>(MAX_SEATS).fill(0);
  const dealtIn = new Array<number>(MAX_SEATS).fill(0);
  const playing = new Array<number>(MAX_SEATS).fill(0);
  const balances = new Array<number>(MAX_SEATS).fill(0);
  const playedCards = new Array<number>(MAX_TRICKS * MAX_SEATS).fill(-1);
  for (let r = 0; r < n; r++) {
    const s = abs(r);
    for (let d = 0; d < NUM_DECLARATIONS; d++) if (at('declarations', r * NUM_DECLARATIONS + d) === 1) declaration[s] = d;
    exchanged[s] = Math.round(at('exchanged', r) * 5);
    tricksWon[s] = Math.round(at('tricksWon', r) * MAX_TRICKS);
    quotas[s] = Math.round(at('quotas', r) * MAX_TRICKS);
    dealtIn[s] = at('dealtIn', r) === 1 ? 1 : 0;
    playing[s] = dealtIn[s] && playsByDeclaration(declaration[s]!) ? 1 : 0;
    balances[s] = unitsFrom(at('balances', r), chip);
    for (const card of cardsIn('playedBy', r * NUM_CARDS)) {
      playedCards[(Math.round(at('playedTrick', card) * MAX_TRICKS) - 1) * MAX_SEATS + s] = card;
    }
  }
  v.declaration = declaration;
  v.exchanged = exchanged;
  v.tricksWon = tricksWon;
  v.quotas = quotas;
  v.dealtIn = dealtIn;
  v.playing = playing;
  v.numPlaying = playing.reduce((a, b) => a + b, 0);
  v.balances = balances;
  v.playedCards = playedCards;
  v.trickWinners = new Array<number>(MAX_TRICKS).fill(-1);
  // The trick in progress: from its leader, clockwise over the seats in play.
  const trickCards: number[] = [];
  const trickSeats: number[] = [];
  v.leader = v.phase === 'play' ? abs(oneHot('trickLeader', MAX_SEATS)) : -1;
  if (v.phase === 'play' && v.leader >= 0) {
    let s = v.leader;
    for (let k = 0; k < v.numPlaying; k++) {
      const card = playedCards[v.trickNumber * MAX_SEATS + s]!;
      if (card < 0 || at('currentTrick', card) !== 1) break;
      trickCards.push(card);
      trickSeats.push(s);
      s = nextSeatWith(playing, 0, s, n);
    }
  }
  v.trickCards = trickCards;
  v.trickSeats = trickSeats;
  v.trickLength = trickCards.length;
  return v;
}
