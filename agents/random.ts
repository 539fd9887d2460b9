// The uniformly random agent: a legal action drawn from each mask with a seeded generator.

import seedrandom from 'seedrandom';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { randomLegalAction } from '../env/policy.js';
import type { Agent } from './agent.js';

export class RandomAgent implements Agent {
  readonly name = 'random';
  private readonly random: () => number;

  constructor(options: { seed?: number | string } = {}) {
    this.random = seedrandom(`random-agent/${options.seed ?? 0}`);
  }

  act(_observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    const actions = new Int32Array(seats.length);
    for (let i = 0; i < seats.length; i++) {
      const action = randomLegalAction(masks, i, NUM_ACTIONS, this.random);
      if (action < 0) throw new Error(`random agent: row ${i} has no legal action`);
      actions[i] = action;
    }
    return actions;
  }
}
