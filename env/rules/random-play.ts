// Uniformly random self-play over the rules core: the `kratzen random` session generator and the
// workhorse of the random-simulation tests and the benchmark.

import seedrandom from 'seedrandom';
import type { KratzenState } from './game.js';
import { createGame, type NewStateOptions } from './kratzen-game.js';

/** A seeded generator for choosing actions, kept apart from the state's deck generator. */
export function actionRng(seed: number | string): () => number {
  return seedrandom(`${seed}/actions`);
}

/** Plays `state` to the end of the session with uniformly random legal actions. */
export function playRandomly(state: KratzenState, random: () => number): KratzenState {
  while (!state.isTerminal) {
    const count = state.numLegalActions();
    state.apply(state.legalActionAt(Math.floor(random() * count)));
  }
  return state;
}

/** A whole session of random play from a rule set and a seed. */
export function randomSession(rules: unknown, seed: number | string, options: Omit<NewStateOptions, 'seed'> = {}): KratzenState {
  const state = createGame(rules).newState({ ...options, seed });
  return playRandomly(state, actionRng(seed));
}
