// Every agent: legal on real masks, deterministic for a seed; and a first look at strength.
import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { VecEnv } from '../env/vec-env.js';
import { HeuristicAgent, PhaseRoutedAgent, PimcAgent, RandomAgent, assertLegal, playSession, sessionChips, type Agent } from './index.js';

const TABLES = [
  { profile: 'didactic4', players: 4 },
  { profile: 'tavern5', players: 5, exchange: {}, bettler: {} },
];

const makers: Record<string, (rules: object, seed: number) => Agent> = {
  random: (_rules, seed) => new RandomAgent({ seed }),
  heuristic: () => new HeuristicAgent(),
  pimc: (rules, seed) => new PimcAgent({ rules, samples: 3, seed }),
  'pimc bidding, heuristic play': (rules, seed) => new PhaseRoutedAgent(new PimcAgent({ rules, samples: 3, seed }), new HeuristicAgent()),
};

describe.each(Object.keys(makers))('%s agent', (name) => {
  it.each(TABLES)('never chooses an illegal action and is deterministic for a seed (%j)', (rules) => {
    const run = () => {
      const vec = new VecEnv({ numEnvs: 3, config: { rules } }).reset(5);
      const agent = makers[name]!(rules, 1);
      const chosen: number[] = [];
      for (let t = 0; t < (name.startsWith('pimc') ? 40 : 200); t++) {
        const actions = agent.act(vec.observations, vec.masks, vec.seats);
        assertLegal(actions, vec.masks, NUM_ACTIONS, name);
        chosen.push(...actions);
        vec.step(actions);
      }
      return chosen;
    };
    expect(run()).toEqual(run());
  });
});

describe('strength', () => {
  it('the heuristic wins chips from random players over many sessions', () => {
    let heuristicChips = 0;
    for (let seed = 0; seed < 40; seed++) {
      const seat = seed % 4;
      const agents = [0, 1, 2, 3].map((s) => (s === seat ? new HeuristicAgent() : new RandomAgent({ seed: seed * 10 + s })));
      heuristicChips += sessionChips(playSession(agents, { seed }))[seat]!;
    }
    expect(heuristicChips).toBeGreaterThan(0);
  });
});

describe('PhaseRoutedAgent', () => {
  it('asks the bidding agent only for bidding decisions with a choice, the play agent for the rest', () => {
    const seen: string[] = [];
    const spy = (label: string, inner: Agent): Agent => ({
      name: label,
      act(obs, masks, seats) {
        seen.push(`${label}:${seats.length}`);
        return inner.act(obs, masks, seats);
      },
    });
    const agent = new PhaseRoutedAgent(spy('bid', new HeuristicAgent()), spy('play', new HeuristicAgent()));
    const state = playSession([agent, new RandomAgent(), new RandomAgent(), new RandomAgent()], { seed: 4 });
    expect(state.complete).toBe(true);
    expect(seen.some((s) => s.startsWith('bid'))).toBe(true);
    expect(seen.filter((s) => s.startsWith('play')).length).toBeGreaterThan(seen.filter((s) => s.startsWith('bid')).length);
  });
});
