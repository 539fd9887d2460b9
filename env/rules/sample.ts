// Hidden-card sampling (in the spirit of OpenSpiel's ResampleFromInfostate): from what one seat
// knows (a SeatView), a complete state in which that seat sees exactly the same. Search agents
// (pimc) play their simulations on such states.
//
// How: every card the seat has not seen goes to a place it could be — another seat's hand, the
// didactic4 dealer's discards, a tavern5 exchange discard, the talon — such that every play
// made so far stays legal. A past play forbids a card to its player when holding that card too
// would have made the play illegal (legalPlayBits on the two cards; the trick rules' duties add
// up card by card), so the forbidden sets are exact, and a bipartite matching that fills every
// place finds an assignment whenever one exists. The deal is rebuilt from the assignment, the
// hand's actions are replayed through the rules (which check them all again), and the session's
// amounts and progress are set to what the seat sees.

import { ACTION_BETTLER, ACTION_DONE, ACTION_IN, ACTION_OUT, discardAction, playAction, trumpAction } from './actions.js';
import { NUM_CARDS } from './cards.js';
import { IllegalActionError } from './errors.js';
import type { KratzenState } from './game.js';
import { internals } from './internal.js';
import { leaderBits } from './ledger.js';
import { Mem } from './state-data.js';
import type { SeatView } from './seat-view.js';
import { DECL_IN, DECL_NONE, DECL_OUT, MAX_SEATS, MAX_TRICKS, nextSeatWith } from './sizes.js';
import { legalPlayBits, trickWinnerIndex } from './trick.js';

type Random = () => number;

function shuffle<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A place for one hidden card: whose hand or discards (or the talon), and who may not get which card. */
interface Slot {
  seat: number;
  kind: 'hand' | 'discard';
}

/** The plays of the hand so far, in order, rebuilt from who played what in which trick. */
function playSequence(v: SeatView): { seat: number; card: number }[] | null {
  const n = v.numPlayers;
  const weliHighest = v.rules.weliRank === 'highest';
  const next = (s: number) => nextSeatWith(v.playing, 0, s, n);
  const plays: { seat: number; card: number }[] = [];
  if (v.phase !== 'play') return plays;
  // A view decoded from a client's row may show the play with no seat in it: no deal fits, and
  // the loops over the seats in play would never end.
  if (v.numPlaying === 0) return null;
  let leader = v.game.profile.firstLeaderOf(v.dealer, v.playing, n);
  for (let t = 0; t <= Math.min(v.trickNumber, MAX_TRICKS - 1); t++) {
    const cards: number[] = [];
    const seats: number[] = [];
    let seat = leader;
    for (let k = 0; k < v.numPlaying; k++) {
      const card = v.playedCards[t * MAX_SEATS + seat]!;
      if (card < 0) break;
      cards.push(card);
      seats.push(seat);
      plays.push({ seat, card });
      seat = next(seat);
    }
    if (t < v.trickNumber) {
      if (cards.length !== v.numPlaying) return null;
      leader = seats[trickWinnerIndex(cards, cards.length, v.trump, weliHighest)]!;
    } else if (seat !== v.toAct && cards.length < v.numPlaying) return null;
  }
  return plays;
}

/** forbidden[s] has bit c set when seat s cannot hold card c now (a play of its would have been illegal). */
function forbiddenCards(v: SeatView, plays: { seat: number; card: number }[]): bigint[] {
  const forbidden = Array.from({ length: v.numPlayers }, () => 0n);
  const weliHighest = v.rules.weliRank === 'highest';
  const mustHead = v.game.profile.mustHead;
  const trick: number[] = [];
  const pair = new Int8Array(2);
  for (const { seat, card } of plays) {
    if (trick.length === v.numPlaying) trick.length = 0;
    if (trick.length > 0) {
      for (let c = 0; c < NUM_CARDS; c++) {
        if (c === card) continue;
        pair[0] = card;
        pair[1] = c;
        const bits = legalPlayBits(pair, 0, 2, trick, trick.length, v.trump, weliHighest, mustHead);
        if (!(bits & 1)) forbidden[seat]! |= 1n << BigInt(c);
      }
    }
    trick.push(card);
  }
  return forbidden;
}

/**
 * Fills every slot with a card of `cards` allowed there, each face-up card (`required`) placed
 * too; other cards may stay out (the talon). Kuhn's augmenting paths over shuffled orders: a
 * random assignment, found whenever one exists. Returns the card of each slot, or null.
 */
function assign(slots: Slot[], cards: number[], allowed: (slot: Slot, card: number) => boolean, required: Set<number>, random: Random): number[] | null {
  const cardOfSlot = new Array<number>(slots.length).fill(-1);
  const slotOfCard = new Map<number, number>();
  const order = shuffle(cards.slice(), random);
  const tryPlace = (slot: number, seen: Set<number>): boolean => {
    for (const card of order) {
      if (seen.has(card) || !allowed(slots[slot]!, card)) continue;
      seen.add(card);
      const holder = slotOfCard.get(card);
      if (holder === undefined || tryPlace(holder, seen)) {
        cardOfSlot[slot] = card;
        slotOfCard.set(card, slot);
        return true;
      }
    }
    return false;
  };
  for (const slot of shuffle(slots.map((_, i) => i), random)) if (!tryPlace(slot, new Set())) return null;
  // Face-up cards must be placed: move them in along alternating paths that free a slot holding
  // a card that may stay out. The slots are tried in random order: in index order a didactic4
  // dealer's face-up card went to its hand (listed before its discard) more often than deals
  // keep it there.
  const slotOrder = required.size > 0 ? shuffle(slots.map((_, i) => i), random) : [];
  for (const card of required) {
    if (slotOfCard.has(card)) continue;
    const visited = new Set<number>();
    const free = (c: number): boolean => {
      for (const slot of slotOrder) {
        if (visited.has(slot) || !allowed(slots[slot]!, c)) continue;
        visited.add(slot);
        const displaced = cardOfSlot[slot]!;
        if (!required.has(displaced) || free(displaced)) {
          if (!required.has(displaced)) slotOfCard.delete(displaced);
          cardOfSlot[slot] = c;
          slotOfCard.set(c, slot);
          return true;
        }
      }
      return false;
    };
    if (!free(card)) return null;
  }
  return cardOfSlot;
}

/**
 * A state consistent with everything `v.seat` knows, with that seat to act as in `v` (null when
 * there is no decision: phases `deal` and `over`, or no consistent deal, which cannot happen
 * for a view of a real state). Deterministic for a given `random`.
 */
export function sampleState(v: SeatView, random: Random, attempts = 20): KratzenState | null {
  if (typeof random !== 'function') throw new TypeError('random must be a function returning numbers in [0, 1)');
  if (v.phase === 'deal' || v.phase === 'over') return null;
  // A generator's draws outside [0, 1) picked past the end of the candidates.
  const draw: Random = () => {
    const r = random();
    if (!(r >= 0 && r < 1)) throw new RangeError(`random must return numbers in [0, 1), returned ${r}`);
    return r;
  };
  const plays = playSequence(v);
  if (!plays) return null;
  const forbidden = forbiddenCards(v, plays);
  for (let attempt = 0; attempt < attempts; attempt++) {
    const state = trySample(v, plays, forbidden, draw);
    if (state) return state;
  }
  return null;
}

function trySample(v: SeatView, plays: { seat: number; card: number }[], forbidden: bigint[], random: Random): KratzenState | null {
  const n = v.numPlayers;
  const me = v.seat;
  const game = v.game;
  const profile = game.profile;
  const handSize = game.handSize;
  const faceUp = Array.from({ length: v.numFaceUp }, (_, i) => v.faceUp[i]!);
  const hand = Array.from(v.hand.subarray(0, v.handLength));
  const ownDiscards = Array.from(v.ownDiscards.subarray(0, v.numOwnDiscards));
  const played: number[][] = Array.from({ length: n }, () => []);
  for (const { seat, card } of plays) played[seat]!.push(card);
  const seen = new Set<number>([...hand, ...ownDiscards, ...faceUp, ...plays.map((p) => p.card)]);
  const pool = Array.from({ length: NUM_CARDS }, (_, c) => c).filter((c) => !seen.has(c));
  const dealerDiscarding = profile.dealerTakesFaceUp && v.phase === 'discard';

  // The places of the hidden cards.
  const slots: Slot[] = [];
  for (let s = 0; s < n; s++) {
    if (s === me || !v.dealtIn[s]) continue;
    const held = dealerDiscarding && s === v.dealer ? handSize + v.numFaceUp : handSize - played[s]!.length;
    for (let k = 0; k < held; k++) slots.push({ seat: s, kind: 'hand' });
    const discards = (profile.dealerTakesFaceUp && s === v.dealer && !dealerDiscarding ? v.numFaceUp : 0) + v.exchanged[s]!;
    for (let k = 0; k < discards; k++) slots.push({ seat: s, kind: 'discard' });
  }
  // didactic4: the face-up cards are the dealer's, in its hand or its discards.
  const required = new Set<number>(profile.dealerTakesFaceUp && v.dealer !== me ? faceUp.filter((c) => !played[v.dealer]!.includes(c)) : []);
  const allowed = (slot: Slot, card: number) => {
    if (required.has(card) && slot.seat !== v.dealer) return false;
    return slot.kind === 'discard' || !(forbidden[slot.seat]! & (1n << BigInt(card)));
  };
  const cards = assign(slots, [...pool, ...required], allowed, required, random);
  if (!cards) return null;
  const held: number[][] = Array.from({ length: n }, (_, s) => (s === me ? hand.slice() : []));
  const discarded: number[][] = Array.from({ length: n }, (_, s) => (s === me ? ownDiscards.slice() : []));
  slots.forEach((slot, i) => (slot.kind === 'hand' ? held : discarded)[slot.seat]!.push(cards[i]!));
  const talon = shuffle(pool.filter((c) => !cards.includes(c)), random);

  // The deal: each seat's cards as dealt; tavern5 exchanges drew some of the current ones.
  const drawn: number[][] = Array.from({ length: n }, () => []);
  for (let s = 0; s < n; s++) {
    const count = v.exchanged[s]!;
    if (count > 0) drawn[s] = shuffle([...held[s]!, ...played[s]!], random).slice(0, count);
  }
  const dealt: number[][] = [];
  for (let s = 0; s < n; s++) {
    if (!v.dealtIn[s]) {
      dealt[s] = [];
      continue;
    }
    let own = [...held[s]!, ...played[s]!, ...discarded[s]!].filter((c) => !drawn[s]!.includes(c));
    if (profile.dealerTakesFaceUp && s === v.dealer) own = own.filter((c) => !faceUp.includes(c));
    if (own.length !== handSize) return null;
    dealt[s] = shuffle(own, random);
  }
  const order: number[] = [];
  for (let k = 1; k <= n; k++) if (v.dealtIn[(v.dealer + k) % n]) order.push((v.dealer + k) % n);
  // Exchanges draw from the top of the talon, in the order the seats exchange.
  const exchangeOrder = [...order.filter((s) => s !== v.dealer && v.playing[s]), v.dealer];
  const deck = profile.stackDeck(order, dealt, faceUp, [...exchangeOrder.flatMap((s) => drawn[s]!), ...talon]);
  if (deck.length !== NUM_CARDS) return null;

  // The session around the hand: built unseeded, it waits for this deck; then the rules deal
  // it (stakes included) and check every action.
  const state = game.newState({ pauseBetweenHands: true, start: { dealer: v.dealer, pot: v.kind === 'funding-muss' ? 0 : game.unitsPerChip, muss: profile.opensWithMuss ? v.kind === 'muss' : undefined } });
  const d = internals(state);
  d.handsPlayed = v.handsPlayed;
  d.handIndex = v.handsPlayed + (v.isTieBreak ? 0 : -1);
  if (v.isTieBreak) {
    d.isTieBreak = true;
    for (let s = 0; s < n; s++) d.u8[Mem.dealtIn + s] = v.dealtIn[s]!;
  }
  if (d.phase !== 'deal') return null;
  state.dealNextHand(deck);
  try {
    if (!replayHand(state, v, discarded, plays)) return null;
  } catch (e) {
    if (e instanceof IllegalActionError) return null;
    throw e;
  }
  // The amounts the seat sees: the stakes moved them alike, so one shift per amount sets them.
  const shift = v.pot - d.pot;
  d.pot += shift;
  if (state.phase === 'play') d.potBeforePlay += shift;
  if (v.isTieBreak) {
    const tied = tiedSeatsOf(v, d.f64);
    if (tied === null) return null;
    d.tiedSeats = tied;
  }
  for (let s = 0; s < n; s++) d.f64[Mem.balances + s] = v.balances[s]!;
  if (d.potBeforePlay !== v.potBeforePlay) return null;
  return state;
}

/**
 * The seats tied for the lead when the tie-break deal of `v` began [D-11], as the bits of
 * `tiedSeats`, or null when the view cannot be such a deal. Who tied is public: the leaders of
 * the balances before the deal, which are the view's less what this hand has moved so far, and
 * the replay (its session begun at 0) has moved `moved` alike. They are the seats dealt in but
 * the dealer, and the dealer too when it tied (the next dealer is dealt in either way).
 */
function tiedSeatsOf(v: SeatView, moved: Float64Array): number | null {
  const n = v.numPlayers;
  const before = Float64Array.from({ length: n }, (_, s) => v.balances[s]! - moved[Mem.balances + s]!);
  const tied = leaderBits(before, 0, n);
  for (let s = 0; s < n; s++) {
    if (tied & (1 << s) ? !v.dealtIn[s] : v.dealtIn[s] && s !== v.dealer) return null;
  }
  return tied;
}

/**
 * Replays the hand's decisions on `state`, just dealt from the sampled deck, up to where the view
 * stands. The state says whose turn it is and what is decided (a named trump, the didactic4
 * dealer's discards, declarations, exchanges, plays); the view and the sampled discards say what
 * was chosen. A discard in progress of another seat is not replayed: the view does not show it.
 * False when the view's position is not reached; an illegal action throws IllegalActionError.
 */
function replayHand(state: KratzenState, v: SeatView, discarded: number[][], plays: { seat: number; card: number }[]): boolean {
  const discardsMade = new Array<number>(v.numPlayers).fill(0);
  let played = 0;
  for (;;) {
    const seat = state.currentSeat;
    const phase = state.phase;
    const atView = phase === v.phase && seat === v.toAct;
    let action: number;
    if (phase === 'trump') {
      if (atView) break;
      action = trumpAction(v.trump);
    } else if (phase === 'discard' || phase === 'exchange') {
      if (atView && seat !== v.seat) break;
      const cards = discarded[seat]!;
      if (discardsMade[seat]! < cards.length) action = discardAction(cards[discardsMade[seat]!++]!);
      else if (atView) break;
      else if (phase === 'exchange') action = ACTION_DONE;
      else return false;
    } else if (phase === 'declare') {
      const d = v.declaration[seat]!;
      if (d === DECL_NONE) {
        if (atView) break;
        return false;
      }
      action = d === DECL_IN ? ACTION_IN : d === DECL_OUT ? ACTION_OUT : ACTION_BETTLER;
    } else if (phase === 'play' && played < plays.length) {
      const play = plays[played++]!;
      if (play.seat !== seat) return false;
      action = playAction(play.card);
    } else break;
    state.applyAs(seat, action);
  }
  // Where the view stands, and with what it shows decided: a view (a client's row) can name a
  // seat to act that the decisions it shows have passed.
  if (state.phase !== v.phase || state.currentSeat !== v.toAct) return false;
  for (let s = 0; s < v.numPlayers; s++) {
    if (state.declaration[s] !== v.declaration[s] || state.exchanged[s] !== v.exchanged[s]) return false;
  }
  return true;
}
