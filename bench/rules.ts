// Rules-core throughput: uniformly random play on one thread, the legal mask filled every action.

import { NUM_ACTIONS, PROFILES, createGame } from '../env/rules/index.js';
import { fastRng, measure } from './timing.js';

export function benchRules(seconds: number): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const profile of PROFILES) {
    for (const players of [3, 4, 5, 6]) {
      const game = createGame({ profile, players });
      const mask = new Uint8Array(NUM_ACTIONS);
      const random = fastRng(players);
      let seed = 0;
      let hands = 0;
      let actionsTotal = 0;
      const rate = measure(() => {
        const state = game.newState({ seed: seed++ });
        let actions = 0;
        while (!state.isTerminal) {
          state.legalActionMask(mask);
          state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
          actions++;
        }
        hands += state.numResults;
        actionsTotal += actions;
        return actions;
      }, seconds);
      const handsPerSec = ((rate.count / rate.seconds) * hands) / actionsTotal;
      metrics[`rules.${profile}.p${players}.actionsPerSec`] = Math.round(rate.count / rate.seconds);
      metrics[`rules.${profile}.p${players}.handsPerSec`] = Math.round(handsPerSec);
    }
  }
  return metrics;
}
