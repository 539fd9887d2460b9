// Why an action is illegal, in words a person can act on (the reason of IllegalActionError and
// of `explainIllegal`, which replays and the bridge report).

import { ACTION_BETTLER, ACTION_DISCARD, ACTION_IN, NUM_ACTIONS, actionToString } from './actions.js';
import type { KratzenGame } from './kratzen-game.js';
import type { StateData } from './state-data.js';
import { quoteInput } from './errors.js';

/** The reason `action` is not legal now (the caller knows it is not). */
export function illegalReason(game: KratzenGame, d: StateData, action: number): string {
  // "36" (a string) read as the id 36 in the message, a legal one.
  if (typeof action !== 'number') return `an action is an integer id 0..${NUM_ACTIONS - 1}, got ${typeof action} ${quoteInput(String(action))}`;
  if (!Number.isInteger(action) || action < 0 || action >= NUM_ACTIONS) return `no such action id ${action}`;
  const text = actionToString(action);
  const isCardAction = action >= ACTION_DISCARD && action < ACTION_IN;
  switch (d.phase) {
    case 'over':
      return d.overflowed ? 'the session stopped: amount overflow' : 'the session is over';
    case 'deal':
      return 'the next hand has not been dealt: no deck is known for it';
    case 'trump':
      return `the dealer must name the trump suit after a turned Weli, not ${text}`;
    case 'discard':
      return isCardAction ? `${text}: the dealer does not hold that card` : `the dealer must discard down to ${game.handSize} cards, not ${text}`;
    case 'declare':
      if (action === ACTION_BETTLER) return 'bettler is not allowed (variant off)';
      return `seat ${d.currentSeat} must declare in or out, not ${text}`;
    case 'exchange':
      if (isCardAction) {
        if (!d.holds(d.currentSeat, action - ACTION_DISCARD)) return `${text}: the player does not hold that card`;
        return `${text}: no more cards may be exchanged (limit ${game.rules.exchange?.maxCards} or talon exhausted)`;
      }
      return `the exchange allows only discard <card> or done, not ${text}`;
    case 'play': {
      if (action >= ACTION_DISCARD) return `cards must be played now, not ${text}`;
      if (!d.holds(d.currentSeat, action)) return `${text}: the player does not hold that card`;
      return `${text} breaks the trick rules (follow suit${game.profile.mustHead ? ', head the trick' : ''}, trump when void, overtrump when possible)`;
    }
  }
}
