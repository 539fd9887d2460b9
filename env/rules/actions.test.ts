// What a seat sees of another's action (docs/rules.md §3, §4, §8): only discards hide their card.
import { describe, expect, it } from 'vitest';
import {
  ACTION_BETTLER,
  ACTION_DISCARD,
  ACTION_DONE,
  ACTION_IN,
  ACTION_OUT,
  HIDDEN_DISCARD_TEXT,
  NUM_ACTIONS,
  NUM_CARDS,
  actionSeenBy,
  discardedCard,
  playedCard,
  actionToString,
  cardHiddenFrom,
  discardAction,
  playAction,
  trumpAction,
} from './index.js';

describe('actionSeenBy', () => {
  it('hides the card of every discard from every other seat, and only that', () => {
    for (let action = 0; action < NUM_ACTIONS; action++) {
      const isDiscard = action >= ACTION_DISCARD && action < ACTION_IN;
      for (let seat = 0; seat < 6; seat++) {
        for (let viewer = 0; viewer < 6; viewer++) {
          const hidden = isDiscard && viewer !== seat;
          expect(cardHiddenFrom(viewer, seat, action)).toBe(hidden);
          expect(actionSeenBy(viewer, seat, action)).toBe(hidden ? HIDDEN_DISCARD_TEXT : actionToString(action));
        }
      }
    }
  });

  it('shows the discarding seat its own card, and every play, call and trump to all', () => {
    expect(actionSeenBy(2, 2, discardAction(5))).toBe(actionToString(discardAction(5)));
    expect(actionSeenBy(0, 2, discardAction(5))).toBe('discard ?');
    for (const action of [playAction(0), playAction(NUM_CARDS - 1), ACTION_IN, ACTION_OUT, ACTION_BETTLER, trumpAction(3), ACTION_DONE]) {
      expect(actionSeenBy(0, 2, action)).toBe(actionToString(action));
    }
  });
});

describe('playedCard and discardedCard (docs/rules.md §7)', () => {
  it('give the card of a play or a discard, and -1 for every other action', () => {
    for (let card = 0; card < NUM_CARDS; card++) {
      expect(playedCard(playAction(card))).toBe(card);
      expect(discardedCard(playAction(card))).toBe(-1);
      expect(discardedCard(discardAction(card))).toBe(card);
      expect(playedCard(discardAction(card))).toBe(-1);
    }
    for (let action = ACTION_IN; action < NUM_ACTIONS; action++) {
      expect(playedCard(action)).toBe(-1);
      expect(discardedCard(action)).toBe(-1);
    }
    for (const outside of [-1, NUM_ACTIONS, 1.5]) expect([playedCard(outside), discardedCard(outside)]).toEqual([-1, -1]);
  });
});
