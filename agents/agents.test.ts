// Every agent: legal on real masks, deterministic for a seed; and a first look at strength.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS, actionToString, createGame, parseAction, parseCard, sampleState, type KratzenState } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec } from '../env/observation.js';
import { decodeSeatView } from '../env/observation-view.js';
import { VecEnv } from '../env/vec-env.js';
import { buildDeck } from '../test/helpers/decks.js';
import { HeuristicAgent, PhaseRoutedAgent, PimcAgent, RandomAgent, assertLegal, playSession, sessionChips, type Agent } from './index.js';

const TABLES = [
  { profile: 'didactic4', players: 4 },
  { profile: 'tavern5', players: 5, exchange: {}, bettler: {} },
];

const makers: Record<string, (rules: object, seed: number) => Agent> = {
  random: (_rules, seed) => new RandomAgent({ seed }),
  heuristic: () => new HeuristicAgent(),
  pimc: (_rules, seed) => new PimcAgent({ samples: 3, seed }),
  'pimc bidding, heuristic play': (_rules, seed) => new PhaseRoutedAgent(new PimcAgent({ samples: 3, seed }), new HeuristicAgent()),
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

describe('agents read the rules from the observed rule set (docs/rules.md §0)', () => {
  const T5 = { profile: 'tavern5', players: 4 };

  function stateFor(rules: object, hands: Record<number, string[]>, faceUp: string, script: string[][]) {
    const deck = buildDeck({ profile: 'tavern5', players: 4, dealer: 0, hands, faceUp: [faceUp] }).map(parseCard);
    const state = createGame(rules).newState({ decks: [deck], start: { dealer: 0, muss: false } });
    for (const [seat, action] of script) state.applyAs(Number(seat), parseAction(action!));
    return state;
  }

  function heuristicChoice(state: KratzenState): string {
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    encodeObservation(state, state.currentSeat, obs);
    state.legalActionMask(mask);
    return actionToString(new HeuristicAgent().act(obs, mask, Int32Array.of(state.currentSeat))[0]!);
  }

  it('the heuristic refuses a mask that does not fit its observation (it chose -1) [library probe, session 48]', () => {
    const vec = new VecEnv({ numEnvs: 1, config: { rules: { players: 4 } } }).reset(3);
    let steps = 0;
    while (vec.stateOf(0).phase !== 'play' && steps++ < 100) vec.step(Int32Array.of(vec.stateOf(0).legalActions()[0]!));
    expect(vec.stateOf(0).phase).toBe('play');
    const mask = new Uint8Array(NUM_ACTIONS);
    mask[parseAction('in')] = 1;
    mask[parseAction('done')] = 1;
    expect(() => new HeuristicAgent().act(vec.observations.slice(0, OBS_SIZE), mask, Int32Array.of(vec.seats[0]!))).toThrow(/row 0's mask does not fit its observation \(phase play\)/);
  });

  it('weliRank highest: the heuristic counts the Weli as the top trump when it declares', () => {
    // Seat 1 speaks first holding the Weli and nothing else of worth (clubs are trump): the
    // second-best trump is not enough to play, the best one is.
    const hands = {
      1: ['W', '7s', '8s', '9d', '8d'],
      2: ['Ac', 'Kc', 'Qc', 'As', 'Ks'],
      3: ['Ah', 'Kh', 'Qh', 'Ad', 'Kd'],
      0: ['Jc', 'Tc', 'Qs', 'Js', 'Jh'],
    };
    expect(heuristicChoice(stateFor(T5, hands, '9c', []))).toBe('out');
    expect(heuristicChoice(stateFor({ ...T5, weliRank: 'highest' }, hands, '9c', []))).toBe('in');
  });

  it('dealerMinTricks 3: the heuristic dealer with two tricks keeps leading trumps for the third', () => {
    const hands = {
      1: ['Ks', '7h', '8h', '9h', 'Th'],
      2: ['Qs', '7d', '8d', '9d', 'Td'],
      3: ['Js', 'Jh', 'Qh', 'Kh', '7s'],
      0: ['As', 'Ac', 'Kc', 'Qc', 'Ad'],
    };
    const script = [
      ['1', 'in'], ['2', 'in'], ['3', 'in'],
      ['1', 'play Ks'], ['2', 'play Qs'], ['3', 'play Js'], ['0', 'play As'],
      ['0', 'play Ac'], ['1', 'play 7h'], ['2', 'play 7d'], ['3', 'play 7s'],
    ];
    expect(heuristicChoice(stateFor(T5, hands, '9c', script))).toBe('play Ad'); // quota met: cash the Ace
    expect(heuristicChoice(stateFor({ ...T5, dealerMinTricks: 3 }, hands, '9c', script))).toBe('play Kc');
  });

  it('pimc simulates the observed rules: its sampled states have the table\'s quota and Weli rank', () => {
    const rules = { ...T5, dealerMinTricks: 3, weliRank: 'highest' };
    const state = createGame(rules).newState({ seed: 3 });
    const obs = new Float32Array(OBS_SIZE);
    encodeObservation(state, state.currentSeat, obs);
    const sampled = sampleState(decodeSeatView(obs), seedrandom('s'));
    expect(sampled).not.toBeNull();
    expect(sampled!.rules.weliRank).toBe('highest');
    expect(sampled!.quotas[state.dealer]).toBe(3);
  });
});

describe('pimc where a simulated hand overflows [bridge probe, session 36]', () => {
  it.each(['heuristic', 'random'] as const)('plays on to the session\'s truncation at 2^53 units (rollout %s): a sampled hand\'s overflow failed the step as an invalid observation', (rollout) => {
    // With the pot as the penalty for a missed quota, six players' pot passes 2^53 units within
    // ~30 hands; the env truncates the session there (docs/rules.md §3).
    const rules = { profile: 'tavern5', players: 6, failPenalty: 'pot', hands: 120 };
    const opponents = Array.from({ length: 6 }, (_, s) => (s === 0 ? null : new PimcAgent({ samples: 4, seed: s, rollout })));
    const vec = new VecEnv({ numEnvs: 1, config: { rules }, opponents, learnerSeat: 0 }).reset(0);
    let steps = 0;
    while (!vec.truncated[0] && !vec.terminated[0]) {
      vec.step([vec.masks.indexOf(1)]);
      steps++;
    }
    expect(vec.truncated[0]).toBe(1);
    expect(vec.finalInfo(0)!.hands).toBeGreaterThan(20);
    expect(steps).toBeGreaterThan(20);
  });
});

describe('pimc on a row no deal fits [hostile input: a policy.act row]', () => {
  it('answers a tavern5 play row with no seat playing by the heuristic, at once (it looped for good)', () => {
    const game = createGame({ profile: 'tavern5', players: 4 });
    const random = seedrandom('row');
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    for (let seed = 0; ; seed++) {
      const state = game.newState({ seed });
      while (!state.isTerminal && !(state.phase === 'play' && state.numLegalActions() > 1)) state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      if (state.isTerminal) continue;
      encodeObservation(state, state.currentSeat, obs);
      const declarations = observationSpec().slices.find((s) => s.name === 'declarations')!;
      obs.fill(0, declarations.offset, declarations.offset + declarations.size);
      state.legalActionMask(mask);
      const seats = Int32Array.of(state.currentSeat);
      const pimc = new PimcAgent({ samples: 8, seed: 1 });
      expect(pimc.act(obs, mask, seats)[0]).toBe(new HeuristicAgent().act(obs, mask, seats)[0]);
      return;
    }
  });
});

describe('pimc on rows within every bound that no deal can come from [probe round 7]', () => {
  /** Rows of a tavern5 and a didactic4 table with a choice to make, one slice set to `value`. */
  function rowsWith(slice: string, at: number, value: number): { obs: Float32Array; mask: Uint8Array; seats: Int32Array }[] {
    const offset = observationSpec().slices.find((s) => s.name === slice)!.offset + at;
    const rows = [];
    const random = seedrandom('rows');
    for (const profile of ['tavern5', 'didactic4'] as const) {
      const vec = new VecEnv({ numEnvs: 8, config: { rules: { profile } } }).reset(3);
      for (let t = 0; t < 40; t++) {
        for (let i = 0; i < 8; i++) {
          const mask = vec.masks.slice(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS);
          if (mask.reduce((a, b) => a + b, 0) < 2) continue;
          const obs = vec.observations.slice(i * OBS_SIZE, (i + 1) * OBS_SIZE);
          obs[offset] = value;
          rows.push({ obs, mask, seats: vec.seats.slice(i, i + 1) });
        }
        vec.step(Int32Array.from({ length: 8 }, (_, i) => {
          const legal = [...vec.masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS)].flatMap((m, a) => (m ? [a] : []));
          return legal[Math.floor(random() * legal.length)]!;
        }));
      }
    }
    return rows;
  }

  it('names the row, whatever sampling or a playout of it throws (internal errors before)', () => {
    const cases: [string, number, number][] = [['trickNumber', 0, 1], ['dealer', 0, 0.8]];
    for (const [slice, at, value] of cases) {
      let refused = 0;
      for (const { obs, mask, seats } of rowsWith(slice, at, value)) {
        try {
          new PimcAgent({ samples: 4, seed: 1 }).act(obs, mask, seats);
        } catch (e) {
          expect(e, `${slice} = ${value}`).toMatchObject({ field: 'observations[0]', reason: expect.stringMatching(/^not an observation an env writes/) });
          refused++;
        }
      }
      expect(refused, `${slice} = ${value}: some rows are refused`).toBeGreaterThan(0);
    }
  });

  it('answers rows whose balance is at the bound of amounts: a simulated hand that overflows ends there, as a session does', () => {
    // They were refused as "amount overflow" of a sampled hand; a real table near 2^53 units
    // writes such rows, and the bridge's pimc bots failed on them.
    for (const { obs, mask, seats } of rowsWith('balances', 0, -37)) expect(mask[new PimcAgent({ samples: 4, seed: 1 }).act(obs, mask, seats)[0]!]).toBe(1);
  });

  it('stops a time-budget decision at maxSimulatedActions (on a server the budget alone held other clients up)', () => {
    const [{ obs, mask, seats }] = rowsWith('trickNumber', 0, 0);
    // Without the cap this decision runs for its whole minute, past the test's timeout.
    const pimc = new PimcAgent({ timeBudgetMs: 60_000, maxSimulatedActions: 1, seed: 1 });
    expect(mask[pimc.act(obs!, mask!, seats!)[0]!]).toBe(1);
  }, 10_000);
});

describe('agent options given to the classes directly [probe round 14]', () => {
  it('pimc refuses options that would never end a decision or mean nothing (samples NaN searched forever)', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ samples: NaN }, /samples must be an integer 1\.\.100000/],
      [{ samples: 0 }, /samples must be an integer 1\.\.100000/],
      [{ samples: 2.5 }, /samples must be an integer 1\.\.100000/],
      // Bounded as specs are (a decision with these never ended) [rules probe, session 39].
      [{ samples: Number.MAX_SAFE_INTEGER }, /samples must be an integer 1\.\.100000, got 9007199254740991/],
      [{ timeBudgetMs: 1e300 }, /timeBudgetMs must be a positive number of milliseconds, at most 600000, got 1e\+300/],
      [{ timeBudgetMs: NaN }, /timeBudgetMs must be a positive number/],
      [{ timeBudgetMs: -1 }, /timeBudgetMs must be a positive number/],
      [{ maxSimulatedActions: 0 }, /maxSimulatedActions must be a positive integer or Infinity/],
      [{ rollout: 'bogus' }, /rollout is heuristic or random/],
      [{ sample: 3 }, /PimcAgent has no option "sample"/],
    ];
    for (const [options, message] of bad) expect(() => new PimcAgent(options as never), JSON.stringify(options)).toThrow(message);
    expect(() => new PimcAgent({ samples: 1, timeBudgetMs: 5, maxSimulatedActions: Infinity, rollout: 'random', seed: 'x' })).not.toThrow();
    expect(() => new PimcAgent({ samples: 100_000, timeBudgetMs: 600_000 })).not.toThrow();
  });
  it('heuristic refuses a caution that is no number or out of range (NaN never declared in), and options it does not take', () => {
    for (const caution of [NaN, Infinity, 10.5, -11]) expect(() => new HeuristicAgent({ caution }), String(caution)).toThrow(/caution must be within -10\.\.10/);
    expect(() => new HeuristicAgent({ caution: '1' } as never)).toThrow(TypeError);
    expect(() => new HeuristicAgent({ caution: -10 })).not.toThrow();
    expect(() => new HeuristicAgent({ cautious: 1 } as never)).toThrow(/HeuristicAgent has no option "cautious"/);
  });
  it('random refuses options it does not take (seeed: 3 played seed 0), and every agent an options value that is no object [probe]', () => {
    expect(() => new RandomAgent({ seeed: 3 } as never)).toThrow(/RandomAgent has no option "seeed" \(it takes seed\)/);
    expect(() => new RandomAgent({ seed: 3 })).not.toThrow();
    for (const make of [(o: never) => new RandomAgent(o), (o: never) => new HeuristicAgent(o), (o: never) => new PimcAgent(o)]) {
      expect(() => make(null as never)).toThrow(/takes an object of options \(.*\), got null/);
      expect(() => make(5 as never)).toThrow(/got number/);
    }
  });
});

describe('batches that do not fit [probe round 3b]', () => {
  it('every agent refuses a batch whose observations, masks and seats disagree, or a seat off any table, naming it', async () => {
    const { PolicyAgent } = await import('./policy-agent.js');
    const { selectBackend } = await import('./tfjs.js');
    await selectBackend('wasm');
    const vec = new VecEnv({ numEnvs: 1, config: { rules: { players: 4 } } }).reset(3);
    const agents: Agent[] = [new RandomAgent(), new HeuristicAgent(), new PimcAgent({ samples: 2 }), new PolicyAgent({ architecture: { hiddenSizes: [8] } })];
    for (const agent of agents) {
      // One row with two seats was answered with one action; a short observation read as a rule set.
      expect(() => agent.act(vec.observations, vec.masks, Int32Array.from([0, 0])), agent.name).toThrow(/batch shape mismatch: 490 observation floats, 74 mask bytes and 2 seats/);
      expect(() => agent.act(vec.observations.subarray(0, 10), vec.masks, Int32Array.from([0])), agent.name).toThrow(/batch shape mismatch/);
      expect(() => agent.act(vec.observations, vec.masks, Int32Array.from([99])), agent.name).toThrow(/seats\[0\] is 99/);
      expect(agent.act(vec.observations, vec.masks, vec.seats).length, agent.name).toBe(1);
      agent.dispose?.();
    }
    // Garbage in the observation itself is named as such, not as an invalid rule set.
    const legal = Uint8Array.from({ length: NUM_ACTIONS }, (_, a) => (a < 3 ? 1 : 0));
    for (const agent of [new HeuristicAgent(), new PimcAgent({ samples: 2 })]) {
      expect(() => agent.act(new Float32Array(OBS_SIZE).fill(Number.NaN), legal, Int32Array.from([0])), agent.name).toThrow(/^invalid observation: observations\[0\]: not an observation an env writes/);
    }
  });
});
