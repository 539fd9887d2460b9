// The Kratzen state machine (docs/rules.md §2–§4): `KratzenState`, one session (deals,
// declarations, tricks, ledger) and its transitions; what may be read of it is in
// state-reader.ts, its data in state-data.ts, and what differs between the profiles in
// profiles.ts. Pure and deterministic: every random draw comes from the state's seeded generator.

import { aleaNext, aleaSeed, aleaShuffle } from './alea.js';
import { NUM_CARDS } from './cards.js';
import { ACTION_DISCARD, ACTION_DONE, ACTION_IN, ACTION_OUT, ACTION_TRUMP } from './actions.js';
import { AmountOverflowError, IllegalActionError, ValidationError } from './errors.js';
import { exceedsUnits, type Settlement } from './ledger.js';
import { trickWinnerIndex } from './trick.js';
import { everybodyPlays, settleScratch, type SettleScratch } from './profiles.js';
import { DECL_BETTLER, DECL_IN, DECL_OUT, MAX_SEATS } from './sizes.js';
import { illegalReason } from './illegal.js';
import { StateReader } from './state-reader.js';
import type { KratzenGame, NewStateOptions, SessionStart } from './kratzen-game.js';

/**
 * The balances before a deal's stakes, put back if the stakes overflow (dealHand). One for all
 * states: a deal runs to its end before another can start, and a state allocates nothing more.
 */
const balancesBeforeDeal = new Float64Array(MAX_SEATS);

export class KratzenState extends StateReader {
  private readonly settlement: Settlement;
  private readonly scratch: SettleScratch;
  private deckSupply: ReadonlyArray<ArrayLike<number> | null | undefined>;
  private readonly pauseBetweenHands: boolean;

  constructor(game: KratzenGame, options: NewStateOptions, copyOf?: KratzenState) {
    super(game);
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
    // Amounts are whole units within the bound (docs/rules.md §3, Ledger); records are checked
    // in chips before they get here, API callers here.
    const pot = start.pot ?? 0;
    if (!Number.isSafeInteger(pot) || pot < 0) {
      throw new ValidationError('malformed record', 'start.pot', 'the pot must be a whole, non-negative number of units, at most 2^53 - 1');
    }
    if (this.rules.profile === 'didactic4' && pot % this.game.unitsPerChip !== 0) {
      throw new ValidationError('malformed record', 'start.pot', `the pot must be whole chips in didactic4 (a multiple of ${this.game.unitsPerChip} units)`);
    }
    d.pot = pot;
    if (start.balances) {
      if (start.balances.length !== n) throw new ValidationError('malformed record', 'start.balances', `expected ${n} balances`);
      for (let s = 0; s < n; s++) {
        if (!Number.isSafeInteger(start.balances[s])) {
          throw new ValidationError('malformed record', `start.balances[${s}]`, 'a balance must be a whole number of units, at most 2^53 - 1 in size');
        }
      }
      d.m.balances.set(Array.from(start.balances));
    }
    if (start.muss && this.rules.profile !== 'tavern5') {
      throw new ValidationError('malformed record', 'start.muss', 'start.muss is a tavern5 field');
    }
    // A tavern5 session opens with a Muss deal [D-10]; a record may start Normal with muss: false.
    d.nextDealIsMuss = start.muss ?? this.rules.profile === 'tavern5';
    d.startDealer = dealer;
    d.startPot = d.pot;
    d.startMuss = d.nextDealIsMuss;
    d.m.startBalances.set(d.m.balances);
    d.dealer = dealer;
    this.startHand();
  }

  private random(field: string): number {
    if (!this.d.seeded) throw new ValidationError('malformed record', 'seed', `a seed is needed to draw ${field}`);
    return aleaNext(this.d.m.rng);
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
      aleaShuffle(d.m.rng, deck, NUM_CARDS);
    }
    this.log.beginHand(deck);
    // Stakes that pass the bound stop the session before this hand (docs/rules.md §3): the ledger
    // stays as the last settlement left it, not with some of the stakes taken.
    const potBeforeDeal = d.pot;
    balancesBeforeDeal.set(d.m.balances);
    let next: 'trump' | 'discard' | 'kind';
    try {
      next = this.game.profile.deal(d, this.game, this.dealContext);
    } catch (e) {
      if (e instanceof AmountOverflowError) {
        d.m.balances.set(balancesBeforeDeal);
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
    // Both checked before either moves: an overflow leaves the ledger as it was.
    this.guardAmount(d.m.balances[seat]! - units);
    this.guardAmount(d.pot + units);
    d.m.balances[seat]! -= units;
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
    // Every amount of the settlement, then each balance (ledger.ts, exact order): payout minus
    // penalty is exact for two amounts that fit, so a new balance is exact when it fits.
    this.guardAmount(settlement.potAfter);
    for (let s = 0; s < n; s++) {
      this.guardAmount(settlement.payouts[s]!);
      this.guardAmount(settlement.penalties[s]!);
      this.guardAmount(balances[s]! + (settlement.payouts[s]! - settlement.penalties[s]!));
    }
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
