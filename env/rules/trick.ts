// Trick play (docs/rules.md §2): trumps, card strength, the trick winner and which cards may be
// played. Pure functions over small typed arrays; they allocate nothing.

import { NUM_CARDS, WELI, cardRank, cardSuit } from './cards.js';

/** The pseudo-suit of every trump, the Weli included, when comparing led suits. */
export const TRUMP_SUIT = 4;

export function isTrump(card: number, trump: number): boolean {
  return card === WELI || cardSuit(card) === trump;
}

/** The suit a card follows: its own, or TRUMP_SUIT for trumps (the Weli never follows Schellen). */
export function effectiveSuit(card: number, trump: number): number {
  return card === WELI || cardSuit(card) === trump ? TRUMP_SUIT : cardSuit(card);
}

/**
 * How strongly a card stands in a trick led in `ledSuit`: 0 when it can never win (another
 * plain suit), 1..8 for the led plain suit (7..A), above 100 for trumps. Trump order is
 * A, Weli, K, Q, J, T, 9, 8, 7, or Weli above A under the Salzburg rule.
 */
export function trickValue(card: number, ledSuit: number, trump: number, weliHighest: boolean): number {
  if (card === WELI) return weliHighest ? 120 : 115;
  const rankValue = 8 - cardRank(card);
  if (cardSuit(card) === trump) return 100 + 2 * rankValue; // A=116, K=114: the Weli fits between
  return cardSuit(card) === ledSuit ? rankValue : 0;
}

// The trick rules above as tables, derived from them once: per trump (-1 for none yet, 0..3),
// each card's effective suit, and per Weli rule and trump its strength against the led suit
// when it follows that suit or is a trump (trickValue). Legal plays and trick winners are asked
// for at every card played; two loads per card there cost less than the branches. The lookup
// stays written out in both functions: a shared helper measured 3-4% slower random play.
const TRUMP_ROWS = 5;
const EFFECTIVE = new Uint8Array(TRUMP_ROWS * NUM_CARDS);
const STRENGTH = new Uint8Array(2 * TRUMP_ROWS * NUM_CARDS);
for (let trump = -1; trump < 4; trump++) {
  for (let card = 0; card < NUM_CARDS; card++) {
    const suit = effectiveSuit(card, trump);
    EFFECTIVE[(trump + 1) * NUM_CARDS + card] = suit;
    for (const weliHighest of [false, true]) {
      STRENGTH[((weliHighest ? TRUMP_ROWS : 0) + trump + 1) * NUM_CARDS + card] = trickValue(card, suit, trump, weliHighest);
    }
  }
}

/** Index (counted from `start`) of the card of `cards[start .. start + length)` that wins the trick so far. */
export function trickWinnerIndex(cards: ArrayLike<number>, length: number, trump: number, weliHighest: boolean, start = 0): number {
  const suits = (trump + 1) * NUM_CARDS;
  const strengths = ((weliHighest ? TRUMP_ROWS : 0) + trump + 1) * NUM_CARDS;
  const led = EFFECTIVE[suits + cards[start]!]!;
  let best = 0;
  let bestValue = -1;
  for (let i = 0; i < length; i++) {
    const card = cards[start + i]!;
    const suit = EFFECTIVE[suits + card]!;
    const v = suit === led || suit === TRUMP_SUIT ? STRENGTH[strengths + card]! : 0;
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/**
 * Which cards of a hand may be played, as a bit set over hand positions (bit i = hand[start+i]);
 * the trick so far is `trick[trickStart .. trickStart + trickLength)`.
 * `mustHead` is the didactic4 duty to beat the current winner when following a plain suit. The
 * overtrump duty applies in both profiles, to a player void in the led suit and to one following
 * a trump lead [D-7] (docs/rules.md section 2).
 */
export function legalPlayBits(
  hand: ArrayLike<number>,
  start: number,
  handLength: number,
  trick: ArrayLike<number>,
  trickLength: number,
  trump: number,
  weliHighest: boolean,
  mustHead: boolean,
  trickStart = 0,
): number {
  const all = (1 << handLength) - 1;
  if (trickLength === 0) return all;
  const suits = (trump + 1) * NUM_CARDS;
  const strengths = ((weliHighest ? TRUMP_ROWS : 0) + trump + 1) * NUM_CARDS;
  const led = EFFECTIVE[suits + trick[trickStart]!]!;
  let best = 0;
  for (let i = 0; i < trickLength; i++) {
    const card = trick[trickStart + i]!;
    const suit = EFFECTIVE[suits + card]!;
    const v = suit === led || suit === TRUMP_SUIT ? STRENGTH[strengths + card]! : 0;
    if (v > best) best = v;
  }
  let follow = 0;
  let beatFollow = 0;
  let trumps = 0;
  let beatTrumps = 0;
  for (let i = 0; i < handLength; i++) {
    const card = hand[start + i]!;
    const bit = 1 << i;
    const suit = EFFECTIVE[suits + card]!;
    // Read only for cards of the led suit or trumps, whose trickValue is their strength.
    const beats = STRENGTH[strengths + card]! > best;
    if (suit === led) {
      follow |= bit;
      if (beats) beatFollow |= bit;
    }
    if (suit === TRUMP_SUIT) {
      trumps |= bit;
      if (beats) beatTrumps |= bit;
    }
  }
  // A trump winner on a plain lead cannot be beaten by the led suit, so beatFollow is empty
  // there and any card of the led suit stays legal (docs/rules.md section 2, step 2). Following
  // a trump lead is overtrumping: beat the highest trump when able, in both profiles [D-7].
  if (follow !== 0) return (mustHead || led === TRUMP_SUIT) && beatFollow !== 0 ? beatFollow : follow;
  if (trumps !== 0) return beatTrumps !== 0 ? beatTrumps : trumps;
  return all;
}
