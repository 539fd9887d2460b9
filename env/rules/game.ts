// The Kratzen state machine (docs/rules.md §2–§4): the immutable `KratzenGame` (a rule set and its
// sizes) and the mutable `KratzenState` (one session: deals, declarations, tricks, ledger).
// Pure and deterministic: every random draw comes from the state's seeded generator.

import { aleaNext, aleaSeed } from './alea.js';
import { NUM_CARDS, RANK_SEVEN, WELI, cardRank, cardSuit } from './cards.js';
import {
  ACTION_BETTLER,
  ACTION_DISCARD,
  ACTION_DONE,
  ACTION_IN,
  ACTION_OUT,
  ACTION_TRUMP,
  NUM_ACTIONS,
  actionToString,
} from './actions.js';
import { AmountOverflowError, IllegalActionError, ValidationError } from './errors.js';
import { exceedsUnits, settleDidactic4, settleTavern5, type Settlement } from './ledger.js';
import { parseRuleSet, unitsPerChip, type RuleSet } from './ruleset.js';
import { legalPlayBits, trickWinnerIndex } from './trick.js';

export const MAX_SEATS = 6;
/** Room for the largest hand: a didactic4 dealer holding two face-up cards (6). */
export const HAND_CAPACITY = 8;

/**
 * `deal`: the next hand waits for a deck (`dealNextHand`), as a record without a seed stops
 * after its last hand; it has no legal actions but is not terminal. `over`: the session ended.
 */
export type Phase = 'deal' | 'trump' | 'discard' | 'declare' | 'exchange' | 'play' | 'over';
export type HandKind = 'funding-muss' | 'forced-muss' | 'normal' | 'muss' | 'tie-break';

/** Declarations by seat: not (yet) declared, out, in, bettler. */
export const DECL_NONE = 0;
export const DECL_OUT = 1;
export const DECL_IN = 2;
export const DECL_BETTLER = 3;

/** One finished hand, amounts in units (see `KratzenGame.unitsPerChip`). */
export interface HandResult {
  hand: number;
  dealer: number;
  trump: number;
  /** The card whose suit set trump; -1 when a tavern5 dealer named it after a turned Weli. */
  indicator: number;
  kind: HandKind;
  walkover: boolean;
  potBeforePlay: number;
  in: boolean[];
  tricks: number[];
  payouts: number[];
  penalties: number[];
  /** Exchange fees per seat; null when the exchange variant is off. */
  fees: number[] | null;
  potAfter: number;
  balances: number[];
}

export interface SessionStart {
  /** First dealer; default: drawn from the seed. */
  dealer?: number;
  /** Pot in units; default 0. */
  pot?: number;
  /** Balances in units; default zeros. */
  balances?: ArrayLike<number>;
  /** tavern5: the first deal is a Muss; default true, the session's opening Muss [D-10]. */
  muss?: boolean;
}

export interface NewStateOptions {
  seed?: number | string;
  /** Decks by hand index (33 card ids, top first); a missing one is shuffled from the seed. */
  decks?: ReadonlyArray<ArrayLike<number> | null | undefined>;
  /** Stop in phase `deal` after every hand until `dealNextHand()` (one-hand episodes). */
  pauseBetweenHands?: boolean;
  start?: SessionStart;
}

/** The immutable game: a validated rule set and the sizes derived from it. */
export class KratzenGame {
  readonly rules: RuleSet;
  readonly numPlayers: number;
  readonly numActions = NUM_ACTIONS;
  /** Cards each player holds for play: 4 in didactic4, 5 in tavern5. */
  readonly handSize: number;
  readonly numTricks: number;
  readonly unitsPerChip: number;

  constructor(rules: unknown) {
    this.rules = parseRuleSet(rules);
    this.numPlayers = this.rules.players;
    this.handSize = this.rules.profile === 'didactic4' ? 4 : 5;
    this.numTricks = this.handSize;
    this.unitsPerChip = unitsPerChip(this.rules.profile);
  }

  newState(options: NewStateOptions = {}): KratzenState {
    return new KratzenState(this, options);
  }

  toUnits(chips: number): number {
    return Math.round(chips * this.unitsPerChip);
  }

  toChips(units: number): number {
    return units / this.unitsPerChip;
  }
}

export function createGame(rules: unknown = {}): KratzenGame {
  return new KratzenGame(rules);
}

/** Every hand kind, in the order of their indices (the observation's one-hot, stored results). */
export const HAND_KINDS: readonly HandKind[] = ['funding-muss', 'forced-muss', 'normal', 'muss', 'tie-break'];

/** The index of `kind` in HAND_KINDS. A switch on interned strings compiles to pointer compares. */
export function handKindIndex(kind: HandKind): number {
  switch (kind) {
    case 'funding-muss':
      return 0;
    case 'forced-muss':
      return 1;
    case 'normal':
      return 2;
    case 'muss':
      return 3;
    case 'tie-break':
      return 4;
  }
}

// A finished hand in `resultData`: fields, then per-seat blocks of MAX_SEATS (see HandResult).
const R_HAND = 0;
const R_DEALER = 1;
const R_TRUMP = 2;
const R_INDICATOR = 3;
const R_KIND = 4;
const R_WALKOVER = 5;
const R_POT_BEFORE = 6;
const R_POT_AFTER = 7;
const R_HAS_FEES = 8;
const R_SEATS = 9;
const S_IN = 0;
const S_TRICKS = 1;
const S_PAYOUTS = 2;
const S_PENALTIES = 3;
const S_FEES = 4;
const S_BALANCES = 5;
const RESULT_STRIDE = R_SEATS + 6 * MAX_SEATS;

// Every fixed-size array of a state lives in one ArrayBuffer, so a state is a few contiguous cache
// lines rather than a score of scattered allocations; this matters when a vector env steps
// thousands of states in turn. Field initializers run in order, so `beginArena()` comes first.
const ARENA_BYTES = 576;
let arena: ArrayBuffer = new ArrayBuffer(0);
let arenaOffset = 0;
function beginArena(): ArrayBuffer {
  arena = new ArrayBuffer(ARENA_BYTES);
  arenaOffset = 0;
  return arena;
}
function carve<T>(make: (buffer: ArrayBuffer, offset: number, length: number) => T, bytesPer: number, length: number): T {
  arenaOffset = Math.ceil(arenaOffset / bytesPer) * bytesPer;
  const view = make(arena, arenaOffset, length);
  arenaOffset += bytesPer * length;
  if (arenaOffset > ARENA_BYTES) throw new Error('state arena too small');
  return view;
}
const i8 = (length: number) => carve((b, o, l) => new Int8Array(b, o, l), 1, length);
const u8 = (length: number) => carve((b, o, l) => new Uint8Array(b, o, l), 1, length);
const i16 = (length: number) => carve((b, o, l) => new Int16Array(b, o, l), 2, length);
const f64 = (length: number) => carve((b, o, l) => new Float64Array(b, o, l), 8, length);

export class KratzenState {
  private readonly arena = beginArena();
  readonly game: KratzenGame;
  readonly rules: RuleSet;
  readonly numPlayers: number;
  /** The seed of the session (set again by `restart`). */
  seed: number | string | undefined;
  /** Alea (as seedrandom's): cheap to seed, a session is short; its state lives in the arena. */
  private readonly rngState = f64(4);
  private seeded: boolean;

  // ---- session ----
  /** Index of the hand being played (or of the next one once the session is over). */
  handIndex = -1;
  /** Regular hands finished (a tavern5 tie-break deal does not count). */
  handsPlayed = 0;
  complete = false;
  /** The session stopped with an `amount overflow` (never a rounded amount). */
  overflowed = false;
  isTieBreak = false;
  /** Bit s set for each seat tied for the lead when a tie-break deal began: only they can win [D-11]. */
  private tiedSeats = 0;
  pot = 0;
  private readonly balanceSlots = f64(MAX_SEATS);
  /** Balances in units, one per seat (a view of the state's arena). */
  readonly balances: Float64Array;
  startInfo: { dealer: number; pot: number; balances: number[]; muss: boolean };
  private nextDealIsMuss = false;
  // Finished hands are stored flat (RESULT_STRIDE doubles each) and turned into HandResult
  // objects when `results` is read: objects kept for a whole session would each survive a
  // young-generation GC in a vector env that never reads them.
  private resultData = new Float64Array(4 * RESULT_STRIDE);
  /** Hands finished this session (a tavern5 tie-break deal counts): `results.length`, cheaply. */
  numResults = 0;
  private resultCache: HandResult[] = [];
  private deckSupply: ReadonlyArray<ArrayLike<number> | null | undefined>;
  private readonly pauseBetweenHands: boolean;

  // ---- the hand ----
  phase: Phase = 'over';
  dealer = 0;
  currentSeat = -1;
  kind: HandKind = 'normal';
  trump = -1;
  /** The card whose suit set trump, -1 when none (yet). */
  indicator = -1;
  /** Face-up cards everybody saw: didactic4's indicator(s), tavern5's turned card. */
  readonly faceUp = i8(2);
  numFaceUp = 0;
  readonly deck = i8(NUM_CARDS);
  readonly dealtIn = u8(MAX_SEATS);
  readonly playing = u8(MAX_SEATS);
  readonly declaration = u8(MAX_SEATS);
  readonly quotas = u8(MAX_SEATS);
  readonly tricksWon = u8(MAX_SEATS);
  readonly hands = i8(MAX_SEATS * HAND_CAPACITY);
  readonly handLength = u8(MAX_SEATS);
  /** Which seat discarded each card this hand (-1: none); only that seat may ever see it. */
  readonly discardedBy = i8(NUM_CARDS);
  /** The cards discarded this hand, in order (`discardedBy` says whose): a short list to scan. */
  readonly discards = i8(NUM_CARDS);
  numDiscards = 0;
  readonly exchanged = u8(MAX_SEATS);
  readonly fees = f64(MAX_SEATS);
  /** Cards discarded by the exchanging player and not yet replaced. */
  pendingExchange = 0;
  talonPosition = 0;
  potBeforePlay = 0;
  // ---- tricks ----
  trickNumber = 0;
  leader = -1;
  readonly trickCards = i8(MAX_SEATS);
  readonly trickSeats = i8(MAX_SEATS);
  trickLength = 0;
  numPlaying = 0;
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  readonly playedCards = i8(5 * MAX_SEATS);
  readonly trickWinners = i8(5);

  // ---- record ----
  // Typed arrays grown by doubling: a session's record costs no allocation once they are big
  // enough, and a restarted state keeps them.
  /** The deck of each hand started, NUM_CARDS ids per hand. */
  private decksUsed = new Int8Array(4 * NUM_CARDS);
  private numDecks = 0;
  /** Every action applied: seat * 256 + action, per hand from `handLogStart[h]`. */
  private log = new Int16Array(128);
  private logLength = 0;
  private handLogStart = new Int32Array(4);

  // ---- legal actions, computed once per state ----
  private readonly legal = i16(NUM_CARDS * 2 + 8);
  private numLegal = 0;
  private legalFresh = false;

  constructor(game: KratzenGame, options: NewStateOptions, skipInit = false) {
    this.game = game;
    this.rules = game.rules;
    this.numPlayers = game.numPlayers;
    this.seed = options.seed;
    this.deckSupply = options.decks ?? [];
    this.pauseBetweenHands = options.pauseBetweenHands ?? false;
    this.balances = this.balanceSlots.subarray(0, this.numPlayers);
    this.seeded = options.seed !== undefined;
    if (this.seeded) aleaSeed(this.rngState, String(options.seed));
    if (skipInit) {
      this.startInfo = { dealer: 0, pot: 0, balances: [], muss: false };
      return;
    }
    this.startInfo = this.beginSession(options.start ?? {});
  }

  /**
   * Starts a new session from `seed` in this state, reusing its memory: afterwards the state is
   * what `game.newState({ seed, pauseBetweenHands })` would return (same pause setting, no
   * supplied decks, default start). Vector envs restart thousands of tables a second; fresh
   * states would each survive a young-generation GC and scatter across the heap.
   */
  restart(seed: number | string): void {
    this.seed = seed;
    this.seeded = true;
    aleaSeed(this.rngState, String(seed));
    this.deckSupply = [];
    this.handIndex = -1;
    this.handsPlayed = 0;
    this.complete = false;
    this.overflowed = false;
    this.isTieBreak = false;
    this.tiedSeats = 0;
    this.pot = 0;
    this.balances.fill(0);
    this.numResults = 0;
    this.resultCache = [];
    this.numDecks = 0;
    this.logLength = 0;
    this.phase = 'over';
    this.currentSeat = -1;
    this.legalFresh = false;
    this.startInfo = this.beginSession({});
  }

  private beginSession(start: SessionStart): KratzenState['startInfo'] {
    const n = this.numPlayers;
    let dealer = start.dealer;
    if (dealer === undefined) dealer = Math.floor(this.random('start.dealer') * n);
    if (!Number.isInteger(dealer) || dealer < 0 || dealer >= n) {
      throw new ValidationError('malformed record', 'start.dealer', `dealer must be a seat 0..${n - 1}`);
    }
    this.pot = start.pot ?? 0;
    if (start.balances) {
      if (start.balances.length !== n) {
        throw new ValidationError('malformed record', 'start.balances', `expected ${n} balances`);
      }
      this.balances.set(Array.from(start.balances));
    }
    if (start.muss && this.rules.profile !== 'tavern5') {
      throw new ValidationError('malformed record', 'start.muss', 'start.muss is a tavern5 field');
    }
    // A tavern5 session opens with a Muss deal [D-10]; a record may start Normal with muss: false.
    this.nextDealIsMuss = start.muss ?? this.rules.profile === 'tavern5';
    const info = { dealer, pot: this.pot, balances: Array.from(this.balances), muss: this.nextDealIsMuss };
    this.dealer = dealer;
    this.startHand();
    return info;
  }

  private requireSeed(field: string): void {
    if (!this.seeded) throw new ValidationError('malformed record', 'seed', `a seed is needed to draw ${field}`);
  }

  private random(field: string): number {
    this.requireSeed(field);
    return aleaNext(this.rngState);
  }

  // ======================= queries =======================

  /** The session's finished hands; `restart` begins a new array (an old one stays valid). */
  get results(): HandResult[] {
    const cache = this.resultCache;
    for (let h = cache.length; h < this.numResults; h++) cache.push(this.resultAt(h));
    return cache;
  }

  private resultAt(h: number): HandResult {
    const n = this.numPlayers;
    const data = this.resultData;
    const base = h * RESULT_STRIDE;
    const seats = (field: number) => Array.from({ length: n }, (_, s) => data[base + R_SEATS + field * MAX_SEATS + s]!);
    return {
      hand: data[base + R_HAND]!,
      dealer: data[base + R_DEALER]!,
      trump: data[base + R_TRUMP]!,
      indicator: data[base + R_INDICATOR]!,
      kind: HAND_KINDS[data[base + R_KIND]!]!,
      walkover: data[base + R_WALKOVER] === 1,
      potBeforePlay: data[base + R_POT_BEFORE]!,
      in: seats(S_IN).map((v) => v === 1),
      tricks: seats(S_TRICKS),
      payouts: seats(S_PAYOUTS),
      penalties: seats(S_PENALTIES),
      fees: data[base + R_HAS_FEES] === 1 ? seats(S_FEES) : null,
      potAfter: data[base + R_POT_AFTER]!,
      balances: seats(S_BALANCES),
    };
  }

  get isTerminal(): boolean {
    return this.phase === 'over';
  }

  /** Legal actions as action ids, ascending. */
  legalActions(): number[] {
    this.refreshLegal();
    return Array.from(this.legal.subarray(0, this.numLegal)).sort((a, b) => a - b);
  }

  /** Writes 1 for each legal action into `out` (length NUM_ACTIONS), 0 elsewhere. */
  legalActionMask(out: Uint8Array, offset = 0): Uint8Array {
    this.refreshLegal();
    out.fill(0, offset, offset + NUM_ACTIONS);
    for (let i = 0; i < this.numLegal; i++) out[offset + this.legal[i]!] = 1;
    return out;
  }

  numLegalActions(): number {
    this.refreshLegal();
    return this.numLegal;
  }

  /** The i-th legal action in the engine's internal order (for fast uniform sampling). */
  legalActionAt(i: number): number {
    this.refreshLegal();
    return this.legal[i]!;
  }

  isLegal(action: number): boolean {
    this.refreshLegal();
    for (let i = 0; i < this.numLegal; i++) if (this.legal[i] === action) return true;
    return false;
  }

  handOf(seat: number): number[] {
    return Array.from(this.hands.subarray(seat * HAND_CAPACITY, seat * HAND_CAPACITY + this.handLength[seat]!));
  }

  /** Stack = startingChips + balance, in units (tavern5); the balance alone without startingChips. */
  stack(seat: number): number {
    return this.game.toUnits(this.rules.startingChips ?? 0) + this.balances[seat]!;
  }

  /**
   * Seats with the highest balance once the session is complete, empty before; after a tavern5
   * tie-break deal only the tied players are candidates [D-11].
   */
  winners(): number[] {
    if (!this.complete) return [];
    if (this.tiedSeats === 0) return leaders(this.balances);
    const tied: number[] = [];
    for (let s = 0; s < this.numPlayers; s++) if (this.tiedSeats & (1 << s)) tied.push(s);
    const best = Math.max(...tied.map((s) => this.balances[s]!));
    return tied.filter((s) => this.balances[s] === best);
  }

  // ======================= acting =======================

  /** Applies an action of the current seat; throws IllegalActionError and changes nothing if illegal. */
  apply(action: number): void {
    const seat = this.currentSeat;
    if (!this.isLegal(action)) throw new IllegalActionError(action, seat, this.illegalReason(action));
    if (this.logLength === this.log.length) this.log = grown(this.log);
    this.log[this.logLength++] = seat * 256 + action;
    this.legalFresh = false;
    switch (this.phase) {
      case 'trump':
        return this.applyTrump(action - ACTION_TRUMP);
      case 'discard':
        return this.applyDealerDiscard(action - ACTION_DISCARD);
      case 'declare':
        return this.applyDeclaration(action);
      case 'exchange':
        return this.applyExchange(action);
      case 'play':
        return this.applyPlay(action);
      case 'deal':
      case 'over':
        return;
    }
  }

  /** Applies `action` as `seat`, checking that it is that seat's turn. */
  applyAs(seat: number, action: number): void {
    if (seat !== this.currentSeat) {
      throw new IllegalActionError(
        action,
        seat,
        this.phase === 'over' ? 'the session is over' : `it is seat ${this.currentSeat}'s turn, not seat ${seat}'s`,
      );
    }
    this.apply(action);
  }

  private illegalReason(action: number): string {
    if (!Number.isInteger(action) || action < 0 || action >= NUM_ACTIONS) return `no such action id ${action}`;
    const text = actionToString(action);
    switch (this.phase) {
      case 'over':
        return this.overflowed ? 'the session stopped: amount overflow' : 'the session is over';
      case 'deal':
        return 'the next hand has not been dealt: no deck is known for it';
      case 'trump':
        return `the dealer must name the trump suit after a turned Weli, not ${text}`;
      case 'discard':
        return action >= ACTION_DISCARD && action < ACTION_IN
          ? `${text}: the dealer does not hold that card`
          : `the dealer must discard down to ${this.game.handSize} cards, not ${text}`;
      case 'declare':
        if (action === ACTION_BETTLER) return 'bettler is not allowed (variant off)';
        return `seat ${this.currentSeat} must declare in or out, not ${text}`;
      case 'exchange':
        if (action >= ACTION_DISCARD && action < ACTION_IN) {
          if (!this.holds(this.currentSeat, action - ACTION_DISCARD)) return `${text}: the player does not hold that card`;
          return `${text}: no more cards may be exchanged (limit ${this.rules.exchange?.maxCards} or talon exhausted)`;
        }
        return `the exchange allows only discard <card> or done, not ${text}`;
      case 'play': {
        if (action >= ACTION_DISCARD) return `cards must be played now, not ${text}`;
        if (!this.holds(this.currentSeat, action)) return `${text}: the player does not hold that card`;
        return `${text} breaks the trick rules (follow suit${
          this.rules.profile === 'didactic4' ? ', head the trick' : ''
        }, trump when void, overtrump when possible)`;
      }
    }
  }

  private holds(seat: number, card: number): boolean {
    const base = seat * HAND_CAPACITY;
    for (let i = 0; i < this.handLength[seat]!; i++) if (this.hands[base + i] === card) return true;
    return false;
  }

  private refreshLegal(): void {
    if (this.legalFresh) return;
    this.legalFresh = true;
    const legal = this.legal;
    let count = 0;
    const seat = this.currentSeat;
    const base = seat * HAND_CAPACITY;
    switch (this.phase) {
      case 'trump':
        for (let s = 0; s < 4; s++) legal[count++] = ACTION_TRUMP + s;
        break;
      case 'discard':
        for (let i = 0; i < this.handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + this.hands[base + i]!;
        break;
      case 'declare':
        legal[count++] = ACTION_IN;
        legal[count++] = ACTION_OUT;
        if (this.rules.profile === 'tavern5' && this.rules.bettler) legal[count++] = ACTION_BETTLER;
        break;
      case 'exchange': {
        // Discards are replaced only at `done`, so the talon must still hold one more card.
        const talonLeft = NUM_CARDS - this.talonPosition;
        if (this.pendingExchange < this.rules.exchange!.maxCards && this.pendingExchange < talonLeft) {
          for (let i = 0; i < this.handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + this.hands[base + i]!;
        }
        legal[count++] = ACTION_DONE;
        break;
      }
      case 'play': {
        const bits = legalPlayBits(
          this.hands,
          base,
          this.handLength[seat]!,
          this.trickCards,
          this.trickLength,
          this.trump,
          this.rules.weliRank === 'highest',
          this.rules.profile === 'didactic4',
        );
        for (let i = 0; i < this.handLength[seat]!; i++) if (bits & (1 << i)) legal[count++] = this.hands[base + i]!;
        break;
      }
      case 'deal':
      case 'over':
        break;
    }
    this.numLegal = count;
  }

  // ======================= dealing =======================

  private nextSeatIn(set: Uint8Array, from: number): number {
    let s = from;
    do s = (s + 1) % this.numPlayers;
    while (!set[s]);
    return s;
  }

  private takeDeck(supplied: ArrayLike<number> | null | undefined): void {
    if (supplied) {
      this.deck.set(supplied);
    } else {
      for (let i = 0; i < NUM_CARDS; i++) this.deck[i] = i;
      if (!this.seeded) this.requireSeed(`the deck of hand ${this.handIndex}`);
      for (let i = NUM_CARDS - 1; i > 0; i--) {
        const j = Math.floor(aleaNext(this.rngState) * (i + 1));
        const t = this.deck[i]!;
        this.deck[i] = this.deck[j]!;
        this.deck[j] = t;
      }
    }
    if ((this.numDecks + 1) * NUM_CARDS > this.decksUsed.length) this.decksUsed = grown(this.decksUsed);
    if (this.numDecks === this.handLogStart.length) this.handLogStart = grown(this.handLogStart);
    this.decksUsed.set(this.deck, this.numDecks * NUM_CARDS);
    this.handLogStart[this.numDecks++] = this.logLength;
  }

  /** Gives `count` cards to each dealt-in seat clockwise from the dealer's left, in packets. */
  private dealPackets(position: number, count: number): number {
    let seat = this.dealer;
    for (let k = 0; k < this.numDealtIn(); k++) {
      seat = this.nextSeatIn(this.dealtIn, seat);
      for (let c = 0; c < count; c++) this.addToHand(seat, this.deck[position++]!);
    }
    return position;
  }

  private numDealtIn(): number {
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += this.dealtIn[s]!;
    return count;
  }

  private addToHand(seat: number, card: number): void {
    this.hands[seat * HAND_CAPACITY + this.handLength[seat]!] = card;
    this.handLength[seat]!++;
  }

  private removeFromHand(seat: number, card: number): void {
    const base = seat * HAND_CAPACITY;
    const length = this.handLength[seat]!;
    let i = 0;
    while (this.hands[base + i] !== card) i++;
    for (; i < length - 1; i++) this.hands[base + i] = this.hands[base + i + 1]!;
    this.handLength[seat] = length - 1;
  }

  private resetHand(): void {
    this.handLength.fill(0);
    this.playing.fill(0);
    this.declaration.fill(DECL_NONE);
    this.quotas.fill(0);
    this.tricksWon.fill(0);
    this.discardedBy.fill(-1);
    this.numDiscards = 0;
    this.exchanged.fill(0);
    this.fees.fill(0);
    this.playedCards.fill(-1);
    this.trickWinners.fill(-1);
    this.trickLength = 0;
    this.trickNumber = 0;
    this.pendingExchange = 0;
    this.numFaceUp = 0;
    this.indicator = -1;
    this.trump = -1;
    this.potBeforePlay = 0;
  }

  private startHand(): void {
    this.handIndex++;
    const supplied = this.deckSupply[this.handIndex];
    // Waiting keeps the finished hand visible (its tricks, its tricks won) until the next deal.
    if ((this.pauseBetweenHands && this.handIndex > 0) || (!supplied && !this.seeded)) {
      this.phase = 'deal';
      this.currentSeat = -1;
      this.legalFresh = false;
      return;
    }
    this.dealHand(supplied);
  }

  /**
   * Deals the waiting hand (phase `deal`): from `deck` (33 card ids, top first) when given, else
   * from the record's decks or the seeded generator. In phase `deal` the `dealer` field already
   * names the dealer of the waiting hand.
   */
  dealNextHand(deck?: ArrayLike<number>): void {
    if (this.phase !== 'deal') throw new Error(`no hand is waiting for a deck (phase ${this.phase})`);
    if (deck) {
      const seen = new Set(Array.from(deck));
      if (deck.length !== NUM_CARDS || seen.size !== NUM_CARDS || [...seen].some((c) => !(c >= 0 && c < NUM_CARDS))) {
        throw new ValidationError('invalid deck', 'deck', `a deck lists each of the ${NUM_CARDS} card ids once`);
      }
    }
    const source = deck ?? this.deckSupply[this.handIndex];
    if (!source && !this.seeded) throw new ValidationError('invalid deck', 'deck', 'no deck given and no seed to draw one');
    this.legalFresh = false;
    this.dealHand(source);
  }

  private dealHand(supplied: ArrayLike<number> | null | undefined): void {
    this.resetHand();
    this.takeDeck(supplied);
    if (this.rules.profile === 'didactic4') this.startDidactic4Hand();
    else this.startTavern5Hand();
  }

  private startDidactic4Hand(): void {
    const n = this.numPlayers;
    const dealer = this.dealer;
    this.dealtIn.fill(0);
    for (let s = 0; s < n; s++) this.dealtIn[s] = 1;
    // Contributions follow the pot at the start of the hand, whatever the indicator turns out to be.
    const funding = this.pot === 0;
    const chip = this.game.unitsPerChip;
    if (funding) {
      for (let s = 0; s < n; s++) this.pay(s, s === dealer ? 2 * chip : chip);
    } else {
      this.pay(dealer, chip);
    }
    let position = this.dealPackets(0, 2);
    this.faceUp[this.numFaceUp++] = this.deck[position++]!;
    if (this.faceUp[0] === WELI) this.faceUp[this.numFaceUp++] = this.deck[position++]!; // [D-1]
    position = this.dealPackets(position, 2);
    this.indicator = this.faceUp[this.numFaceUp - 1]!;
    this.trump = cardSuit(this.indicator);
    const sevenIndicator = cardRank(this.indicator) === RANK_SEVEN;
    this.kind = funding ? 'funding-muss' : sevenIndicator ? 'forced-muss' : 'normal';
    for (let s = 0; s < n; s++) this.quotas[s] = s === dealer && !sevenIndicator ? 2 : 1; // [D-2]
    for (let i = 0; i < this.numFaceUp; i++) this.addToHand(dealer, this.faceUp[i]!);
    this.phase = 'discard';
    this.currentSeat = dealer;
  }

  private startTavern5Hand(): void {
    const n = this.numPlayers;
    const dealer = this.dealer;
    if (!this.isTieBreak) {
      this.dealtIn.fill(0);
      for (let s = 0; s < n; s++) this.dealtIn[s] = 1;
    }
    const ante = this.game.toUnits(this.rules.ante);
    for (let s = 0; s < n; s++) if (this.dealtIn[s]) this.pay(s, ante);
    let position = this.dealPackets(0, 3);
    position = this.dealPackets(position, 2);
    const turned = this.deck[position++]!;
    this.faceUp[this.numFaceUp++] = turned;
    this.talonPosition = position;
    const mussDeal = this.nextDealIsMuss || (turned !== WELI && cardRank(turned) === RANK_SEVEN);
    this.kind = this.isTieBreak ? 'tie-break' : mussDeal ? 'muss' : 'normal';
    for (let s = 0; s < n; s++) if (this.dealtIn[s]) this.quotas[s] = s === dealer ? this.rules.dealerMinTricks : 1;
    if (turned === WELI) {
      this.phase = 'trump';
      this.currentSeat = dealer;
      return;
    }
    this.indicator = turned;
    this.trump = cardSuit(turned);
    this.afterTrumpKnown();
  }

  private afterTrumpKnown(): void {
    if (this.kind === 'normal') this.beginDeclarations();
    else this.beginPlay(true);
  }

  private pay(seat: number, units: number): void {
    this.balances[seat]! -= units;
    this.pot += units;
    this.guardAmount(this.balances[seat]!);
    this.guardAmount(this.pot);
  }

  /**
   * Amounts are exact integers up to 2^53 - 1 units; past that the session stops rather than
   * round (docs/rules.md §3, Ledger). The state becomes terminal with `overflowed` set.
   */
  private guardAmount(units: number): void {
    if (!exceedsUnits(units)) return;
    this.overflowed = true;
    this.phase = 'over';
    this.currentSeat = -1;
    this.legalFresh = false;
    throw new AmountOverflowError(this.handIndex);
  }

  // ======================= phases =======================

  private applyTrump(suit: number): void {
    this.trump = suit;
    this.afterTrumpKnown();
  }

  private applyDealerDiscard(card: number): void {
    const dealer = this.dealer;
    this.removeFromHand(dealer, card);
    this.discardedBy[card] = dealer;
    this.discards[this.numDiscards++] = card;
    if (this.handLength[dealer]! > this.game.handSize) return;
    if (this.kind === 'normal') this.beginDeclarations();
    else this.beginPlay(true);
  }

  private beginDeclarations(): void {
    this.phase = 'declare';
    this.currentSeat = this.nextSeatIn(this.dealtIn, this.dealer);
  }

  private applyDeclaration(action: number): void {
    const seat = this.currentSeat;
    this.declaration[seat] = action === ACTION_IN ? DECL_IN : action === ACTION_OUT ? DECL_OUT : DECL_BETTLER;
    const next = this.nextSeatIn(this.dealtIn, seat);
    if (next !== this.dealer) {
      this.currentSeat = next;
      return;
    }
    this.declaration[this.dealer] = DECL_IN;
    let othersIn = 0;
    for (let s = 0; s < this.numPlayers; s++) {
      this.playing[s] = this.declaration[s] === DECL_IN || this.declaration[s] === DECL_BETTLER ? 1 : 0;
      if (s !== this.dealer) othersIn += this.playing[s]!;
    }
    if (othersIn === 0) return this.finishWalkover();
    if (this.rules.profile === 'tavern5' && this.rules.exchange) return this.beginExchange();
    this.beginPlay(false);
  }

  private beginExchange(): void {
    this.phase = 'exchange';
    this.pendingExchange = 0;
    this.currentSeat = this.nextSeatIn(this.playing, this.dealer);
  }

  private applyExchange(action: number): void {
    const seat = this.currentSeat;
    if (action !== ACTION_DONE) {
      const card = action - ACTION_DISCARD;
      this.removeFromHand(seat, card);
      this.discardedBy[card] = seat;
      this.discards[this.numDiscards++] = card;
      this.pendingExchange++;
      return;
    }
    const count = this.pendingExchange;
    for (let i = 0; i < count; i++) this.addToHand(seat, this.deck[this.talonPosition++]!);
    const fee = count * this.game.toUnits(this.rules.exchange!.feePerCard);
    this.pay(seat, fee);
    this.fees[seat]! += fee;
    this.exchanged[seat] = count;
    this.pendingExchange = 0;
    if (seat === this.dealer) this.beginPlay(false);
    else this.currentSeat = this.nextSeatIn(this.playing, seat);
  }

  private beginPlay(everybody: boolean): void {
    if (everybody) {
      for (let s = 0; s < this.numPlayers; s++) {
        this.playing[s] = this.dealtIn[s]!;
        if (this.dealtIn[s]) this.declaration[s] = DECL_IN;
      }
    }
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += this.playing[s]!;
    this.numPlaying = count;
    this.potBeforePlay = this.pot;
    this.phase = 'play';
    // didactic4: the dealer leads; tavern5: forehand, the first player in left of the dealer.
    this.leader = this.rules.profile === 'didactic4' ? this.dealer : this.nextSeatIn(this.playing, this.dealer);
    this.currentSeat = this.leader;
    this.trickLength = 0;
    this.trickNumber = 0;
  }

  private applyPlay(card: number): void {
    const seat = this.currentSeat;
    this.removeFromHand(seat, card);
    this.trickCards[this.trickLength] = card;
    this.trickSeats[this.trickLength] = seat;
    this.trickLength++;
    this.playedCards[this.trickNumber * MAX_SEATS + seat] = card;
    if (this.trickLength < this.numPlaying) {
      this.currentSeat = this.nextSeatIn(this.playing, seat);
      return;
    }
    const winner = this.trickSeats[
      trickWinnerIndex(this.trickCards, this.trickLength, this.trump, this.rules.weliRank === 'highest')
    ]!;
    this.tricksWon[winner]!++;
    this.trickWinners[this.trickNumber] = winner;
    this.trickNumber++;
    this.trickLength = 0;
    this.leader = winner;
    this.currentSeat = winner;
    if (this.trickNumber === this.game.numTricks) this.finishPlayedHand();
  }

  // ======================= settlement and session =======================

  private finishWalkover(): void {
    const n = this.numPlayers;
    const payouts = new Array<number>(n).fill(0);
    payouts[this.dealer] = this.pot;
    this.potBeforePlay = this.pot;
    this.playing.fill(0);
    this.playing[this.dealer] = 1;
    this.commitHand(
      { payouts, penalties: new Array<number>(n).fill(0), potAfter: 0, anyMissedQuota: false },
      true,
    );
  }

  private finishPlayedHand(): void {
    const input = {
      numPlayers: this.numPlayers,
      dealer: this.dealer,
      potBeforePlay: this.potBeforePlay,
      playing: this.playing,
      tricks: this.tricksWon,
      quotas: this.quotas,
    };
    let settlement: Settlement;
    if (this.rules.profile === 'didactic4') {
      settlement = settleDidactic4(input, this.kind !== 'normal');
    } else {
      const bettler = new Uint8Array(this.numPlayers);
      for (let s = 0; s < this.numPlayers; s++) bettler[s] = this.declaration[s] === DECL_BETTLER ? 1 : 0;
      settlement = settleTavern5({
        ...input,
        isMuss: this.kind === 'muss',
        anteUnits: this.game.toUnits(this.rules.ante),
        failPenalty: this.rules.failPenalty,
        bettler,
        bettlerBonusUnits: this.game.toUnits(this.rules.bettler?.bonus ?? 0),
      });
    }
    this.commitHand(settlement, false);
  }

  private commitHand(settlement: Settlement, walkover: boolean): void {
    const n = this.numPlayers;
    this.guardAmount(settlement.potAfter);
    for (let s = 0; s < n; s++) {
      this.guardAmount(this.balances[s]! + settlement.payouts[s]! - settlement.penalties[s]!);
    }
    for (let s = 0; s < n; s++) this.balances[s]! += settlement.payouts[s]! - settlement.penalties[s]!;
    this.pot = settlement.potAfter;
    const tavern = this.rules.profile === 'tavern5';
    if ((this.numResults + 1) * RESULT_STRIDE > this.resultData.length) this.resultData = grown(this.resultData);
    const data = this.resultData;
    const base = this.numResults++ * RESULT_STRIDE;
    data[base + R_HAND] = this.handIndex;
    data[base + R_DEALER] = this.dealer;
    data[base + R_TRUMP] = this.trump;
    data[base + R_INDICATOR] = this.indicator;
    data[base + R_KIND] = handKindIndex(this.kind);
    data[base + R_WALKOVER] = walkover ? 1 : 0;
    data[base + R_POT_BEFORE] = this.potBeforePlay;
    data[base + R_POT_AFTER] = this.pot;
    data[base + R_HAS_FEES] = tavern && this.rules.exchange ? 1 : 0;
    for (let s = 0; s < n; s++) {
      const at = base + R_SEATS + s;
      data[at + S_IN * MAX_SEATS] = this.playing[s] === 1 ? 1 : 0;
      data[at + S_TRICKS * MAX_SEATS] = this.tricksWon[s]!;
      data[at + S_PAYOUTS * MAX_SEATS] = settlement.payouts[s]!;
      data[at + S_PENALTIES * MAX_SEATS] = settlement.penalties[s]!;
      data[at + S_FEES * MAX_SEATS] = this.fees[s]!;
      data[at + S_BALANCES * MAX_SEATS] = this.balances[s]!;
    }
    if (tavern) this.nextDealIsMuss = settlement.anyMissedQuota;
    this.advanceSession();
  }

  private advanceSession(): void {
    const wasTieBreak = this.isTieBreak;
    if (!wasTieBreak) this.handsPlayed++;
    const nextDealer = (this.dealer + 1) % this.numPlayers;
    if (wasTieBreak || this.regularSessionOver()) {
      const tied = leaders(this.balances);
      if (!wasTieBreak && this.rules.profile === 'tavern5' && tied.length > 1) {
        // One tie-break deal: the tied players and the next dealer are dealt in.
        this.isTieBreak = true;
        this.dealtIn.fill(0);
        for (const s of tied) {
          this.dealtIn[s] = 1;
          this.tiedSeats |= 1 << s;
        }
        this.dealtIn[nextDealer] = 1;
        this.dealer = nextDealer;
        this.startHand();
        return;
      }
      this.isTieBreak = false;
      this.complete = true;
      this.phase = 'over';
      this.currentSeat = -1;
      this.handIndex++;
      return;
    }
    this.dealer = nextDealer;
    this.startHand();
  }

  private regularSessionOver(): boolean {
    if (this.handsPlayed >= this.rules.hands) return true;
    if (this.rules.profile !== 'tavern5') return false;
    const { startingChips, targetChips } = this.rules;
    for (let s = 0; s < this.numPlayers; s++) {
      const stack = this.stack(s);
      if (startingChips !== null && stack <= 0) return true;
      if (targetChips !== null && stack >= this.game.toUnits(targetChips)) return true;
    }
    return false;
  }

  // ======================= copies and records =======================

  clone(): KratzenState {
    const copy = new KratzenState(this.game, { seed: this.seed, decks: this.deckSupply, pauseBetweenHands: this.pauseBetweenHands }, true);
    for (const key of Object.keys(this) as (keyof this)[]) {
      const value = this[key];
      if (key === 'game' || key === 'rules' || key === 'deckSupply' || key === 'arena') continue;
      if (ArrayBuffer.isView(value)) (copy as any)[key] = (value as unknown as Int8Array).slice();
      else if (Array.isArray(value)) (copy as any)[key] = value.slice();
      else (copy as any)[key] = value;
    }
    (copy as any).startInfo = this.startInfo;
    return copy;
  }

  /** Decks and actions of every hand started so far: the raw material of a record. */
  handLogs(): { deck: number[]; actions: { seat: number; action: number }[] }[] {
    return Array.from({ length: this.numDecks }, (_, h) => {
      const deck = this.decksUsed.subarray(h * NUM_CARDS, (h + 1) * NUM_CARDS);
      const end = h + 1 < this.numDecks ? this.handLogStart[h + 1]! : this.logLength;
      const actions = Array.from(this.log.subarray(this.handLogStart[h], end), (packed) => ({ seat: packed >> 8, action: packed & 255 }));
      return { deck: Array.from(deck), actions };
    });
  }
}

/** A copy of `array` with twice the room. */
function grown<T extends Int8Array | Int16Array | Int32Array | Float64Array>(array: T): T {
  const bigger = new (array.constructor as new (length: number) => T)(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** Seats with the highest value (all of them when tied). */
function leaders(values: ArrayLike<number>): number[] {
  let best = -Infinity;
  for (let s = 0; s < values.length; s++) best = Math.max(best, values[s]!);
  const out: number[] = [];
  for (let s = 0; s < values.length; s++) if (values[s] === best) out.push(s);
  return out;
}
