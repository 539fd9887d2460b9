// Training throughput: environment steps per second of the default PPO configuration, rollouts
// (with inference) and updates included, on the TF.js backend `auto` picks.

import { HeuristicAgent, PolicyAgent, RandomAgent, selectBackend } from '../agents/index.js';
import { parseTrainConfig } from '../training/config.js';
import { PpoLearner } from '../training/ppo.js';
import { LEARNER, RolloutCollector, type LeagueDraw } from '../training/rollout.js';

export async function benchTrain(seconds: number): Promise<Record<string, number>> {
  const { backend } = await selectBackend('auto');
  const config = parseTrainConfig({});
  const learner = new PolicyAgent({ architecture: { hiddenSizes: config.hiddenSizes }, seed: 1 });
  const ppo = new PpoLearner(learner, config);
  const collector = new RolloutCollector(config);
  const heuristic = new HeuristicAgent();
  const random = new RandomAgent();
  const draw = (u: () => number): LeagueDraw => ({ seats: [LEARNER, u() < 0.5 ? heuristic : LEARNER, LEARNER, random] });
  let steps = 0;
  const started = performance.now();
  for (let update = 0; update === 0 || performance.now() - started < seconds * 1000; update++) {
    const { batch, stats } = collector.collect(learner, draw, { seed: `bench/${update}`, steps: config.rolloutSteps, gamma: 1, lambda: 0.95 });
    ppo.update(batch, `bench/${update}`);
    steps += stats.envSteps;
  }
  const rate = Math.round(steps / ((performance.now() - started) / 1000));
  process.stderr.write(`train bench: TF.js backend ${backend}, ${config.numEnvs} envs x ${config.rolloutSteps} steps per update\n`);
  learner.dispose();
  return { 'train.stepsPerSec': rate };
}
