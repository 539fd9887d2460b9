// The Kratzen state machine (docs/rules.md §2–§4): `KratzenState`, one session (deals,
// declarations, tricks, ledger) and its transitions; what may be read of it is in
// state-reader.ts, its data in state-data.ts, and what differs between the profiles in
// profiles.ts. Pure and deterministic: every random draw comes from the state's seeded generator.

import { aleaNext, aleaSeed, aleaShuffle } from './alea.js';
import { NUM_CARDS } from './cards.js';
import { ACTION_DISCARD, ACTION_DONE, ACTION_IN, ACTION_OUT, ACTION_TRUMP } from './actions.js';
import { AmountOverflowError, IllegalActionError, ValidationError, checkSeed } from './errors.js';
import { exceedsUnits, leaderBits, type Settlement } from './ledger.js';
import { trickWinnerIndex } from './trick.js';
import { everybodyPlays } from './profiles.js';
import { DECL_BETTLER, DECL_IN, DECL_OUT, MAX_SEATS, playsByDeclaration } from './sizes.js';
import { illegalReason } from './illegal.js';
import { unitsReadExactly } from './ruleset.js';
import { StateReader } from './state-reader.js';
import { Mem, copySeats } from './state-data.js';
import { handRecordScratch } from './results.js';
import type { KratzenGame, NewStateOptions, SessionStart } from './kratzen-game.js';

// Scratch shared by all states: a deal or a settlement runs to its end before another can start,
// and a state allocates nothing for them.
/** The balances before a deal's stakes, put back if the stakes overflow (dealHand). */
const balancesBeforeDeal = new Float64Array(MAX_SEATS);
/** The settlement being committed (the profile's settle writes it, commitHand reads it). */
const settlement: Settlement = { payouts: new Float64Array(MAX_SEATS), penalties: new Float64Array(MAX_SEATS), potAfter: 0, anyMissedQuota: false };
/**
 * A finished hand as commitHand gives it to the result store (an object literal was a hand's only
 * garbage); its payouts and penalties are those of `settlement`, the one commitHand is given.
 */
const committed = handRecordScratch(settlement.payouts, settlement.penalties);

export class KratzenState extends StateReader {
  private deckSupply: ReadonlyArray<ArrayLike<number> | null | undefined>;
  private readonly pauseBetweenHands: boolean;

  constructor(game: KratzenGame, options: NewStateOptions, copyOf?: KratzenState) {
    super(game);
    this.deckSupply = copyOf ? (options.decks ?? []) : copyDecks(options.decks);
    this.pauseBetweenHands = options.pauseBetweenHands ?? false;
    if (typeof this.pauseBetweenHands !== 'boolean') throw new TypeError(`pauseBetweenHands must be true or false, got ${JSON.stringify(options.pauseBetweenHands)?.slice(0, 40)}`);
    if (copyOf) return;
    if (options.seed !== undefined) checkSeed(options.seed);
    this.d.seed = options.seed;
    this.d.seeded = options.seed !== undefined;
    this.d.seedAlone = this.d.seeded && options.decks === undefined && options.start === undefined;
    if (this.d.seeded) aleaSeed(this.d.f64, String(options.seed));
    this.beginSession(options.start ?? {});
  }

  /**
   * An independent copy: the same session, hand and generator state; `pauseBetweenHands` sets
   * whether the copy waits between hands (default: as this state does).
   */
  clone(options: { pauseBetweenHands?: boolean } = {}): KratzenState {
    const pauseBetweenHands = options.pauseBetweenHands ?? this.pauseBetweenHands;
    const copy = new KratzenState(this.game, { decks: this.deckSupply, pauseBetweenHands }, this);
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
    checkSeed(seed);
    const d = this.d;
    d.seed = seed;
    d.seeded = true;
    d.seedAlone = true;
    aleaSeed(d.f64, String(seed));
    this.deckSupply = [];
    d.handIndex = -1;
    d.handsPlayed = 0;
    d.complete = false;
    d.overflowed = false;
    d.isTieBreak = false;
    d.tiedSeats = 0;
    d.pot = 0;
    d.f64.fill(0, Mem.balances, Mem.balances + MAX_SEATS);
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
    // Amounts are whole units within the bound (docs/rules.md §3, Ledger); records are checked
    // in chips before they get here, API callers here.
    const pot = start.pot ?? 0;
    if (!Number.isSafeInteger(pot) || pot < 0) {
      throw new ValidationError('malformed record', 'start.pot', 'the pot must be a whole, non-negative number of units, at most 2^53 - 1');
    }
    if (this.game.profile.wholeChipPot && pot % this.game.unitsPerChip !== 0) {
      throw new ValidationError('malformed record', 'start.pot', `the pot must be whole chips in didactic4 (a multiple of ${this.game.unitsPerChip} units)`);
    }
    if (!unitsReadExactly(pot, this.game.unitsPerChip)) {
      throw new ValidationError('malformed record', 'start.pot', 'past 2^50 chips the pot must be whole chips: a record could not write it exactly');
    }
    d.pot = pot;
    if (start.balances) {
      if (start.balances.length !== n) throw new ValidationError('malformed record', 'start.balances', `expected ${n} balances`);
      for (let s = 0; s < n; s++) {
        const units = start.balances[s]!;
        if (!Number.isSafeInteger(units)) {
          throw new ValidationError('malformed record', `start.balances[${s}]`, 'a balance must be a whole number of units, at most 2^53 - 1 in size');
        }
        if (!unitsReadExactly(units, this.game.unitsPerChip)) {
          throw new ValidationError('malformed record', `start.balances[${s}]`, 'past 2^50 chips a balance must be whole chips: a record could not write it exactly');
        }
      }
      for (let s = 0; s < n; s++) d.f64[Mem.balances + s] = start.balances[s]!;
    }
    if (start.muss !== undefined && typeof start.muss !== 'boolean') {
      throw new ValidationError('malformed record', 'start.muss', `start.muss must be true or false, got ${JSON.stringify(start.muss)?.slice(0, 40)}`);
    }
    if (start.muss && !this.game.profile.opensWithMuss) {
      throw new ValidationError('malformed record', 'start.muss', 'start.muss is a tavern5 field');
    }
    // A tavern5 session opens with a Muss deal [D-10]; a record may start Normal with muss: false.
    d.nextDealIsMuss = start.muss ?? this.game.profile.opensWithMuss;
    d.startDealer = dealer;
    d.startPot = d.pot;
    d.startMuss = d.nextDealIsMuss;
    d.f64.copyWithin(Mem.startBalances, Mem.balances, Mem.balances + MAX_SEATS);
    d.dealer = dealer;
    this.startHand();
  }

  private random(field: string): number {
    if (!this.d.seeded) throw new ValidationError('malformed record', 'seed', `a seed is needed to draw ${field}`);
    return aleaNext(this.d.f64);
  }

  // ======================= acting =======================

  /** Applies an action of the current seat; throws IllegalActionError and changes nothing if illegal. */
  apply(action: number): void {
    const d = this.d;
    const seat = d.currentSeat;
    if (!this.isLegal(action)) throw new IllegalActionError(action, seat, illegalReason(this.game, d, action));
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
    this.assertSeat(seat);
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
    if (deck) checkDeck(deck, 'deck');
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
    const i8 = d.i8;
    if (supplied) for (let i = 0; i < NUM_CARDS; i++) i8[Mem.deck + i] = supplied[i]!;
    else {
      for (let i = 0; i < NUM_CARDS; i++) i8[Mem.deck + i] = i;
      if (!d.seeded) this.random(`the deck of hand ${d.handIndex}`);
      aleaShuffle(d.f64, i8, Mem.deck, NUM_CARDS);
    }
    this.log.beginHand(i8, Mem.deck);
    // Stakes that pass the bound stop the session before this hand (docs/rules.md §3): the ledger
    // stays as the last settlement left it, not with some of the stakes taken.
    const potBeforeDeal = d.pot;
    copySeats(d.f64, Mem.balances, balancesBeforeDeal);
    let next: 'trump' | 'discard' | 'kind';
    try {
      next = this.game.profile.deal(d, this.game, this.dealContext);
    } catch (e) {
      if (e instanceof AmountOverflowError) {
        d.f64.set(balancesBeforeDeal, Mem.balances);
        d.pot = potBeforeDeal;
      }
      throw e;
    }
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
      seat = d.nextSeatIn(Mem.dealtIn, seat);
      for (let c = 0; c < count; c++) d.addToHand(seat, d.i8[Mem.deck + position++]!);
    }
    return position;
  }

  /** After the deal (and a named trump, and the didactic4 discards): declarations in a Normal hand, else play. */
  private continueByKind(): void {
    const d = this.d;
    if (d.kind !== 'normal') return this.beginPlay(true);
    d.phase = 'declare';
    d.currentSeat = d.nextSeatIn(Mem.dealtIn, d.dealer);
  }

  private pay(seat: number, units: number): void {
    const d = this.d;
    // Both checked before either moves: an overflow leaves the ledger as it was.
    this.guardAmount(d.f64[Mem.balances + seat]! - units);
    this.guardAmount(d.pot + units);
    d.f64[Mem.balances + seat]! -= units;
    d.pot += units;
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
    d.i8[Mem.discardedBy + card] = d.dealer;
    d.i8[Mem.discards + d.numDiscards++] = card;
    if (d.u8[Mem.handLength + d.dealer]! > this.game.handSize) return;
    this.continueByKind();
  }

  private applyDeclaration(action: number): void {
    const d = this.d;
    const u8 = d.u8;
    const seat = d.currentSeat;
    u8[Mem.declaration + seat] = action === ACTION_IN ? DECL_IN : action === ACTION_OUT ? DECL_OUT : DECL_BETTLER;
    const next = d.nextSeatIn(Mem.dealtIn, seat);
    if (next !== d.dealer) {
      d.currentSeat = next;
      return;
    }
    u8[Mem.declaration + d.dealer] = DECL_IN;
    let othersIn = 0;
    for (let s = 0; s < this.numPlayers; s++) {
      const declaration = u8[Mem.declaration + s]!;
      const playing = playsByDeclaration(declaration) ? 1 : 0;
      u8[Mem.playing + s] = playing;
      u8[Mem.bettler + s] = declaration === DECL_BETTLER ? 1 : 0;
      if (s !== d.dealer) othersIn += playing;
    }
    if (othersIn === 0) return this.finishWalkover();
    if (this.rules.exchange) {
      d.phase = 'exchange';
      d.pendingExchange = 0;
      d.currentSeat = d.nextSeatIn(Mem.playing, d.dealer);
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
      d.i8[Mem.discardedBy + card] = seat;
      d.i8[Mem.discards + d.numDiscards++] = card;
      d.pendingExchange++;
      return;
    }
    const count = d.pendingExchange;
    for (let i = 0; i < count; i++) d.addToHand(seat, d.i8[Mem.deck + d.talonPosition++]!);
    const fee = count * this.game.feeUnits;
    this.pay(seat, fee);
    d.f64[Mem.fees + seat]! += fee;
    d.u8[Mem.exchanged + seat] = count;
    d.pendingExchange = 0;
    if (seat === d.dealer) this.beginPlay(false);
    else d.currentSeat = d.nextSeatIn(Mem.playing, seat);
  }

  private beginPlay(everybody: boolean): void {
    const d = this.d;
    if (everybody) everybodyPlays(d);
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += d.u8[Mem.playing + s]!;
    d.numPlaying = count;
    d.potBeforePlay = d.pot;
    d.phase = 'play';
    d.leader = this.game.profile.firstLeaderOf(d.dealer, d.u8, this.numPlayers, Mem.playing);
    d.currentSeat = d.leader;
    d.trickLength = 0;
    d.trickNumber = 0;
  }

  private applyPlay(card: number): void {
    const d = this.d;
    const i8 = d.i8;
    const seat = d.currentSeat;
    d.removeFromHand(seat, card);
    i8[Mem.trickCards + d.trickLength] = card;
    i8[Mem.trickSeats + d.trickLength] = seat;
    d.trickLength++;
    i8[Mem.playedCards + d.trickNumber * MAX_SEATS + seat] = card;
    if (d.trickLength < d.numPlaying) {
      d.currentSeat = d.nextSeatIn(Mem.playing, seat);
      return;
    }
    const winner = i8[Mem.trickSeats + trickWinnerIndex(i8, d.trickLength, d.trump, this.rules.weliRank === 'highest', Mem.trickCards)]!;
    d.u8[Mem.tricksWon + winner]!++;
    i8[Mem.trickWinners + d.trickNumber] = winner;
    d.trickNumber++;
    d.trickLength = 0;
    d.leader = winner;
    d.currentSeat = winner;
    if (d.trickNumber === this.game.numTricks) this.commitHand(this.game.profile.settle(d, this.game, settlement), false);
  }

  // ======================= settlement and session =======================

  private finishWalkover(): void {
    const d = this.d;
    const s = settlement;
    s.payouts.fill(0);
    s.penalties.fill(0);
    s.payouts[d.dealer] = d.pot;
    s.potAfter = 0;
    s.anyMissedQuota = false;
    d.potBeforePlay = d.pot;
    d.u8.fill(0, Mem.playing, Mem.playing + MAX_SEATS);
    d.u8[Mem.playing + d.dealer] = 1;
    this.commitHand(s, true);
  }

  private commitHand(settlement: Settlement, walkover: boolean): void {
    const d = this.d;
    const n = this.numPlayers;
    const f64 = d.f64;
    // Every amount of the settlement, then each balance (ledger.ts, exact order): payout minus
    // penalty is exact for two amounts that fit, so a new balance is exact when it fits.
    this.guardAmount(settlement.potAfter);
    for (let s = 0; s < n; s++) {
      this.guardAmount(settlement.payouts[s]!);
      this.guardAmount(settlement.penalties[s]!);
      this.guardAmount(f64[Mem.balances + s]! + (settlement.payouts[s]! - settlement.penalties[s]!));
    }
    for (let s = 0; s < n; s++) f64[Mem.balances + s]! += settlement.payouts[s]! - settlement.penalties[s]!;
    d.pot = settlement.potAfter;
    const hand = committed;
    hand.hand = d.handIndex;
    hand.dealer = d.dealer;
    hand.trump = d.trump;
    hand.indicator = d.indicator;
    hand.kind = d.kind;
    hand.walkover = walkover;
    hand.potBeforePlay = d.potBeforePlay;
    hand.potAfter = d.pot;
    hand.hasFees = this.rules.exchange !== null;
    copySeats(d.u8, Mem.playing, hand.playing);
    copySeats(d.u8, Mem.tricksWon, hand.tricks);
    copySeats(f64, Mem.fees, hand.fees);
    copySeats(f64, Mem.balances, hand.balances);
    this.resultStore.push(hand);
    this.game.profile.afterHand(d, settlement);
    this.advanceSession();
  }

  private advanceSession(): void {
    const d = this.d;
    const wasTieBreak = d.isTieBreak;
    if (!wasTieBreak) d.handsPlayed++;
    const nextDealer = (d.dealer + 1) % this.numPlayers;
    const over = wasTieBreak || d.handsPlayed >= this.rules.hands || this.game.profile.endsEarly(d, this.game, this);
    if (!over) {
      d.dealer = nextDealer;
      return this.startHand();
    }
    const tied = leaderBits(d.f64, Mem.balances, this.numPlayers);
    if (!wasTieBreak && this.game.profile.tieBreaks && (tied & (tied - 1)) !== 0) {
      // One tie-break deal: the tied players and the next dealer are dealt in.
      d.isTieBreak = true;
      for (let s = 0; s < MAX_SEATS; s++) d.u8[Mem.dealtIn + s] = (tied >> s) & 1;
      d.tiedSeats |= tied;
      d.u8[Mem.dealtIn + nextDealer] = 1;
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

/** The decks, checked and copied: a caller's array changed afterwards must not change what is dealt. */
function copyDecks(decks: NewStateOptions['decks']): (Int8Array | null | undefined)[] {
  if (decks === undefined) return [];
  if (!Array.isArray(decks)) throw new ValidationError('invalid deck', 'decks', 'decks must be an array with a deck (or null) per hand');
  return decks.map((deck, h) => (deck ? (checkDeck(deck, `decks[${h}]`), Int8Array.from(deck)) : deck));
}

/** Throws unless `deck` lists each card id once (33 entries). */
function checkDeck(deck: ArrayLike<number>, field: string): void {
  const seen = new Set(Array.from(deck));
  // Integers only: 0.5 dealt card 0 and "7" card 7 (Int8Array.from truncates and converts).
  if (deck.length !== NUM_CARDS || seen.size !== NUM_CARDS || [...seen].some((c) => !(Number.isInteger(c) && c >= 0 && c < NUM_CARDS))) {
    throw new ValidationError('invalid deck', field, `a deck lists each of the ${NUM_CARDS} card ids once`);
  }
}
