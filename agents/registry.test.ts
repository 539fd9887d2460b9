// Agent specs (`heuristic:caution=1`, `pimc:samples=8,rollout=random`) are hostile input too: a
// bridge client names them. Every malformed option is an error naming the spec; nothing is
// silently ignored or read some other way (a probe found `__proto__=1` ignored, `caution=`
// read as 0, `0x5` as 5 and a repeated option taking the last value).
import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS, createGame } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { createAgent } from './registry.js';

const context = { rules: { profile: 'didactic4', players: 4 }, seed: 1 };

describe('createAgent', () => {
  it('builds the built-in agents from their specs', async () => {
    for (const spec of ['random', 'heuristic', 'heuristic:caution=0.5', 'heuristic:caution=-2', 'pimc:samples=4,rollout=random']) {
      await expect(createAgent(spec, context), spec).resolves.toBeDefined();
    }
  });

  it('caps the work of a pimc decision counting samples, reproducibly (samples alone do not bound its time)', async () => {
    const rules = { profile: 'tavern5', players: 6 };
    const limits = { maxPimcSamples: 100_000, maxPimcTimeBudgetMs: 100, maxPimcSimulatedActions: 2_000, maxModelBytes: Infinity };
    const state = createGame(rules).newState({ seed: 4 });
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    encodeObservation(state, state.currentSeat, obs);
    state.legalActionMask(mask);
    expect(state.numLegalActions()).toBeGreaterThan(1);
    const decide = async () => (await createAgent('pimc:samples=100000', { rules, seed: 1, limits })).act(obs, mask, Int32Array.of(state.currentSeat))[0]!;
    const started = performance.now();
    const action = await decide();
    // 100,000 samples of six-player hands take minutes; 2,000 simulated actions about 25 ms here.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(mask[action]).toBe(1);
    // Work, not time, ends it: the same seed decides the same (a time cap made bridge games irreproducible).
    for (let k = 0; k < 3; k++) expect(await decide()).toBe(action);
  });

  it.each([
    'random:',
    'heuristic:',
    'heuristic:caution=',
    'heuristic:caution=0x5',
    'heuristic:caution=1,caution=2',
    'heuristic:caution=1=2',
    'heuristic:__proto__=1',
    'pimc:__proto__=1',
    'pimc:constructor=1',
    'pimc:samples=1e1',
    'pimc:samples=Infinity',
    'pimc:samples=4,',
  ])('refuses %s, naming the spec', async (spec) => {
    await expect(createAgent(spec, context)).rejects.toThrow(`agent "${spec}"`);
  });
});

describe('createAgent with a spec that is no string [probe round 3b]', () => {
  it('names the spec (it failed on .split)', async () => {
    for (const spec of [null, 5, {}]) {
      await expect(createAgent(spec as unknown as string, { rules: {}, seed: 0 }), String(spec)).rejects.toThrow(/^an agent spec is a string/);
    }
  });
});

describe('agent seeds [probe round 8]', () => {
  it('are integers or strings: objects were all the seed "[object Object]", NaN the seed "NaN"', async () => {
    const rules = { profile: 'didactic4', players: 4 };
    for (const seed of [Number.NaN, 1.5, null, { a: 1 }]) {
      await expect(createAgent('random', { rules, seed } as never), String(seed)).rejects.toThrow(/invalid seed/);
    }
    await expect(createAgent('random', null as never)).rejects.toThrow(/createAgent needs a context/);
    expect((await createAgent('random', { rules, seed: 'x' })).name).toBe('random');
  });
});
