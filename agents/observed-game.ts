// The game a seat is playing, as its observation tells it (observation v2 carries the rule set):
// agents read every rule from here rather than assuming defaults or being told separately.

import { createGame, type KratzenGame } from '../env/rules/index.js';
import type { ObservationView } from '../env/observation-view.js';

// Decoded views share one frozen rules object per rule set, so the object itself is the key.
const games = new WeakMap<object, KratzenGame>();

/** The rules-core game of the table `view` was observed at (cached by rule set). */
export function observedGame(view: ObservationView): KratzenGame {
  let game = games.get(view.rules);
  if (!game) {
    game = createGame(view.rules);
    games.set(view.rules, game);
  }
  return game;
}
