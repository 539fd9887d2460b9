// Data-parallel updates (config `learnerThreads`, training/gradient-helper.ts): helper threads
// differentiate parts of each minibatch. The update must be the one-thread update up to float
// rounding, for every loss (PPO, critic-only, imitation), and reproducible bit for bit.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeuristicAgent, PolicyAgent, selectBackend } from '../agents/index.js';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { OracleCritic } from './critic.js';
import { GradientHelper, helperSetup } from './gradient-helper.js';
import { PpoLearner } from './ppo.js';
import { LEARNER, RolloutCollector, revalue, type Batch } from './rollout.js';
import { train, withoutTimings } from './trainer.js';

const HP = { learningRate: 1e-3, epochs: 2, minibatchSize: 96, clip: 0.2, valueCoef: 0.5, entropyCoef: 0.01, maxGradNorm: 0.5 };
const HIDDEN = [32, 16];
const CRITIC_HIDDEN = [16];

let helpers: GradientHelper[];
let helper: GradientHelper;

beforeAll(async () => {
  await selectBackend('wasm');
  helpers = await GradientHelper.startMany(2, helperSetup(new PolicyAgent({ architecture: { hiddenSizes: HIDDEN }, suitSymmetry: 'holding' }), HP, new OracleCritic(CRITIC_HIDDEN, 0)));
  helper = helpers[0]!;
});

afterAll(async () => {
  await Promise.all(helpers.map((h) => h.close()));
});

/** A learner in `threads` threads and its oracle critic, both from fixed seeds. */
function learner(threads: number) {
  const agent = new PolicyAgent({ architecture: { hiddenSizes: HIDDEN }, seed: 5, suitSymmetry: 'holding' });
  const critic = new OracleCritic(CRITIC_HIDDEN, 5);
  return { agent, critic, ppo: new PpoLearner(agent, HP, critic, helpers.slice(0, threads - 1)) };
}

/** A rollout of 8 tables, the learner at two seats, valued by `critic`. */
function rollout(agent: PolicyAgent, critic: OracleCritic): Batch {
  const heuristic = new HeuristicAgent();
  const collector = new RolloutCollector({ rules: { players: 4 }, numEnvs: 8, rolloutSteps: 40, rewardScale: 0.1 });
  const { batch } = collector.collect(agent, () => ({ seats: [LEARNER, heuristic, LEARNER, heuristic] }), { seed: 'helper', steps: 40, gamma: 1, lambda: 0.95, recordOtherHands: true });
  revalue(batch, critic.batchValues(batch, agent), 1, 0.95);
  return batch;
}

const weights = (l: ReturnType<typeof learner>) => [...l.agent.model.getWeights(), ...l.critic.model.getWeights()].map((w) => Float32Array.from(w.dataSync()));

/** Runs imitation, a critic-only update and a PPO update; returns the metrics of each and the weights after. */
function threeUpdates(threads: number) {
  const l = learner(threads);
  const batch = rollout(l.agent, l.critic);
  const metrics = [l.ppo.imitate(batch, 'i'), l.ppo.update(batch, 'c', true), l.ppo.update(batch, 'p')];
  const result = { metrics, weights: weights(l) };
  l.agent.dispose();
  l.critic.dispose();
  return result;
}

describe('learner with a gradient helper thread', () => {
  it('updates as one thread does, up to float rounding, for imitation, critic-only and PPO steps', () => {
    const one = threeUpdates(1);
    const start = weights(learner(1));
    let moved = 0;
    one.weights.forEach((w, i) => w.forEach((v, j) => (moved = Math.max(moved, Math.abs(v - start[i]![j]!)))));
    // Adam moved the weights by ~1e-3 a step; the parts' weighted average differs by rounding only.
    expect(moved).toBeGreaterThan(1e-3);
    for (const threads of [2, 3]) {
      const many = threeUpdates(threads);
      let worst = 0;
      many.weights.forEach((w, i) => w.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - one.weights[i]![j]!)))));
      expect(worst, `${threads} threads`).toBeLessThan(1e-5);
      expect(many.weights).not.toEqual(one.weights);
      for (const [k, m] of one.metrics.entries()) {
        for (const [name, value] of Object.entries(m)) expect(many.metrics[k]![name as keyof typeof m], name).toBeCloseTo(value as number, 4);
      }
    }
  });

  it('is reproducible bit for bit for a given number of threads', () => {
    for (const threads of [2, 3]) {
      const a = threeUpdates(threads);
      const b = threeUpdates(threads);
      expect(a.weights).toEqual(b.weights);
      expect(a.metrics).toEqual(b.metrics);
    }
  });

  it('takes every helper\'s reply when a job fails, so the next update runs', () => {
    // Helpers built for another network refuse these weights.
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [8] }, seed: 1, suitSymmetry: 'holding' });
    const critic = new OracleCritic(CRITIC_HIDDEN, 5);
    expect(() => new PpoLearner(agent, HP, critic, helpers).update(rollout(agent, critic), 'x')).toThrow(/gradient helper: .*weight arrays/);
    const l = learner(3);
    expect(l.ppo.update(rollout(l.agent, l.critic), 'y').gradNorm).toBeGreaterThan(0);
    for (const a of [agent, l.agent]) a.dispose();
    for (const c of [critic, l.critic]) c.dispose();
  });

  it('reports a failing job as an error and keeps serving the next', () => {
    const l = learner(2);
    const values = [...l.agent.model.trainableWeights, ...l.critic.model.trainableWeights].map((w) => Float32Array.from(w.read().dataSync()));
    const rows = (m: number, obsWidth: number) => ({
      obs: new Float32Array(m * obsWidth),
      masks: new Uint8Array(m * NUM_ACTIONS).fill(1),
      actions: new Int32Array(m),
      oldLogProbs: new Float32Array(m),
      adv: new Float32Array(m),
      returns: new Float32Array(m),
      otherHands: new Float32Array(m * l.critic.model.inputs[1]!.shape[1]!),
    });
    const obsSize = l.agent.model.inputs[0]!.shape[1]!;
    helper.begin({ kind: { loss: 'ppo', criticOnly: false }, rows: rows(4, obsSize - 1), weights: values });
    expect(() => helper.finish()).toThrow(/gradient helper: .*values/);
    helper.begin({ kind: { loss: 'ppo', criticOnly: false }, rows: rows(4, obsSize), weights: values.slice(1) });
    expect(() => helper.finish()).toThrow(/gradient helper: .*weight arrays/);
    helper.begin({ kind: { loss: 'imitation' }, rows: rows(4, obsSize), weights: values });
    const part = helper.finish();
    expect(part.grads.map((g) => g.length)).toEqual(values.map((v) => v.length));
    expect(part.report.every(Number.isFinite)).toBe(true);
    expect(() => helper.finish()).toThrow(/no job in flight/);
    l.agent.dispose();
    l.critic.dispose();
  });
});

describe('training with learnerThreads', () => {
  it('gives other runs with 1 and 2 threads; a run saved before the setting existed resumes with one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-threads-'));
    const config = {
      rules: { players: 3 }, seed: 4, imitationUpdates: 1, updates: 2, numEnvs: 6, rolloutSteps: 40, hiddenSizes: [16],
      minibatchSize: 64, epochs: 2, evalEvery: 0, finalEvalDeals: 0, checkpointEvery: 1, runsDir: dir,
    };
    const one = await train({ ...config, learnerThreads: 1, name: 'one' }, { verbose: false });
    const two = await train({ ...config, learnerThreads: 2, name: 'two' }, { verbose: false });
    // The same algorithm, rounded differently: the weights part from the first update on, a
    // little (the metrics' 6 digits may not show it).
    const weights = (run: { checkpoint: string }) => readFileSync(join(run.checkpoint, 'weights.bin'));
    expect(weights(two).equals(weights(one))).toBe(false);
    expect(two.metrics[0]!.imitationLoss).toBeCloseTo(one.metrics[0]!.imitationLoss as number, 4);
    await train({ ...config, learnerThreads: 1, name: 'old' }, { verbose: false, stopAfter: 2 });
    const path = join(dir, 'old', 'config.json');
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    delete saved.learnerThreads;
    writeFileSync(path, JSON.stringify(saved));
    const resumed = await train({ ...config, name: 'old' }, { verbose: false, resume: true });
    expect(resumed.metrics.map(withoutTimings)).toEqual(one.metrics.map(withoutTimings));
    // The metrics keep 6 digits, where one update's rounding hardly shows: the weights keep every bit.
    expect(weights(resumed).equals(weights(one))).toBe(true);
    expect(weights(two).equals(weights(one))).toBe(false);
  });
});
