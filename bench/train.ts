// Training throughput and how much of the machine it uses: environment steps per second of the
// default PPO configuration (rollouts with inference, and updates), the backend's one-thread
// matmul rate on the network's own layer shapes, and their ratio (utilisation), with the default
// learner threads (config `learnerThreads`); `train.oneLearnerThread.*` the same with one, and
// `train.actors2.*` with the rollouts in two actor threads, overlapped with the updates
// (training/actors.ts).

import { availableParallelism } from 'node:os';
import { HeuristicAgent, PolicyAgent, RandomAgent, selectBackend, tf } from '../agents/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { NUM_ACTIONS } from '../env/rules/actions.js';
import { parseTrainConfig } from '../training/config.js';
import { PpoLearner } from '../training/ppo.js';
import { LEARNER, RolloutCollector, type LeagueDraw } from '../training/rollout.js';
import { ActorPool, actorSetup, weightsOf } from '../training/actors.js';
import { GradientHelper, helperSetup } from '../training/gradient-helper.js';

/** The layer shapes [inputs, outputs] of the policy network: the trunk, then both heads side by side. */
export function layerShapes(hiddenSizes: readonly number[]): [number, number][] {
  const widths = [OBS_SIZE, ...hiddenSizes];
  const shapes: [number, number][] = widths.slice(1).map((w, i) => [widths[i]!, w]);
  shapes.push([hiddenSizes[hiddenSizes.length - 1]!, NUM_ACTIONS + 1]);
  return shapes;
}

/**
 * Floating-point work per environment step, as the issue defines it: 2 x multiply-adds per row x
 * (1 inference + 3 x epochs), the 3 being forward, input gradient and weight gradient of each
 * training pass.
 */
export function flopsPerStep(hiddenSizes: readonly number[], epochs: number): number {
  const macs = layerShapes(hiddenSizes).reduce((sum, [i, o]) => sum + i * o, 0);
  return 2 * macs * (1 + 3 * epochs);
}

/** GFLOP/s of `tf.matMul` on a 1024-row batch through the network's layers, on the active backend. */
export function matmulGflops(hiddenSizes: readonly number[], seconds: number): number {
  const rows = 1024;
  const pairs = layerShapes(hiddenSizes).map(([i, o]) => [tf.randomNormal([rows, i], 0, 1, 'float32', 1), tf.randomNormal([i, o], 0, 1, 'float32', 2)] as const);
  const flopsPerPass = layerShapes(hiddenSizes).reduce((sum, [i, o]) => sum + 2 * rows * i * o, 0);
  const pass = () => {
    for (const [a, b] of pairs) {
      const c = tf.matMul(a, b);
      c.dataSync();
      c.dispose();
    }
  };
  pass(); // warm-up: kernels compiled, buffers allocated
  let passes = 0;
  const started = performance.now();
  while (passes === 0 || performance.now() - started < seconds * 1000) {
    pass();
    passes++;
  }
  const elapsed = (performance.now() - started) / 1000;
  pairs.forEach(([a, b]) => (a.dispose(), b.dispose()));
  return (passes * flopsPerPass) / elapsed / 1e9;
}

export async function benchTrain(seconds: number): Promise<Record<string, number>> {
  const { backend } = await selectBackend('auto');
  const config = parseTrainConfig({ critic: 'shared' });
  const learner = new PolicyAgent({ architecture: { hiddenSizes: config.hiddenSizes }, seed: 1, suitSymmetry: config.suitSymmetry });
  const helpers = await GradientHelper.startMany(config.learnerThreads - 1, helperSetup(learner, config, null));
  const collector = new RolloutCollector(config);
  const heuristic = new HeuristicAgent();
  const random = new RandomAgent();
  const draw = (u: () => number): LeagueDraw => ({ seats: [LEARNER, u() < 0.5 ? heuristic : LEARNER, LEARNER, random] });
  const gflops = matmulGflops(config.hiddenSizes, Math.min(3, seconds / 2));
  /** Env steps per second of rollouts in this thread, each followed by its update. */
  const stepsPerSec = (ppo: PpoLearner, label: string): number => {
    let steps = 0;
    const started = performance.now();
    for (let update = 0; update === 0 || performance.now() - started < seconds * 1000; update++) {
      const { batch, stats } = collector.collect(learner, draw, { seed: `bench/${update}`, steps: config.rolloutSteps, gamma: 1, lambda: 0.95 });
      ppo.update(batch, `bench/${label}/${update}`);
      steps += stats.envSteps;
    }
    return steps / ((performance.now() - started) / 1000);
  };
  const ppo = new PpoLearner(learner, config, null, helpers);
  const rate = stepsPerSec(ppo, 'default');
  // The same with one learner thread, for the ratio in the same run.
  const oneThreadRate = helpers.length ? stepsPerSec(new PpoLearner(learner, config), 'one') : rate;
  // The same with the rollouts in two actor threads (the default league, `--actors 2`), each
  // asked for before the update before it, as the trainer does (`overlapRollouts`).
  const threaded = parseTrainConfig({ actors: 2 });
  const pool = await ActorPool.start(actorSetup(threaded, 4), 2);
  const request = (update: number) => ({ seed: `bench/a/${update}`, steps: config.rolloutSteps, gamma: 1, lambda: 0.95, imitating: false });
  let threadedSteps = 0;
  const threadedStart = performance.now();
  let pending = pool.collect(weightsOf(learner), request(0));
  for (let update = 0; update === 0 || performance.now() - threadedStart < seconds * 1000; update++) {
    const { batch, stats } = await pending;
    pending = pool.collect(weightsOf(learner), request(update + 1));
    ppo.update(batch, `bench/a/${update}`);
    threadedSteps += stats.envSteps;
  }
  const threadedRate = threadedSteps / ((performance.now() - threadedStart) / 1000);
  await pending;
  await pool.close();
  await Promise.all(helpers.map((h) => h.close()));
  const cores = availableParallelism();
  const perStep = flopsPerStep(config.hiddenSizes, config.epochs);
  const utilisation = (stepsPerSec: number) => Math.round(((stepsPerSec * perStep) / (cores * gflops * 1e9)) * 1000) / 1000;
  process.stderr.write(
    `train bench: TF.js backend ${backend}, ${config.numEnvs} envs x ${config.rolloutSteps} steps per update, ` +
      `network [${config.hiddenSizes}], ${config.learnerThreads} learner threads, ${cores} cores\n`,
  );
  learner.dispose();
  return {
    'tfjs.matmulGflops': Math.round(gflops * 100) / 100,
    'train.stepsPerSec': Math.round(rate),
    'train.flopsPerStep': perStep,
    'train.utilisation': utilisation(rate),
    'train.oneLearnerThread.stepsPerSec': Math.round(oneThreadRate),
    'train.oneLearnerThread.utilisation': utilisation(oneThreadRate),
    'train.actors2.stepsPerSec': Math.round(threadedRate),
    'train.actors2.utilisation': utilisation(threadedRate),
  };
}
