// What differs between the two rule profiles (docs/rules.md §3 didactic4, §4 tavern5), one object
// each: the sizes, how a hand is staked and dealt and of which kind, who leads the first trick,
// how the tricks settle, and when a session ends. The state machine (game.ts) calls these and
// holds no profile test of its own.

import { RANK_SEVEN, WELI, cardRank, cardSuit } from './cards.js';
import { settleDidactic4, settleTavern5, type Settlement, type SettlementInput, type Tavern5SettlementInput } from './ledger.js';
import type { RuleSet } from './ruleset.js';
import type { StateData } from './state-data.js';
import { DECL_IN } from './sizes.js';

/** What a profile needs to know of its game, in exact units. */
export interface GameUnits {
  rules: RuleSet;
  numPlayers: number;
  unitsPerChip: number;
  anteUnits: number;
  feeUnits: number;
  bonusUnits: number;
  startingUnits: number;
  targetUnits: number;
}

/** What the state machine lends a profile for a deal. */
export interface DealContext {
  /** Moves `units` from a seat's balance into the pot, stopping the session on an overflow. */
  pay(seat: number, units: number): void;
  /** Gives `count` cards from deck `position` to each dealt-in seat from the dealer's left; returns the next position. */
  deal(position: number, count: number): number;
}

export interface ProfileRules {
  /** Cards each player holds for play (and tricks per hand). */
  readonly handSize: number;
  /** didactic4's duty to head a trick when following a plain suit (trick.ts). */
  readonly mustHead: boolean;
  /** Whether a tie for the lead brings a tie-break deal. */
  readonly tieBreaks: boolean;
  /**
   * Stakes, deals `deck` (already in `d.m.deck`), sets trump (or asks for it), kind and quotas,
   * and leaves the state at its first decision: `trump`, `discard`, or what `afterDeal` starts.
   * Returns the phase to continue with: 'trump' and 'discard' wait for a decision; 'kind' means
   * the caller goes on by the hand's kind (declarations in a Normal hand, else play).
   */
  deal(d: StateData, units: GameUnits, ctx: DealContext): 'trump' | 'discard' | 'kind';
  /** Seat that leads the first trick, given the dealer and who plays. */
  firstLeaderOf(dealer: number, playing: ArrayLike<number>, numPlayers: number): number;
  /** Settles the tricks of a played hand into `out`. */
  settle(d: StateData, units: GameUnits, out: Settlement, scratch: SettleScratch): Settlement;
  /** After the settlement is committed: what the next deal is. */
  afterHand(d: StateData, settlement: Settlement): void;
  /** The session ends early (after a regular deal) by the profile's own rule. */
  endsEarly(d: StateData, units: GameUnits, stack: (seat: number) => number): boolean;
}

/** Reusable settlement inputs, one per state (their arrays are the state's own). */
export interface SettleScratch {
  input: SettlementInput;
  tavern: Tavern5SettlementInput;
}

export function settleScratch(d: StateData): SettleScratch {
  const input = { numPlayers: d.numPlayers, dealer: 0, potBeforePlay: 0, playing: d.m.playing, tricks: d.m.tricksWon, quotas: d.m.quotas };
  return {
    input,
    tavern: {
      numPlayers: d.numPlayers,
      dealer: 0,
      potBeforePlay: 0,
      playing: d.m.playing,
      tricks: d.m.tricksWon,
      quotas: d.m.quotas,
      isMuss: false,
      anteUnits: 0,
      failPenalty: 'double-ante',
      bettler: d.m.bettler,
      bettlerBonusUnits: 0,
    },
  };
}

export const DIDACTIC4: ProfileRules = {
  handSize: 4,
  mustHead: true,
  tieBreaks: false,

  deal(d, units, ctx) {
    const n = d.numPlayers;
    const { dealtIn, quotas, faceUp, deck } = d.m;
    const dealer = d.dealer;
    dealtIn.fill(0);
    for (let s = 0; s < n; s++) dealtIn[s] = 1;
    // Contributions follow the pot at the start of the hand, whatever the indicator turns out to be.
    const funding = d.pot === 0;
    const chip = units.unitsPerChip;
    if (funding) {
      for (let s = 0; s < n; s++) ctx.pay(s, s === dealer ? 2 * chip : chip);
    } else {
      ctx.pay(dealer, chip);
    }
    let position = ctx.deal(0, 2);
    faceUp[d.numFaceUp++] = deck[position++]!;
    if (faceUp[0] === WELI) faceUp[d.numFaceUp++] = deck[position++]!; // [D-1]
    ctx.deal(position, 2);
    d.indicator = faceUp[d.numFaceUp - 1]!;
    d.trump = cardSuit(d.indicator);
    const sevenIndicator = cardRank(d.indicator) === RANK_SEVEN;
    d.kind = funding ? 'funding-muss' : sevenIndicator ? 'forced-muss' : 'normal';
    for (let s = 0; s < n; s++) quotas[s] = s === dealer && !sevenIndicator ? 2 : 1; // [D-2]
    for (let i = 0; i < d.numFaceUp; i++) d.addToHand(dealer, faceUp[i]!);
    d.currentSeat = dealer;
    return 'discard';
  },

  firstLeaderOf(dealer) {
    return dealer;
  },

  settle(d, _units, out, scratch) {
    scratch.input.dealer = d.dealer;
    scratch.input.potBeforePlay = d.potBeforePlay;
    return settleDidactic4(scratch.input, d.kind !== 'normal', out);
  },

  afterHand() {},

  endsEarly() {
    return false;
  },
};

export const TAVERN5: ProfileRules = {
  handSize: 5,
  mustHead: false,
  tieBreaks: true,

  deal(d, units, ctx) {
    const n = d.numPlayers;
    const { dealtIn, quotas, faceUp, deck } = d.m;
    const dealer = d.dealer;
    if (!d.isTieBreak) {
      dealtIn.fill(0);
      for (let s = 0; s < n; s++) dealtIn[s] = 1;
    }
    for (let s = 0; s < n; s++) if (dealtIn[s]) ctx.pay(s, units.anteUnits);
    let position = ctx.deal(0, 3);
    position = ctx.deal(position, 2);
    const turned = deck[position++]!;
    faceUp[d.numFaceUp++] = turned;
    d.talonPosition = position;
    // A session opens with a Muss deal [D-10]; then a failure or a turned 7 makes one.
    const mussDeal = d.nextDealIsMuss || (turned !== WELI && cardRank(turned) === RANK_SEVEN);
    d.kind = d.isTieBreak ? 'tie-break' : mussDeal ? 'muss' : 'normal';
    for (let s = 0; s < n; s++) if (dealtIn[s]) quotas[s] = s === dealer ? units.rules.dealerMinTricks : 1;
    if (turned === WELI) {
      d.currentSeat = dealer;
      return 'trump';
    }
    d.indicator = turned;
    d.trump = cardSuit(turned);
    return 'kind';
  },

  firstLeaderOf(dealer, playing, numPlayers) {
    // Forehand: the first player in, clockwise from the dealer's left.
    let s = dealer;
    do s = (s + 1) % numPlayers;
    while (!playing[s]);
    return s;
  },

  settle(d, units, out, scratch) {
    const t = scratch.tavern;
    t.dealer = d.dealer;
    t.potBeforePlay = d.potBeforePlay;
    t.isMuss = d.kind === 'muss';
    t.anteUnits = units.anteUnits;
    t.failPenalty = units.rules.failPenalty;
    t.bettlerBonusUnits = units.bonusUnits;
    return settleTavern5(t, out);
  },

  afterHand(d, settlement) {
    d.nextDealIsMuss = settlement.anyMissedQuota;
  },

  endsEarly(d, units, stack) {
    const { startingChips, targetChips } = units.rules;
    for (let s = 0; s < d.numPlayers; s++) {
      const seatStack = stack(s);
      if (startingChips !== null && seatStack <= 0) return true;
      if (targetChips !== null && seatStack >= units.targetUnits) return true;
    }
    return false;
  },
};

export function profileOf(rules: RuleSet): ProfileRules {
  return rules.profile === 'didactic4' ? DIDACTIC4 : TAVERN5;
}

/** Everybody dealt in plays (a Muss, a tie-break deal): marked in and playing. */
export function everybodyPlays(d: StateData): void {
  const { playing, dealtIn, declaration } = d.m;
  for (let s = 0; s < d.numPlayers; s++) {
    playing[s] = dealtIn[s]!;
    if (dealtIn[s]) declaration[s] = DECL_IN;
  }
}
