// What differs between the two rule profiles (docs/rules.md §3 didactic4, §4 tavern5), one object
// each: the sizes, how a hand is staked and dealt and of which kind, who leads the first trick,
// how the tricks settle, and when a session ends. The state machine (game.ts), records and the
// hidden-card sampler ask these rather than the profile's name.

import { RANK_SEVEN, WELI, cardRank, cardSuit } from './cards.js';
import { settleDidactic4, settleTavern5, type Settlement, type Tavern5SettlementInput } from './ledger.js';
import type { RuleSet } from './ruleset.js';
import { Mem, copySeats, type StateData } from './state-data.js';
import { DECL_IN, MAX_SEATS } from './sizes.js';
import type { HandKind } from './phases.js';

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
   * Cards each dealt-in seat gets in the deal's first and second round of packets (the face-up
   * card(s) come between them in didactic4, after them in tavern5); stackDeck stacks the same.
   */
  readonly packets: readonly [first: number, second: number];
  /** Whether the pot holds whole chips only (didactic4's stakes are whole chips): a session's starting pot must too. */
  readonly wholeChipPot: boolean;
  /**
   * Whether a session opens with a Muss deal [D-10]; only then may a session's start (and a
   * record's `start.muss`) say whether its first deal is one.
   */
  readonly opensWithMuss: boolean;
  /** Whether the cards left after the deal are a talon that exchanged cards are drawn from (tavern5). */
  readonly hasTalon: boolean;
  /** Whether the dealer takes the face-up cards into its hand and discards as many (didactic4). */
  readonly dealerTakesFaceUp: boolean;
  /**
   * Whether tricks won in a hand of `kind` are paid from the pot (tavern5: every kind, once the
   * quota is made; didactic4: only a normal hand, none in its muss). Agents ask it (the heuristic).
   */
  tricksPay(kind: HandKind): boolean;
  /**
   * Stakes, deals the deck (already in the state's block at Mem.deck), sets trump (or asks for it), kind and quotas,
   * and leaves the state at its first decision: `trump`, `discard`, or the one the game's
   * `continueByKind` starts.
   * Returns the phase to continue with: 'trump' and 'discard' wait for a decision; 'kind' means
   * the caller goes on by the hand's kind (declarations in a Normal hand, else play).
   */
  deal(d: StateData, units: GameUnits, ctx: DealContext): 'trump' | 'discard' | 'kind';
  /**
   * The deck that `deal` deals as given: each seat of `order` (the dealt-in seats in dealing
   * order) gets `dealt[seat]` (first packet first), `faceUp` is turned up, and `rest` lies below,
   * top first (the talon, or the undealt cards). The sampler stacks its decks with it.
   */
  stackDeck(order: readonly number[], dealt: readonly (readonly number[])[], faceUp: readonly number[], rest: readonly number[]): number[];
  /** Seat that leads the first trick, given the dealer and who plays (`playing[start + seat]`). */
  firstLeaderOf(dealer: number, playing: ArrayLike<number>, numPlayers: number, start?: number): number;
  /** Settles the tricks of a played hand into `out`. */
  settle(d: StateData, units: GameUnits, out: Settlement): Settlement;
  /** After the settlement is committed: what the next deal is. */
  afterHand(d: StateData, settlement: Settlement): void;
  /** The session ends early (after a regular deal) by the profile's own rule. */
  endsEarly(d: StateData, units: GameUnits, stacks: { stack(seat: number): number }): boolean;
}

/**
 * The settlement's input, one for all states (a settlement runs to its end before another
 * starts): the per-seat arrays are copied out of the settling state's block.
 */
const seatPlaying = new Uint8Array(MAX_SEATS);
const seatTricks = new Uint8Array(MAX_SEATS);
const seatQuotas = new Uint8Array(MAX_SEATS);
const seatBettler = new Uint8Array(MAX_SEATS);
const settleInput: Tavern5SettlementInput = {
  numPlayers: 0,
  dealer: 0,
  potBeforePlay: 0,
  playing: seatPlaying,
  tricks: seatTricks,
  quotas: seatQuotas,
  isMuss: false,
  anteUnits: 0,
  failPenalty: 'double-ante',
  bettler: seatBettler,
  bettlerBonusUnits: 0,
};

/** `settleInput` filled with `d`'s hand (the tavern5 fields are set by its profile). */
function settleInputOf(d: StateData): Tavern5SettlementInput {
  const input = settleInput;
  copySeats(d.u8, Mem.playing, seatPlaying);
  copySeats(d.u8, Mem.tricksWon, seatTricks);
  copySeats(d.u8, Mem.quotas, seatQuotas);
  copySeats(d.u8, Mem.bettler, seatBettler);
  input.numPlayers = d.numPlayers;
  input.dealer = d.dealer;
  input.potBeforePlay = d.potBeforePlay;
  return input;
}

export const DIDACTIC4: Readonly<ProfileRules> = Object.freeze<ProfileRules>({
  handSize: 4,
  mustHead: true,
  tieBreaks: false,
  packets: [2, 2],
  wholeChipPot: true,
  opensWithMuss: false,
  hasTalon: false,
  dealerTakesFaceUp: true,

  tricksPay(kind) {
    return kind === 'normal';
  },

  deal(d, units, ctx) {
    const n = d.numPlayers;
    const { u8, i8 } = d;
    const dealer = d.dealer;
    d.dealInEverybody();
    // Contributions follow the pot at the start of the hand, whatever the indicator turns out to be.
    const funding = d.pot === 0;
    const chip = units.unitsPerChip;
    if (funding) {
      for (let s = 0; s < n; s++) ctx.pay(s, s === dealer ? 2 * chip : chip);
    } else {
      ctx.pay(dealer, chip);
    }
    let position = ctx.deal(0, DIDACTIC4.packets[0]);
    i8[Mem.faceUp + d.numFaceUp++] = i8[Mem.deck + position++]!;
    if (i8[Mem.faceUp] === WELI) i8[Mem.faceUp + d.numFaceUp++] = i8[Mem.deck + position++]!; // [D-1]
    ctx.deal(position, DIDACTIC4.packets[1]);
    d.indicator = i8[Mem.faceUp + d.numFaceUp - 1]!;
    d.trump = cardSuit(d.indicator);
    const sevenIndicator = cardRank(d.indicator) === RANK_SEVEN;
    d.kind = funding ? 'funding-muss' : sevenIndicator ? 'forced-muss' : 'normal';
    for (let s = 0; s < n; s++) u8[Mem.quotas + s] = s === dealer && !sevenIndicator ? 2 : 1; // [D-2]
    for (let i = 0; i < d.numFaceUp; i++) d.addToHand(dealer, i8[Mem.faceUp + i]!);
    d.currentSeat = dealer;
    return 'discard';
  },

  stackDeck(order, dealt, faceUp, rest) {
    // The face-up card (and the one after a turned Weli) comes between the packets.
    const [first, second] = packetsOf(order, dealt, DIDACTIC4.packets[0]);
    return [...first, ...faceUp, ...second, ...rest];
  },

  firstLeaderOf(dealer) {
    return dealer;
  },

  settle(d, _units, out) {
    return settleDidactic4(settleInputOf(d), !DIDACTIC4.tricksPay(d.kind), out);
  },

  afterHand() {},

  endsEarly() {
    return false;
  },
});

export const TAVERN5: Readonly<ProfileRules> = Object.freeze<ProfileRules>({
  handSize: 5,
  mustHead: false,
  tieBreaks: true,
  packets: [3, 2],
  wholeChipPot: false,
  opensWithMuss: true,
  hasTalon: true,
  dealerTakesFaceUp: false,

  tricksPay() {
    return true;
  },

  deal(d, units, ctx) {
    const n = d.numPlayers;
    const { u8, i8 } = d;
    const dealer = d.dealer;
    if (!d.isTieBreak) {
      d.dealInEverybody();
    }
    for (let s = 0; s < n; s++) if (u8[Mem.dealtIn + s]) ctx.pay(s, units.anteUnits);
    let position = ctx.deal(0, TAVERN5.packets[0]);
    position = ctx.deal(position, TAVERN5.packets[1]);
    const turned = i8[Mem.deck + position++]!;
    i8[Mem.faceUp + d.numFaceUp++] = turned;
    d.talonPosition = position;
    // A session opens with a Muss deal [D-10]; then a failure or a turned 7 makes one.
    const mussDeal = d.nextDealIsMuss || (turned !== WELI && cardRank(turned) === RANK_SEVEN);
    d.kind = d.isTieBreak ? 'tie-break' : mussDeal ? 'muss' : 'normal';
    for (let s = 0; s < n; s++) if (u8[Mem.dealtIn + s]) u8[Mem.quotas + s] = s === dealer ? units.rules.dealerMinTricks : 1;
    if (turned === WELI) {
      d.currentSeat = dealer;
      return 'trump';
    }
    d.indicator = turned;
    d.trump = cardSuit(turned);
    return 'kind';
  },

  stackDeck(order, dealt, faceUp, rest) {
    // Both packets, then the card turned up; exchanges draw from the talon below it.
    const [first, second] = packetsOf(order, dealt, TAVERN5.packets[0]);
    return [...first, ...second, ...faceUp, ...rest];
  },

  firstLeaderOf(dealer, playing, numPlayers, start = 0) {
    // Forehand: the first player in, clockwise from the dealer's left.
    for (let k = 1; k <= numPlayers; k++) {
      const s = (dealer + k) % numPlayers;
      if (playing[start + s]) return s;
    }
    throw new RangeError('firstLeaderOf: no seat is playing');
  },

  settle(d, units, out) {
    const t = settleInputOf(d);
    t.isMuss = d.kind === 'muss';
    t.anteUnits = units.anteUnits;
    t.failPenalty = units.rules.failPenalty;
    t.bettlerBonusUnits = units.bonusUnits;
    return settleTavern5(t, out);
  },

  afterHand(d, settlement) {
    d.nextDealIsMuss = settlement.anyMissedQuota;
  },

  endsEarly(d, units, stacks) {
    const { startingChips, targetChips } = units.rules;
    for (let s = 0; s < d.numPlayers; s++) {
      const seatStack = stacks.stack(s);
      if (startingChips !== null && seatStack <= 0) return true;
      if (targetChips !== null && seatStack >= units.targetUnits) return true;
    }
    return false;
  },
});

export function profileOf(rules: RuleSet): Readonly<ProfileRules> {
  return rules.profile === 'didactic4' ? DIDACTIC4 : TAVERN5;
}

/** Everybody dealt in plays (a Muss, a tie-break deal): marked in and playing. */
export function everybodyPlays(d: StateData): void {
  const u8 = d.u8;
  for (let s = 0; s < d.numPlayers; s++) {
    u8[Mem.playing + s] = u8[Mem.dealtIn + s]!;
    if (u8[Mem.dealtIn + s]) u8[Mem.declaration + s] = DECL_IN;
  }
}

/** The cards of each round of packets in dealing order: every seat of `order` its first `firstPacket` cards, then the rest. */
function packetsOf(order: readonly number[], dealt: readonly (readonly number[])[], firstPacket: number): [number[], number[]] {
  return [order.flatMap((s) => dealt[s]!.slice(0, firstPacket)), order.flatMap((s) => dealt[s]!.slice(firstPacket))];
}
