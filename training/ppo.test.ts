// PPO's update: what it reports about each step of the policy.
import { beforeAll, describe, expect, it } from 'vitest';
import { HeuristicAgent, PolicyAgent, selectBackend } from '../agents/index.js';
import { PpoLearner } from './ppo.js';
import { LEARNER, RolloutCollector, type LeagueDraw } from './rollout.js';

beforeAll(async () => {
  await selectBackend('wasm');
});

describe('PpoLearner.update', () => {
  // The plain estimator, the mean of log(old / new), was below 0 in 3 of these 12 updates
  // [training probe, session 43]: a KL divergence never is.
  it('reports a KL estimate that is never negative, and positive once the policy has moved', () => {
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4 });
    const ppo = new PpoLearner(agent, { learningRate: 3e-3, epochs: 4, minibatchSize: 32, clip: 0.2, valueCoef: 0.5, entropyCoef: 0.01, maxGradNorm: 0.5 });
    const heuristic = new HeuristicAgent();
    const draw = (): LeagueDraw => ({ seats: [LEARNER, heuristic, LEARNER, heuristic] });
    const collector = new RolloutCollector({ rules: { players: 4 }, numEnvs: 8, rolloutSteps: 40, rewardScale: 0.1 });
    const estimates: number[] = [];
    for (let u = 0; u < 12; u++) {
      const { batch } = collector.collect(agent, draw, { seed: `kl/${u}`, steps: 40, gamma: 1, lambda: 0.95 });
      estimates.push(ppo.update(batch, `u${u}`).approxKl);
    }
    for (const kl of estimates) expect(kl).toBeGreaterThanOrEqual(0);
    expect(estimates.filter((kl) => kl > 1e-5).length).toBeGreaterThan(6);
    agent.dispose();
  });
});
