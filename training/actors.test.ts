// Rollouts in worker threads (training/actors.ts): the threads play exactly what in-process
// actors play with the same weights and seeds, and a training run with actors, overlapped with
// the learner's updates, is reproducible, resume included.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PolicyAgent, selectBackend } from '../agents/index.js';
import { ActorPool, RolloutActor, blockSeed, mergeRollouts, weightsOf, type ActorSetup } from './actors.js';
import { parseTrainConfig } from './config.js';
import { train, withoutTimings } from './trainer.js';
import { revalue } from './rollout.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { NUM_ACTIONS } from '../env/rules/index.js';

beforeAll(async () => {
  await selectBackend('wasm');
});

const setup: ActorSetup = {
  rules: { players: 4 },
  numEnvs: 4,
  rolloutSteps: 16,
  rewardScale: 0.1,
  rewardNormalization: 'pot',
  hiddenSizes: [16],
  suitSymmetry: false,
  backend: 'wasm',
  league: parseTrainConfig({}).league,
  imitationTeacher: 'heuristic',
  teacherSamples: 4,
  numPlayers: 4,
};

describe('actors', () => {
  it('threads collect what in-process actors collect with the same weights and block seeds', async () => {
    const learner = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 3 });
    const snapshot = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4 });
    const weights = weightsOf(learner);
    // With the oracle critic's records: other hands, rewards and chains travel and merge too.
    const request = { seed: 'actors/u1', steps: 16, gamma: 1, lambda: 0.95, imitating: false, recordOtherHands: true };
    const pool = await ActorPool.start(setup, 2);
    try {
      await pool.addSnapshot('s', weightsOf(snapshot));
      const threaded = await pool.collect(weights, request);
      const local = await Promise.all([0, 1].map(() => RolloutActor.create(setup)));
      const parts = local.map((actor, k) => {
        actor.addSnapshot('s', weightsOf(snapshot));
        actor.setWeights(weights);
        return actor.collect({ ...request, seed: blockSeed(request.seed, k) });
      });
      const merged = mergeRollouts(parts);
      expect(threaded.stats).toEqual(merged.stats);
      expect(threaded.batch.size).toBe(parts[0]!.batch.size + parts[1]!.batch.size);
      expect(threaded.batch).toEqual(merged.batch);
      expect(merged.batch.otherHands!.length).toBe(merged.batch.size * ORACLE_SIZE);
      // Block 1's chains shifted past block 0's rows: GAE again over the merged chains gives the blocks' advantages.
      const again = { ...merged.batch, values: merged.batch.values.slice(), advantages: new Float32Array(merged.batch.size), returns: new Float32Array(merged.batch.size) };
      revalue(again, merged.batch.values.slice(), 1, 0.95);
      expect(Array.from(again.advantages)).toEqual(Array.from(merged.batch.advantages));
      expect(threaded.stats.envSteps).toBe(2 * 4 * 16);
      local.forEach((a) => a.dispose());
    } finally {
      await pool.close();
      learner.dispose();
      snapshot.dispose();
    }
  }, 60_000);

  it('an actor plays the learner with the suit relabelling the setup asks for', async () => {
    const learner = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 5, suitSymmetry: 'holding' });
    const plain = new PolicyAgent({ model: learner.model, ownsModel: false });
    const rotating = new PolicyAgent({ model: learner.model, ownsModel: false, suitSymmetry: true });
    const actor = await RolloutActor.create({ ...setup, rolloutSteps: 64, suitSymmetry: 'holding' });
    try {
      actor.setWeights(weightsOf(learner));
      const { batch } = actor.collect({ seed: 'actors/symmetry', steps: 64, gamma: 1, lambda: 0.95, imitating: false });
      expect(batch.size).toBeGreaterThan(0);
      const logProbsUnder = (agent: PolicyAgent) => {
        const { probs } = agent.evaluate(batch.observations, batch.masks);
        return Array.from(batch.actions, (a, k) => Math.fround(Math.log(Math.max(probs[k * NUM_ACTIONS + a]!, 1e-30))));
      };
      expect(logProbsUnder(learner)).toEqual(Array.from(batch.logProbs));
      expect(logProbsUnder(plain)).not.toEqual(Array.from(batch.logProbs));
      expect(logProbsUnder(rotating)).not.toEqual(Array.from(batch.logProbs));
    } finally {
      actor.dispose();
      learner.dispose();
    }
  }, 60_000);

  it('a run with two overlapped actors repeats itself and resumes into the same metrics', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-actors-'));
    const config = {
      rules: { players: 3 },
      seed: 9,
      imitationUpdates: 1,
      updates: 3,
      numEnvs: 6,
      // Long enough for hands to finish in every rollout (shorter ones learn from nothing).
      rolloutSteps: 40,
      hiddenSizes: [16],
      minibatchSize: 64,
      epochs: 2,
      evalEvery: 0,
      finalEvalDeals: 0,
      checkpointEvery: 1,
      // A snapshot every update and a league of one: every resume point has a snapshot that the
      // pending rollout must not see yet, and one that it must still see although it was evicted.
      league: { snapshotEvery: 1, maxSnapshots: 1, snapshots: 1 },
      actors: 2,
      // A constant step size, so that a finished run can be extended below.
      learningRateDecay: 'none' as const,
      runsDir: dir,
    };
    const straight = await train({ ...config, name: 'a' }, { verbose: false });
    const again = await train({ ...config, name: 'b' }, { verbose: false });
    const expected = straight.metrics.map(withoutTimings);
    for (const line of expected) expect(line.batchSize as number).toBeGreaterThan(0);
    expect(again.metrics.map(withoutTimings)).toEqual(expected);
    for (const stop of [1, 2, 3]) {
      await train({ ...config, name: `c${stop}` }, { verbose: false, stopAfter: stop });
      const resumed = await train({ ...config, name: `c${stop}` }, { verbose: false, resume: true });
      expect(resumed.metrics.map(withoutTimings)).toEqual(expected);
    }
    // A finished run extended with more updates plays what a longer run played.
    await train({ ...config, name: 'd', updates: 2 }, { verbose: false });
    const extended = await train({ ...config, name: 'd', updates: 3 }, { verbose: false, resume: true });
    expect(extended.metrics.map(withoutTimings)).toEqual(expected);
    // [overlapRollouts] Without overlap every rollout is played with the current weights: the
    // first rollout is the same, the later PPO updates are not.
    const onPolicy = await train({ ...config, name: 'e', overlapRollouts: false }, { verbose: false });
    const lines = onPolicy.metrics.map(withoutTimings);
    expect(lines[0]).toEqual(expected[0]);
    expect(lines.slice(2)).not.toEqual(expected.slice(2));
  }, 240_000);

  it('numEnvs must split evenly over the actors', () => {
    expect(() => parseTrainConfig({ numEnvs: 10, actors: 3 })).toThrow(/actors/);
  });
});
