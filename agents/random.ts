// The uniformly random agent: a legal action drawn from each mask with a seeded generator.

import seedrandom from 'seedrandom';
import { NUM_ACTIONS, checkOptionKeys, checkSeed } from '../env/rules/index.js';
import { randomLegalActions } from '../env/policy.js';
import { checkBatch, type Agent } from './agent.js';

export class RandomAgent implements Agent {
  readonly name = 'random';
  private readonly random: () => number;

  constructor(options: { seed?: number | string } = {}) {
    // `seeed: 3` played seed 0 without a word, as the other agents' misspelt options no longer do.
    checkOptionKeys(options, ['seed'], 'RandomAgent');
    if (options.seed !== undefined) checkSeed(options.seed);
    this.random = seedrandom(`random-agent/${options.seed ?? 0}`);
  }

  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    checkBatch(observations, masks, seats);
    const actions = randomLegalActions(masks, seats.length, NUM_ACTIONS, this.random, new Int32Array(seats.length));
    const empty = actions.indexOf(-1);
    if (empty >= 0) throw new Error(`random agent: row ${empty} has no legal action`);
    return actions;
  }
}
