// The structured view of an observation (JSON: card tokens, absolute seats, amounts in chips)
// and the decoder from an observation vector back to what its seat knows. Both derive from the
// seat view of the rules core (env/rules/seat-view.ts), as the encoder in observation.ts does;
// the layout they read is defined there.

import {
  DECLARATION_NAMES,
  DECL_NONE,
  EXACT_FIFTHS_BELOW_CHIPS,
  HAND_CAPACITY,
  HAND_KINDS,
  MAX_SEATS,
  MAX_TRICKS,
  NUM_CARDS,
  PHASES,
  PROFILES,
  SUIT_LETTERS,
  SeatView,
  WELI,
  cardToken,
  createGame,
  nextSeatWith,
  parseCard,
  parseRuleSet,
  playsByDeclaration,
  ruleSetToJson,
  seatView,
  type HandKind,
  type KratzenGame,
  type Phase,
  type Profile,
  type StateReader,
} from './rules/index.js';
import { OBS_LAYOUT, OBS_SIZE, OBS_VERSION, SLICE_OFFSETS as O, checkFloatRows, symexp, symlog, type SliceName } from './observation.js';

const NUM_DECLARATIONS = DECLARATION_NAMES.length;

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
 * The seat an observation row was encoded for (its one-hot `seat` slice). Throws a RangeError
 * for a row no encoder writes in the slices every observation sets: the strict one-hot slices
 * (seat, number of players, profile, phase, hand kind) and a seat at the table. The check every
 * consumer of a client's rows makes, also those that read nothing else (the random policy).
 */
export function observedSeat(vector: Float32Array, offset = 0): number {
  checkFloatRows(vector, offset, OBS_SIZE, 'an observation');
  for (const [name, size] of STRICT_ONE_HOT) {
    let ones = 0;
    for (let i = 0; i < size; i++) {
      const value = vector[offset + O[name] + i]!;
      if (value === 1) ones++;
      else if (value !== 0) ones = 2;
    }
    if (ones !== 1) throw new RangeError(`slice ${name} is not one-hot (one 1, the rest 0)`);
  }
  const seat = vector.subarray(offset + O.seat, offset + O.seat + MAX_SEATS).indexOf(1);
  const n = vector.subarray(offset + O.numPlayers, offset + O.numPlayers + 4).indexOf(1) + 3;
  if (seat >= n) throw new RangeError(`seat ${seat} at a table of ${n}`);
  return seat;
}

/**
 * Turns an observation vector back into the SeatView it was encoded from (what that seat knows):
 * the input of the hidden-card sampler. Amounts come back exact where float32 tells them apart;
 * sets come back in card order (the face-up Weli first: it was turned first).
 */
export function decodeSeatView(vector: Float32Array, offset = 0, into = new SeatView()): SeatView {
  // What no encoder writes is named before anything is read from it: a vector one float short
  // was read past its end, null failed inside, and all-ones decoded to an 8-card hand.
  observedSeat(vector, offset);
  const at = (name: SliceName, i = 0) => vector[offset + O[name] + i]!;
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
  if (hand.length > HAND_CAPACITY) throw new RangeError(`a hand of ${hand.length} cards`);
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
