// The one discrete action space, shared by every rule set, and its text form used in records.
//
// | id        | action          | text              | when                                             |
// |-----------|-----------------|-------------------|--------------------------------------------------|
// | 0 .. 32   | play card id    | `play <card>`     | trick play                                       |
// | 33 .. 65  | discard card id | `discard <card>`  | didactic4 dealer's discard; tavern5 exchange     |
// | 66        | in              | `in`              | declarations                                     |
// | 67        | out             | `out`             | declarations                                     |
// | 68        | bettler         | `bettler`         | tavern5 declarations, variant `bettler`          |
// | 69 .. 72  | trump suit c..d | `trump <c|s|h|d>` | tavern5 dealer after a turned Weli               |
// | 73        | done            | `done`            | tavern5 exchange, variant `exchange`             |
//
// Card ids are the canonical ids of cards.ts. The space is the same for every rule set so that
// policies and masks carry over between profiles; actions a rule set never allows stay masked.

import { NUM_CARDS, cardToken, parseCard, SUIT_LETTERS, suitIndex } from './cards.js';

export const ACTION_PLAY = 0;
export const ACTION_DISCARD = NUM_CARDS; // 33
export const ACTION_IN = 2 * NUM_CARDS; // 66
export const ACTION_OUT = ACTION_IN + 1; // 67
export const ACTION_BETTLER = ACTION_IN + 2; // 68
export const ACTION_TRUMP = ACTION_IN + 3; // 69..72
export const ACTION_DONE = ACTION_TRUMP + 4; // 73
export const NUM_ACTIONS = ACTION_DONE + 1; // 74

export function playAction(card: number): number {
  return ACTION_PLAY + card;
}

export function discardAction(card: number): number {
  return ACTION_DISCARD + card;
}

export function trumpAction(suit: number): number {
  return ACTION_TRUMP + suit;
}

/** The card a play action plays; -1 for any other action (or no action id at all). */
export function playedCard(action: number): number {
  return Number.isInteger(action) && action >= ACTION_PLAY && action < ACTION_DISCARD ? action - ACTION_PLAY : -1;
}

/** The card a discard action lays away; -1 for any other action (or no action id at all). */
export function discardedCard(action: number): number {
  return Number.isInteger(action) && action >= ACTION_DISCARD && action < ACTION_IN ? action - ACTION_DISCARD : -1;
}

export function actionToString(action: number): string {
  if (!Number.isInteger(action) || action < 0 || action >= NUM_ACTIONS) return `#${action}`;
  if (action < ACTION_DISCARD) return `play ${cardToken(action - ACTION_PLAY)}`;
  if (action < ACTION_IN) return `discard ${cardToken(action - ACTION_DISCARD)}`;
  if (action === ACTION_IN) return 'in';
  if (action === ACTION_OUT) return 'out';
  if (action === ACTION_BETTLER) return 'bettler';
  if (action < ACTION_DONE) return `trump ${SUIT_LETTERS[action - ACTION_TRUMP]}`;
  return 'done';
}

/** What another seat sees of a discard: that one was made, not its card. */
export const HIDDEN_DISCARD_TEXT = 'discard ?';

/**
 * Whether `viewer` may not see the card of `seat`'s `action`: another seat's discard, seen only
 * by the seat that made it (docs/rules.md §3, §4, §8). Every other action is public.
 */
export function cardHiddenFrom(viewer: number, seat: number, action: number): boolean {
  return discardedCard(action) >= 0 && seat !== viewer;
}

/** `seat`'s action as `viewer` sees it: its text, or HIDDEN_DISCARD_TEXT when cardHiddenFrom. */
export function actionSeenBy(viewer: number, seat: number, action: number): string {
  return cardHiddenFrom(viewer, seat, action) ? HIDDEN_DISCARD_TEXT : actionToString(action);
}

/** Parses a record's action text (exactly one space between words); returns -1 when malformed. */
export function parseAction(text: string): number {
  switch (text) {
    case 'in':
      return ACTION_IN;
    case 'out':
      return ACTION_OUT;
    case 'bettler':
      return ACTION_BETTLER;
    case 'done':
      return ACTION_DONE;
  }
  const space = text.indexOf(' ');
  if (space < 0 || text.indexOf(' ', space + 1) >= 0) return -1;
  const verb = text.slice(0, space);
  const arg = text.slice(space + 1);
  if (verb === 'play' || verb === 'discard') {
    const card = parseCard(arg);
    if (card < 0) return -1;
    return verb === 'play' ? playAction(card) : discardAction(card);
  }
  if (verb === 'trump') {
    const suit = suitIndex(arg);
    return suit < 0 ? -1 : trumpAction(suit);
  }
  return -1;
}
