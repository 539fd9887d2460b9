// Agent decision throughput at batch 1 and 256, on observations from real random play
// (didactic4, 4 players), and a quick strength table: chips per hand in a duplicate match.

import { NUM_ACTIONS, OBS_SIZE, VecEnv, randomLegalAction } from '../index.js';
import { HeuristicAgent, PimcAgent, PolicyAgent, RandomAgent, selectBackend, type Agent } from '../agents/index.js';
import { fastRng, measure } from './timing.js';

const RULES = { profile: 'didactic4', players: 4 };

/** A pool of observation/mask rows from random play. */
function samplePositions(count: number): { observations: Float32Array; masks: Uint8Array; seats: Int32Array } {
  const vec = new VecEnv({ numEnvs: 64, config: { rules: RULES } }).reset(7);
  const observations = new Float32Array(count * OBS_SIZE);
  const masks = new Uint8Array(count * NUM_ACTIONS);
  const seats = new Int32Array(count);
  const random = fastRng(3);
  const actions = new Int32Array(64);
  for (let filled = 0; filled < count; ) {
    for (let i = 0; i < 64 && filled < count; i++, filled++) {
      observations.set(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE), filled * OBS_SIZE);
      masks.set(vec.masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS), filled * NUM_ACTIONS);
      seats[filled] = vec.seats[i]!;
    }
    for (let i = 0; i < 64; i++) actions[i] = randomLegalAction(vec.masks, i, NUM_ACTIONS, random);
    vec.step(actions);
  }
  return { observations, masks, seats };
}

export function decisionsPerSec(agent: Agent, pool: ReturnType<typeof samplePositions>, batch: number, seconds: number): number {
  const rows = pool.seats.length;
  let offset = 0;
  const rate = measure(() => {
    if (offset + batch > rows) offset = 0;
    agent.act(
      pool.observations.subarray(offset * OBS_SIZE, (offset + batch) * OBS_SIZE),
      pool.masks.subarray(offset * NUM_ACTIONS, (offset + batch) * NUM_ACTIONS),
      pool.seats.subarray(offset, offset + batch),
    );
    offset += batch;
    return batch;
  }, seconds, Math.min(0.2, seconds / 2));
  return Math.round(rate.count / rate.seconds);
}

export async function benchAgents(seconds: number): Promise<Record<string, number>> {
  const pool = samplePositions(1024);
  const { backend } = await selectBackend('auto');
  const agents: Agent[] = [new RandomAgent(), new HeuristicAgent(), new PimcAgent(), new PolicyAgent({ seed: 1 })];
  const metrics: Record<string, number> = {};
  process.stderr.write(`agents bench: TF.js backend ${backend}\n`);
  for (const agent of agents) {
    for (const batch of [1, 256]) {
      // pimc takes milliseconds per decision: give it a little longer so a batch of 256 completes.
      const time = agent.name === 'pimc' && batch === 256 ? Math.max(seconds, 3) : seconds;
      metrics[`agents.${agent.name}.b${batch}.decisionsPerSec`] = decisionsPerSec(agent, pool, batch, time);
    }
  }
  return metrics;
}
