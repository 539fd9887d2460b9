// Trick play (docs/rules.md §2): trumps, card strength, the trick winner and which cards may be
// played. Pure functions over small typed arrays; they allocate nothing.

import { WELI, cardRank, cardSuit } from './cards.js';

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

/** Index (into `cards`) of the card that wins the trick so far. */
export function trickWinnerIndex(cards: ArrayLike<number>, length: number, trump: number, weliHighest: boolean): number {
  const led = effectiveSuit(cards[0]!, trump);
  let best = 0;
  let bestValue = -1;
  for (let i = 0; i < length; i++) {
    const v = trickValue(cards[i]!, led, trump, weliHighest);
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/**
 * Which cards of a hand may be played, as a bit set over hand positions (bit i = hand[start+i]).
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
): number {
  const all = (1 << handLength) - 1;
  if (trickLength === 0) return all;
  const led = effectiveSuit(trick[0]!, trump);
  let best = 0;
  for (let i = 0; i < trickLength; i++) {
    const v = trickValue(trick[i]!, led, trump, weliHighest);
    if (v > best) best = v;
  }
  let follow = 0;
  let beatFollow = 0;
  let trumps = 0;
  let beatTrumps = 0;
  for (let i = 0; i < handLength; i++) {
    const card = hand[start + i]!;
    const bit = 1 << i;
    const v = trickValue(card, led, trump, weliHighest);
    const cardIsTrump = isTrump(card, trump);
    if (effectiveSuit(card, trump) === led) {
      follow |= bit;
      if (v > best) beatFollow |= bit;
    }
    if (cardIsTrump) {
      trumps |= bit;
      if (v > best) beatTrumps |= bit;
    }
  }
  // A trump winner on a plain lead cannot be beaten by the led suit, so beatFollow is empty
  // there and any card of the led suit stays legal (docs/rules.md section 2, step 2). Following
  // a trump lead is overtrumping: beat the highest trump when able, in both profiles [D-7].
  if (follow !== 0) return (mustHead || led === TRUMP_SUIT) && beatFollow !== 0 ? beatFollow : follow;
  if (trumps !== 0) return beatTrumps !== 0 ? beatTrumps : trumps;
  return all;
}
