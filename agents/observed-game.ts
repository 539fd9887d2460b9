// The game a seat is playing, as its observation tells it (observation v2 carries the rule set):
// agents read every rule from here rather than assuming defaults or being told separately.

import { createGame, type KratzenGame } from '../env/rules/index.js';
import type { ObservationView } from '../env/observation.js';

const games = new Map<string, KratzenGame>();
const MAX_CACHED = 64;

/** The rules-core game of the table `view` was observed at (cached by rule set). */
export function observedGame(view: ObservationView): KratzenGame {
  const key = JSON.stringify(view.rules);
  let game = games.get(key);
  if (!game) {
    if (games.size >= MAX_CACHED) games.clear();
    game = createGame(view.rules);
    games.set(key, game);
  }
  return game;
}
