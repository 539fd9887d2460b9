// Environment throughput (didactic4, 4 players): steps/s with observation and mask encoding,
// actions drawn uniformly from the returned masks.

import { KratzenEnv, NUM_ACTIONS, VecEnv, WorkerVecEnv, randomLegalAction, randomLegalActions } from '../index.js';
import { fastRng, measure } from './timing.js';

const CONFIG = { rules: { profile: 'didactic4', players: 4 } };
const WORKER_WARMUP_SECONDS = 2;

function vecBody(env: VecEnv | WorkerVecEnv, random: () => number): () => number {
  const actions = new Int32Array(env.numEnvs);
  return () => {
    env.step(randomLegalActions(env.masks, env.numEnvs, NUM_ACTIONS, random, actions));
    return env.numEnvs;
  };
}

export async function benchEnv(seconds: number): Promise<Record<string, number>> {
  const metrics: Record<string, number> = {};
  const random = fastRng(1);

  const single = new KratzenEnv(CONFIG);
  let current = single.reset({ seed: 0 });
  const singleRate = measure(() => {
    const step = single.step(randomLegalAction(current.mask, 0, NUM_ACTIONS, random));
    current = step.terminated || step.truncated ? single.reset() : step;
    return 1;
  }, seconds);
  metrics['env.single.stepsPerSec'] = Math.round(singleRate.count / singleRate.seconds);

  for (const n of [1, 64, 256, 1024]) {
    const vec = new VecEnv({ numEnvs: n, config: CONFIG }).reset(0);
    const rate = measure(vecBody(vec, random), seconds);
    metrics[`env.vec.n${n}.stepsPerSec`] = Math.round(rate.count / rate.seconds);
  }

  const workers = new WorkerVecEnv({ numEnvs: 1024, numWorkers: 2, config: CONFIG }).reset(0);
  // Each worker compiles the env code on its own, and only while it steps: its first second ran
  // at a tenth of its speed here, so it warms up longer than the in-thread envs.
  const rate = measure(vecBody(workers, random), seconds, WORKER_WARMUP_SECONDS);
  metrics['env.worker.w2.stepsPerSec'] = Math.round(rate.count / rate.seconds);
  await workers.close();
  return metrics;
}
