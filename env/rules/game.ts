// The Kratzen state machine (docs/rules.md §2–§4): the immutable `KratzenGame` (a rule set and
// its sizes) and `KratzenState` (one session: deals, declarations, tricks, ledger), whose data
// is private: other layers read it through accessors, or one seat's part through SeatView.
// Pure and deterministic: every random draw comes from the state's seeded generator. What
// differs between the profiles lives in profiles.ts.

import { aleaNext, aleaSeed } from './alea.js';
import { NUM_CARDS } from './cards.js';
import { ACTION_BETTLER, ACTION_DISCARD, ACTION_DONE, ACTION_IN, ACTION_OUT, ACTION_TRUMP, NUM_ACTIONS } from './actions.js';
import { AmountOverflowError, IllegalActionError, ValidationError } from './errors.js';
import { exceedsUnits, type Settlement } from './ledger.js';
import { parseRuleSet, unitsPerChip, type RuleSet } from './ruleset.js';
import { legalPlayBits, trickWinnerIndex } from './trick.js';
import { everybodyPlays, profileOf, settleScratch, type GameUnits, type ProfileRules, type SettleScratch } from './profiles.js';
import { StateData } from './state-data.js';
import { DECL_BETTLER, DECL_IN, DECL_OUT, HAND_CAPACITY, MAX_SEATS } from './sizes.js';
import { ResultStore, type HandResult } from './results.js';
import { SessionLog, type HandLog } from './history.js';
import { illegalReason } from './illegal.js';
import type { HandKind, Phase } from './phases.js';

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

/** The immutable game: a validated rule set and the sizes and exact amounts derived from it. */
export class KratzenGame implements GameUnits {
  readonly rules: RuleSet;
  readonly numPlayers: number;
  readonly numActions = NUM_ACTIONS;
  /** Cards each player holds for play: 4 in didactic4, 5 in tavern5; as many tricks. */
  readonly handSize: number;
  readonly numTricks: number;
  readonly unitsPerChip: number;
  readonly profile: ProfileRules;
  readonly anteUnits: number;
  readonly feeUnits: number;
  readonly bonusUnits: number;
  readonly startingUnits: number;
  readonly targetUnits: number;

  constructor(rules: unknown) {
    this.rules = parseRuleSet(rules);
    this.numPlayers = this.rules.players;
    this.profile = profileOf(this.rules);
    this.handSize = this.profile.handSize;
    this.numTricks = this.handSize;
    this.unitsPerChip = unitsPerChip(this.rules.profile);
    this.anteUnits = this.toUnits(this.rules.ante);
    this.feeUnits = this.toUnits(this.rules.exchange?.feePerCard ?? 0);
    this.bonusUnits = this.toUnits(this.rules.bettler?.bonus ?? 0);
    this.startingUnits = this.toUnits(this.rules.startingChips ?? 0);
    this.targetUnits = this.toUnits(this.rules.targetChips ?? 0);
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

/** The key under which a state keeps its data, for the rules core's own modules (internal.ts). */
export const STATE_DATA = Symbol('kratzen state data');

export class KratzenState {
  readonly game: KratzenGame;
  readonly rules: RuleSet;
  readonly numPlayers: number;
  private readonly d: StateData;
  private readonly balancesView: Float64Array;
  private readonly resultStore: ResultStore;
  private readonly log = new SessionLog();
  private readonly settlement: Settlement;
  private readonly scratch: SettleScratch;
  private deckSupply: ReadonlyArray<ArrayLike<number> | null | undefined>;
  private readonly pauseBetweenHands: boolean;

  constructor(game: KratzenGame, options: NewStateOptions, copyOf?: KratzenState) {
    this.game = game;
    this.rules = game.rules;
    this.numPlayers = game.numPlayers;
    this.d = new StateData(game.numPlayers);
    this.balancesView = this.d.m.balances.subarray(0, game.numPlayers);
    this.resultStore = new ResultStore(game.numPlayers);
    this.settlement = { payouts: this.d.m.payouts, penalties: this.d.m.penalties, potAfter: 0, anyMissedQuota: false };
    this.scratch = settleScratch(this.d);
    this.deckSupply = options.decks ?? [];
    this.pauseBetweenHands = options.pauseBetweenHands ?? false;
    if (copyOf) return;
    this.d.seed = options.seed;
    this.d.seeded = options.seed !== undefined;
    if (this.d.seeded) aleaSeed(this.d.m.rng, String(options.seed));
    this.beginSession(options.start ?? {});
  }

  /** The rules core's own view of the data (internal.ts); no other layer reads it. */
  get [STATE_DATA](): StateData {
    return this.d;
  }

  /** An independent copy: the same session, hand and generator state. */
  clone(): KratzenState {
    const copy = new KratzenState(this.game, { decks: this.deckSupply, pauseBetweenHands: this.pauseBetweenHands }, this);
    copy.d.copyFrom(this.d);
    copy.resultStore.copyFrom(this.resultStore);
    copy.log.copyFrom(this.log);
    return copy;
  }

  /**
   * Starts a new session from `seed` in this state, reusing its memory: afterwards the state is
   * what `game.newState({ seed, pauseBetweenHands })` would return (same pause setting, no
   * supplied decks, default start). Vector envs restart thousands of tables a second; fresh
   * states would each survive a young-generation GC and scatter across the heap.
   */
  restart(seed: number | string): void {
    const d = this.d;
    d.seed = seed;
    d.seeded = true;
    aleaSeed(d.m.rng, String(seed));
    this.deckSupply = [];
    d.handIndex = -1;
    d.handsPlayed = 0;
    d.complete = false;
    d.overflowed = false;
    d.isTieBreak = false;
    d.tiedSeats = 0;
    d.pot = 0;
    d.m.balances.fill(0);
    this.resultStore.clear();
    this.log.clear();
    d.phase = 'over';
    d.currentSeat = -1;
    d.legalFresh = false;
    this.beginSession({});
  }

  private beginSession(start: SessionStart): void {
    const d = this.d;
    const n = this.numPlayers;
    let dealer = start.dealer;
    if (dealer === undefined) dealer = Math.floor(this.random('start.dealer') * n);
    if (!Number.isInteger(dealer) || dealer < 0 || dealer >= n) {
      throw new ValidationError('malformed record', 'start.dealer', `dealer must be a seat 0..${n - 1}`);
    }
    d.pot = start.pot ?? 0;
    if (start.balances) {
      if (start.balances.length !== n) throw new ValidationError('malformed record', 'start.balances', `expected ${n} balances`);
      d.m.balances.set(Array.from(start.balances));
    }
    if (start.muss && this.rules.profile !== 'tavern5') {
      throw new ValidationError('malformed record', 'start.muss', 'start.muss is a tavern5 field');
    }
    // A tavern5 session opens with a Muss deal [D-10]; a record may start Normal with muss: false.
    d.nextDealIsMuss = start.muss ?? this.rules.profile === 'tavern5';
    d.startInfo = Object.freeze({ dealer, pot: d.pot, balances: Array.from(d.m.balances.subarray(0, n)), muss: d.nextDealIsMuss });
    d.dealer = dealer;
    this.startHand();
  }

  private random(field: string): number {
    if (!this.d.seeded) throw new ValidationError('malformed record', 'seed', `a seed is needed to draw ${field}`);
    return aleaNext(this.d.m.rng);
  }

  // ======================= read-only accessors =======================

  get seed(): number | string | undefined { return this.d.seed; }
  get phase(): Phase { return this.d.phase; }
  get isTerminal(): boolean { return this.d.phase === 'over'; }
  /** The session ended by its rules. */
  get complete(): boolean { return this.d.complete; }
  /** The session stopped with an `amount overflow` (never a rounded amount). */
  get overflowed(): boolean { return this.d.overflowed; }
  /** Index of the hand being played (or of the next one once the session is over). */
  get handIndex(): number { return this.d.handIndex; }
  /** Regular hands finished (a tavern5 tie-break deal does not count). */
  get handsPlayed(): number { return this.d.handsPlayed; }
  get isTieBreak(): boolean { return this.d.isTieBreak; }
  get dealer(): number { return this.d.dealer; }
  /** The seat to act, -1 when none. */
  get currentSeat(): number { return this.d.currentSeat; }
  get kind(): HandKind { return this.d.kind; }
  /** Trump suit 0..3, -1 while a named trump is pending. */
  get trump(): number { return this.d.trump; }
  /** The card whose suit set trump, -1 when none (yet). */
  get indicator(): number { return this.d.indicator; }
  /** The pot in units. */
  get pot(): number { return this.d.pot; }
  /** P, the pot just before play, in units (0 before play). */
  get potBeforePlay(): number { return this.d.potBeforePlay; }
  /** Balances in units, by seat. */
  get balances(): ArrayLike<number> { return this.balancesView; }
  balance(seat: number): number { return this.d.m.balances[seat]!; }
  get startInfo(): Readonly<{ dealer: number; pot: number; balances: readonly number[]; muss: boolean }> { return this.d.startInfo; }
  /** Tricks finished this hand. */
  get trickNumber(): number { return this.d.trickNumber; }
  get leader(): number { return this.d.leader; }
  get trickLength(): number { return this.d.trickLength; }
  get numPlaying(): number { return this.d.numPlaying; }
  /** tavern5: talon cards not yet drawn. */
  get talonLeft(): number { return this.rules.profile === 'tavern5' ? NUM_CARDS - this.d.talonPosition : 0; }
  get numFaceUp(): number { return this.d.numFaceUp; }
  get faceUp(): ArrayLike<number> { return this.d.m.faceUp; }
  get tricksWon(): ArrayLike<number> { return this.d.m.tricksWon; }
  get quotas(): ArrayLike<number> { return this.d.m.quotas; }
  get dealtIn(): ArrayLike<number> { return this.d.m.dealtIn; }
  get playing(): ArrayLike<number> { return this.d.m.playing; }
  /** DECL_NONE, DECL_OUT, DECL_IN or DECL_BETTLER by seat. */
  get declaration(): ArrayLike<number> { return this.d.m.declaration; }
  get exchanged(): ArrayLike<number> { return this.d.m.exchanged; }
  get trickCards(): ArrayLike<number> { return this.d.m.trickCards; }
  get trickSeats(): ArrayLike<number> { return this.d.m.trickSeats; }
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  get playedCards(): ArrayLike<number> { return this.d.m.playedCards; }
  get trickWinners(): ArrayLike<number> { return this.d.m.trickWinners; }
  /** Hands finished this session (a tavern5 tie-break deal counts): `results.length`, cheaply. */
  get numResults(): number { return this.resultStore.count; }
  /** The session's finished hands; `restart` begins a new array (an old one stays valid). */
  get results(): HandResult[] { return this.resultStore.all(); }

  /** The cards `seat` holds (any seat: other layers see only their own, through SeatView). */
  handOf(seat: number): number[] {
    return Array.from(this.d.m.hands.subarray(seat * HAND_CAPACITY, seat * HAND_CAPACITY + this.d.m.handLength[seat]!));
  }

  /** The cards `seat` discarded this hand, in order. */
  discardsOf(seat: number): number[] {
    const { discards, discardedBy } = this.d.m;
    return Array.from(discards.subarray(0, this.d.numDiscards)).filter((c) => discardedBy[c] === seat);
  }

  /** Stack = startingChips + balance, in units (tavern5); the balance alone without startingChips. */
  stack(seat: number): number {
    return this.game.startingUnits + this.d.m.balances[seat]!;
  }

  /**
   * Seats with the highest balance once the session is complete, empty before; after a tavern5
   * tie-break deal only the tied players are candidates [D-11].
   */
  winners(): number[] {
    const d = this.d;
    if (!d.complete) return [];
    const candidates: number[] = [];
    for (let s = 0; s < this.numPlayers; s++) if (d.tiedSeats === 0 || d.tiedSeats & (1 << s)) candidates.push(s);
    const best = Math.max(...candidates.map((s) => d.m.balances[s]!));
    return candidates.filter((s) => d.m.balances[s] === best);
  }

  /** Decks and actions of every hand started so far: the raw material of a record. */
  handLogs(): HandLog[] {
    return this.log.hands();
  }

  // ======================= legal actions =======================

  /** Legal actions as action ids, ascending. */
  legalActions(): number[] {
    this.refreshLegal();
    return Array.from(this.d.m.legal.subarray(0, this.d.numLegal)).sort((a, b) => a - b);
  }

  /** Writes 1 for each legal action into `out` (length NUM_ACTIONS), 0 elsewhere. */
  legalActionMask(out: Uint8Array, offset = 0): Uint8Array {
    this.refreshLegal();
    out.fill(0, offset, offset + NUM_ACTIONS);
    const legal = this.d.m.legal;
    for (let i = 0; i < this.d.numLegal; i++) out[offset + legal[i]!] = 1;
    return out;
  }

  numLegalActions(): number {
    this.refreshLegal();
    return this.d.numLegal;
  }

  /** The i-th legal action in the engine's internal order (for fast uniform sampling). */
  legalActionAt(i: number): number {
    this.refreshLegal();
    return this.d.m.legal[i]!;
  }

  isLegal(action: number): boolean {
    this.refreshLegal();
    const legal = this.d.m.legal;
    for (let i = 0; i < this.d.numLegal; i++) if (legal[i] === action) return true;
    return false;
  }

  /** Why `action` is illegal for the seat to act (or `seat`, if given), without throwing; null when it is legal. */
  explainIllegal(action: number, seat = this.d.currentSeat): string | null {
    if (seat !== this.d.currentSeat) {
      return this.d.phase === 'over' ? 'the session is over' : `it is seat ${this.d.currentSeat}'s turn, not seat ${seat}'s`;
    }
    return this.isLegal(action) ? null : illegalReason(this, this.d, action);
  }

  private refreshLegal(): void {
    const d = this.d;
    if (d.legalFresh) return;
    d.legalFresh = true;
    const { legal, hands, handLength } = d.m;
    let count = 0;
    const seat = d.currentSeat;
    const base = seat * HAND_CAPACITY;
    switch (d.phase) {
      case 'trump':
        for (let s = 0; s < 4; s++) legal[count++] = ACTION_TRUMP + s;
        break;
      case 'discard':
        for (let i = 0; i < handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + hands[base + i]!;
        break;
      case 'declare':
        legal[count++] = ACTION_IN;
        legal[count++] = ACTION_OUT;
        if (this.rules.bettler) legal[count++] = ACTION_BETTLER;
        break;
      case 'exchange':
        // Discards are replaced only at `done`, so the talon must still hold one more card.
        if (d.pendingExchange < this.rules.exchange!.maxCards && d.pendingExchange < NUM_CARDS - d.talonPosition) {
          for (let i = 0; i < handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + hands[base + i]!;
        }
        legal[count++] = ACTION_DONE;
        break;
      case 'play': {
        const bits = legalPlayBits(hands, base, handLength[seat]!, d.m.trickCards, d.trickLength, d.trump, this.rules.weliRank === 'highest', this.game.profile.mustHead);
        for (let i = 0; i < handLength[seat]!; i++) if (bits & (1 << i)) legal[count++] = hands[base + i]!;
        break;
      }
      case 'deal':
      case 'over':
        break;
    }
    d.numLegal = count;
  }

  // ======================= acting =======================

  /** Applies an action of the current seat; throws IllegalActionError and changes nothing if illegal. */
  apply(action: number): void {
    const d = this.d;
    const seat = d.currentSeat;
    if (!this.isLegal(action)) throw new IllegalActionError(action, seat, illegalReason(this, d, action));
    this.log.push(seat, action);
    d.legalFresh = false;
    switch (d.phase) {
      case 'trump':
        d.trump = action - ACTION_TRUMP;
        return this.continueByKind();
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
    if (seat !== this.d.currentSeat) throw new IllegalActionError(action, seat, this.explainIllegal(action, seat)!);
    this.apply(action);
  }

  /**
   * Deals the waiting hand (phase `deal`): from `deck` (33 card ids, top first) when given, else
   * from the record's decks or the seeded generator. In phase `deal` the `dealer` accessor
   * already names the dealer of the waiting hand.
   */
  dealNextHand(deck?: ArrayLike<number>): void {
    const d = this.d;
    if (d.phase !== 'deal') throw new Error(`no hand is waiting for a deck (phase ${d.phase})`);
    if (deck) {
      const seen = new Set(Array.from(deck));
      if (deck.length !== NUM_CARDS || seen.size !== NUM_CARDS || [...seen].some((c) => !(c >= 0 && c < NUM_CARDS))) {
        throw new ValidationError('invalid deck', 'deck', `a deck lists each of the ${NUM_CARDS} card ids once`);
      }
    }
    const source = deck ?? this.deckSupply[d.handIndex];
    if (!source && !d.seeded) throw new ValidationError('invalid deck', 'deck', 'no deck given and no seed to draw one');
    d.legalFresh = false;
    this.dealHand(source);
  }

  private startHand(): void {
    const d = this.d;
    d.handIndex++;
    const supplied = this.deckSupply[d.handIndex];
    // Waiting keeps the finished hand visible (its tricks, its tricks won) until the next deal.
    if ((this.pauseBetweenHands && d.handIndex > 0) || (!supplied && !d.seeded)) {
      d.phase = 'deal';
      d.currentSeat = -1;
      d.legalFresh = false;
      return;
    }
    this.dealHand(supplied);
  }

  private dealHand(supplied: ArrayLike<number> | null | undefined): void {
    const d = this.d;
    d.resetHand();
    const deck = d.m.deck;
    if (supplied) deck.set(supplied);
    else {
      for (let i = 0; i < NUM_CARDS; i++) deck[i] = i;
      if (!d.seeded) this.random(`the deck of hand ${d.handIndex}`);
      for (let i = NUM_CARDS - 1; i > 0; i--) {
        const j = Math.floor(aleaNext(d.m.rng) * (i + 1));
        const t = deck[i]!;
        deck[i] = deck[j]!;
        deck[j] = t;
      }
    }
    this.log.beginHand(deck);
    const next = this.game.profile.deal(d, this.game, this.dealContext);
    if (next === 'kind') return this.continueByKind();
    d.phase = next;
  }

  private readonly dealContext = {
    pay: (seat: number, units: number) => this.pay(seat, units),
    deal: (position: number, count: number) => this.dealPackets(position, count),
  };

  /** Gives `count` cards to each dealt-in seat clockwise from the dealer's left, in packets. */
  private dealPackets(position: number, count: number): number {
    const d = this.d;
    let seat = d.dealer;
    for (let k = d.numDealtIn(); k > 0; k--) {
      seat = d.nextSeatIn(d.m.dealtIn, seat);
      for (let c = 0; c < count; c++) d.addToHand(seat, d.m.deck[position++]!);
    }
    return position;
  }

  /** After the deal (and a named trump, and the didactic4 discards): declarations in a Normal hand, else play. */
  private continueByKind(): void {
    const d = this.d;
    if (d.kind !== 'normal') return this.beginPlay(true);
    d.phase = 'declare';
    d.currentSeat = d.nextSeatIn(d.m.dealtIn, d.dealer);
  }

  private pay(seat: number, units: number): void {
    const d = this.d;
    d.m.balances[seat]! -= units;
    d.pot += units;
    this.guardAmount(d.m.balances[seat]!);
    this.guardAmount(d.pot);
  }

  /**
   * Amounts are exact integers up to 2^53 - 1 units; past that the session stops rather than
   * round (docs/rules.md §3, Ledger). The state becomes terminal with `overflowed` set.
   */
  private guardAmount(units: number): void {
    if (!exceedsUnits(units)) return;
    const d = this.d;
    d.overflowed = true;
    d.phase = 'over';
    d.currentSeat = -1;
    d.legalFresh = false;
    throw new AmountOverflowError(d.handIndex);
  }

  // ======================= phases =======================

  private applyDealerDiscard(card: number): void {
    const d = this.d;
    d.removeFromHand(d.dealer, card);
    d.m.discardedBy[card] = d.dealer;
    d.m.discards[d.numDiscards++] = card;
    if (d.m.handLength[d.dealer]! > this.game.handSize) return;
    this.continueByKind();
  }

  private applyDeclaration(action: number): void {
    const d = this.d;
    const { declaration, playing, bettler, dealtIn } = d.m;
    const seat = d.currentSeat;
    declaration[seat] = action === ACTION_IN ? DECL_IN : action === ACTION_OUT ? DECL_OUT : DECL_BETTLER;
    const next = d.nextSeatIn(dealtIn, seat);
    if (next !== d.dealer) {
      d.currentSeat = next;
      return;
    }
    declaration[d.dealer] = DECL_IN;
    let othersIn = 0;
    for (let s = 0; s < this.numPlayers; s++) {
      playing[s] = declaration[s] === DECL_IN || declaration[s] === DECL_BETTLER ? 1 : 0;
      bettler[s] = declaration[s] === DECL_BETTLER ? 1 : 0;
      if (s !== d.dealer) othersIn += playing[s]!;
    }
    if (othersIn === 0) return this.finishWalkover();
    if (this.rules.exchange) {
      d.phase = 'exchange';
      d.pendingExchange = 0;
      d.currentSeat = d.nextSeatIn(playing, d.dealer);
      return;
    }
    this.beginPlay(false);
  }

  private applyExchange(action: number): void {
    const d = this.d;
    const seat = d.currentSeat;
    if (action !== ACTION_DONE) {
      const card = action - ACTION_DISCARD;
      d.removeFromHand(seat, card);
      d.m.discardedBy[card] = seat;
      d.m.discards[d.numDiscards++] = card;
      d.pendingExchange++;
      return;
    }
    const count = d.pendingExchange;
    for (let i = 0; i < count; i++) d.addToHand(seat, d.m.deck[d.talonPosition++]!);
    const fee = count * this.game.feeUnits;
    this.pay(seat, fee);
    d.m.fees[seat]! += fee;
    d.m.exchanged[seat] = count;
    d.pendingExchange = 0;
    if (seat === d.dealer) this.beginPlay(false);
    else d.currentSeat = d.nextSeatIn(d.m.playing, seat);
  }

  private beginPlay(everybody: boolean): void {
    const d = this.d;
    if (everybody) everybodyPlays(d);
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += d.m.playing[s]!;
    d.numPlaying = count;
    d.potBeforePlay = d.pot;
    d.phase = 'play';
    d.leader = this.game.profile.firstLeaderOf(d.dealer, d.m.playing, this.numPlayers);
    d.currentSeat = d.leader;
    d.trickLength = 0;
    d.trickNumber = 0;
  }

  private applyPlay(card: number): void {
    const d = this.d;
    const { trickCards, trickSeats } = d.m;
    const seat = d.currentSeat;
    d.removeFromHand(seat, card);
    trickCards[d.trickLength] = card;
    trickSeats[d.trickLength] = seat;
    d.trickLength++;
    d.m.playedCards[d.trickNumber * MAX_SEATS + seat] = card;
    if (d.trickLength < d.numPlaying) {
      d.currentSeat = d.nextSeatIn(d.m.playing, seat);
      return;
    }
    const winner = trickSeats[trickWinnerIndex(trickCards, d.trickLength, d.trump, this.rules.weliRank === 'highest')]!;
    d.m.tricksWon[winner]!++;
    d.m.trickWinners[d.trickNumber] = winner;
    d.trickNumber++;
    d.trickLength = 0;
    d.leader = winner;
    d.currentSeat = winner;
    if (d.trickNumber === this.game.numTricks) this.commitHand(this.game.profile.settle(d, this.game, this.settlement, this.scratch), false);
  }

  // ======================= settlement and session =======================

  private finishWalkover(): void {
    const d = this.d;
    const s = this.settlement;
    s.payouts.fill(0);
    s.penalties.fill(0);
    s.payouts[d.dealer] = d.pot;
    s.potAfter = 0;
    s.anyMissedQuota = false;
    d.potBeforePlay = d.pot;
    d.m.playing.fill(0);
    d.m.playing[d.dealer] = 1;
    this.commitHand(s, true);
  }

  private commitHand(settlement: Settlement, walkover: boolean): void {
    const d = this.d;
    const n = this.numPlayers;
    const balances = d.m.balances;
    this.guardAmount(settlement.potAfter);
    for (let s = 0; s < n; s++) this.guardAmount(balances[s]! + settlement.payouts[s]! - settlement.penalties[s]!);
    for (let s = 0; s < n; s++) balances[s]! += settlement.payouts[s]! - settlement.penalties[s]!;
    d.pot = settlement.potAfter;
    this.resultStore.push({
      hand: d.handIndex,
      dealer: d.dealer,
      trump: d.trump,
      indicator: d.indicator,
      kind: d.kind,
      walkover,
      potBeforePlay: d.potBeforePlay,
      potAfter: d.pot,
      hasFees: this.rules.exchange !== null,
      playing: d.m.playing,
      tricks: d.m.tricksWon,
      payouts: settlement.payouts,
      penalties: settlement.penalties,
      fees: d.m.fees,
      balances,
    });
    this.game.profile.afterHand(d, settlement);
    this.advanceSession();
  }

  private advanceSession(): void {
    const d = this.d;
    const wasTieBreak = d.isTieBreak;
    if (!wasTieBreak) d.handsPlayed++;
    const nextDealer = (d.dealer + 1) % this.numPlayers;
    const over = wasTieBreak || d.handsPlayed >= this.rules.hands || this.game.profile.endsEarly(d, this.game, (s) => this.stack(s));
    if (!over) {
      d.dealer = nextDealer;
      return this.startHand();
    }
    const tied = leaders(d.m.balances, this.numPlayers);
    if (!wasTieBreak && this.game.profile.tieBreaks && tied.length > 1) {
      // One tie-break deal: the tied players and the next dealer are dealt in.
      d.isTieBreak = true;
      d.m.dealtIn.fill(0);
      for (const s of tied) {
        d.m.dealtIn[s] = 1;
        d.tiedSeats |= 1 << s;
      }
      d.m.dealtIn[nextDealer] = 1;
      d.dealer = nextDealer;
      return this.startHand();
    }
    d.isTieBreak = false;
    d.complete = true;
    d.phase = 'over';
    d.currentSeat = -1;
    d.handIndex++;
  }
}

/** Seats with the highest value (all of them when tied). */
function leaders(values: ArrayLike<number>, n: number): number[] {
  let best = -Infinity;
  for (let s = 0; s < n; s++) best = Math.max(best, values[s]!);
  const out: number[] = [];
  for (let s = 0; s < n; s++) if (values[s] === best) out.push(s);
  return out;
}
