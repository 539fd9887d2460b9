// The oracle critic (config critic "oracle", PerfectDou): its values drive the advantages, it
// learns with the policy, and a resumed run goes on with the same critic and optimizer.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { HeuristicAgent, PolicyAgent, selectBackend, tf } from '../agents/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { OracleCritic } from './critic.js';
import { PpoLearner } from './ppo.js';
import { LEARNER, RolloutCollector, revalue, type Batch, type LeagueDraw } from './rollout.js';
import { train, withoutTimings } from './trainer.js';
import { parseTrainConfig } from './config.js';
import { loadCheckpoint } from '../checkpoints/index.js';

beforeAll(async () => {
  await selectBackend('wasm');
});

const HP = { learningRate: 1e-3, epochs: 2, minibatchSize: 64, clip: 0.2, valueCoef: 0.5, entropyCoef: 0.01, maxGradNorm: 0.5 };

/** A rollout of 8 four-player tables, the learner at two seats; `critic`: recorded for it and valued by it. */
function rollout(agent: PolicyAgent, critic?: OracleCritic) {
  const heuristic = new HeuristicAgent();
  const draw = (): LeagueDraw => ({ seats: [LEARNER, heuristic, LEARNER, heuristic] });
  const collector = new RolloutCollector({ rules: { players: 4 }, numEnvs: 8, rolloutSteps: 40, rewardScale: 0.1 });
  const { batch } = collector.collect(agent, draw, { seed: 'critic', steps: 40, gamma: 1, lambda: 0.95, recordOtherHands: critic !== undefined });
  if (critic) revalue(batch, critic.batchValues(batch, agent), 1, 0.95);
  return batch;
}

const copy = (batch: Batch): Batch => ({ ...batch, values: batch.values.slice(), advantages: batch.advantages.slice(), returns: batch.returns.slice() });

describe('oracle critic', () => {
  it("values the batch's decisions from the observation and the other hands, and the advantages follow", () => {
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 3 });
    const critic = new OracleCritic([16], 3);
    const shared = rollout(agent);
    agent.reseed();
    const recorded = new RolloutCollector({ rules: { players: 4 }, numEnvs: 8, rolloutSteps: 40, rewardScale: 0.1 }).collect(
      agent,
      () => ({ seats: [LEARNER, new HeuristicAgent(), LEARNER, new HeuristicAgent()] }),
      { seed: 'critic', steps: 40, gamma: 1, lambda: 0.95, recordOtherHands: true },
    ).batch;
    expect(recorded.size).toBeGreaterThan(0);
    // Recording changes nothing of the play or of the policy head's advantages.
    expect(Array.from(recorded.actions)).toEqual(Array.from(shared.actions));
    expect(Array.from(recorded.advantages)).toEqual(Array.from(shared.advantages));
    expect(shared.otherHands).toBeUndefined();
    expect(recorded.otherHands!.length).toBe(recorded.size * ORACLE_SIZE);
    // The chains: GAE again with the recorded values gives the advantages the rollout computed.
    const same = copy(recorded);
    revalue(same, recorded.values.slice(), 1, 0.95);
    expect(Array.from(same.advantages)).toEqual(Array.from(recorded.advantages));
    expect(Array.from(same.returns)).toEqual(Array.from(recorded.returns));
    for (let j = 0; j < recorded.size; j++) expect(recorded.next![j]! === -1 || recorded.next![j]! > j).toBe(true);
    // With the critic's values: other advantages, returns = advantage + value.
    const oracle = copy(recorded);
    const values = critic.batchValues(oracle, agent);
    expect(Array.from(values)).toEqual(Array.from(critic.values(oracle.observations, oracle.otherHands!)));
    revalue(oracle, values, 1, 0.95);
    expect(Array.from(oracle.values)).toEqual(Array.from(values));
    expect(Array.from(oracle.advantages)).not.toEqual(Array.from(shared.advantages));
    for (let k = 0; k < oracle.size; k++) expect(oracle.returns[k]).toBeCloseTo(oracle.advantages[k]! + oracle.values[k]!, 5);
    // Other hands of one row: cards held by others, never a card of the observer's hand.
    for (let k = 0; k < oracle.size; k++) {
      for (let c = 0; c < 33; c++) {
        const own = oracle.observations[k * OBS_SIZE + c]!;
        let others = 0;
        for (let r = 0; r < 5; r++) others += oracle.otherHands![k * ORACLE_SIZE + r * 33 + c]!;
        expect(own + others).toBeLessThanOrEqual(1);
      }
    }
    expect(() => revalue(copy(shared), shared.values, 1, 0.95)).toThrow(/recordOtherHands/);
    agent.dispose();
    critic.dispose();
  });

  for (const onTrunk of [false, true]) it(`learns with the policy in one clipped step, leaking no tensors (${onTrunk ? 'a head on the trunk' : 'its own MLP'})`, () => {
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4 });
    const critic = onTrunk ? new OracleCritic([8], 4, true, agent.featureSize) : new OracleCritic([16], 4);
    const ppo = new PpoLearner(agent, HP, critic);
    const batch = rollout(agent, critic);
    ppo.update(batch, 'warm-up');
    const before = critic.weights().map((w) => w.slice());
    const tensors = tf.memory().numTensors;
    const metrics = ppo.update(batch, 'u1');
    expect(tf.memory().numTensors).toBe(tensors);
    expect(critic.weights().some((w, i) => w.some((v, k) => v !== before[i]![k]))).toBe(true);
    expect(metrics.criticLoss).toBeGreaterThan(0);
    // A batch collected without the critic cannot train it.
    expect(() => ppo.update(rollout(agent), 'u2')).toThrow(/other seats' hands/);
    agent.dispose();
    critic.dispose();
  });

  for (const onTrunk of [false, true]) it(`a critic-only update holds the policy still after imitation updates gave Adam momentum (${onTrunk ? 'a head on the trunk' : 'its own MLP'}) [probe]`, () => {
    // Zero gradients let Adam's momentum from imitation move every policy weight, more than a PPO update did.
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4 });
    const critic = onTrunk ? new OracleCritic([8], 4, true, agent.featureSize) : new OracleCritic([16], 4);
    const ppo = new PpoLearner(agent, HP, critic);
    const batch = rollout(agent, critic);
    ppo.imitate(batch, 'imitation');
    const policy = () => agent.model.getWeights().map((w) => Array.from(w.dataSync()));
    const before = policy();
    const criticBefore = critic.weights().map((w) => w.slice());
    const tensors = tf.memory().numTensors;
    ppo.update(batch, 'warm-up', true);
    expect(tf.memory().numTensors).toBe(tensors);
    expect(policy()).toEqual(before);
    expect(critic.weights().some((w, i) => w.some((v, k) => v !== criticBefore[i]![k]))).toBe(true);
    // The next full update moves the policy again.
    ppo.update(batch, 'u1');
    expect(policy()).not.toEqual(before);
    agent.dispose();
    critic.dispose();
  });

  for (const critic of ['oracle', 'oracle-head'] as const) it(`${critic}: trains, and a resumed run repeats the uninterrupted one (critic weights and moments saved)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-critic-'));
    const config = {
      rules: { players: 3 }, seed: 7, critic, imitationUpdates: 1, updates: 3, numEnvs: 6, rolloutSteps: 40,
      hiddenSizes: [16], minibatchSize: 64, epochs: 2, evalEvery: 0, finalEvalDeals: 0, checkpointEvery: 1, runsDir: dir,
    };
    const straight = await train({ ...config, name: 'straight' }, { verbose: false });
    for (const line of straight.metrics) expect(line.criticLoss).toBeTypeOf('number');
    await train({ ...config, name: 'split' }, { verbose: false, stopAfter: 2 });
    const resumed = await train({ ...config, name: 'split' }, { verbose: false, resume: true });
    expect(resumed.metrics.map(withoutTimings)).toEqual(straight.metrics.map(withoutTimings));
    const shared = await train({ ...config, critic: 'shared', name: 'shared' }, { verbose: false });
    expect(shared.metrics[1]!.criticLoss).toBeUndefined();
    expect(shared.metrics[2]!.policyLoss).not.toBe(straight.metrics[2]!.policyLoss);
  });

  it('fine-tunes from initialPolicy: the policy is held still while a fresh critic warms up, then learns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-finetune-'));
    const base = {
      rules: { players: 3 }, seed: 9, imitationUpdates: 1, updates: 1, numEnvs: 6, rolloutSteps: 40, hiddenSizes: [16],
      minibatchSize: 64, epochs: 2, evalEvery: 0, finalEvalDeals: 0, runsDir: dir,
    };
    const source = await train({ ...base, name: 'source' }, { verbose: false });
    const sourceWeights = (await loadCheckpoint(source.checkpoint)).toAgent();
    const tune = { ...base, imitationUpdates: 0, updates: 2, critic: 'oracle', initialPolicy: source.checkpoint };
    // A warm-up as long as the run is allowed (to be resumed for more), but said as the run starts [CLI probe, session 32].
    const said: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (said.push(String(chunk)), true));
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    let held;
    try {
      held = await train({ ...tune, criticWarmupUpdates: 2, name: 'held' });
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
    expect(said.join('')).toMatch(/criticWarmupUpdates 2: every update of this run trains the critic alone/);
    const moved = await train({ ...tune, criticWarmupUpdates: 1, name: 'moved' }, { verbose: false });
    const weightsAt = async (checkpoint: string) => {
      const agent = (await loadCheckpoint(checkpoint)).toAgent();
      const weights = agent.model.getWeights().map((w) => Array.from(w.dataSync()));
      agent.dispose();
      return weights;
    };
    const start = sourceWeights.model.getWeights().map((w) => Array.from(w.dataSync()));
    expect(await weightsAt(held.checkpoint)).toEqual(start);
    expect(await weightsAt(moved.checkpoint)).not.toEqual(start);
    for (const line of held.metrics) expect(line.criticLoss).toBeGreaterThan(0);
    await expect(train({ ...tune, hiddenSizes: [8], name: 'other-shape' }, { verbose: false })).rejects.toThrow(/initialPolicy/);
    await expect(train({ ...tune, rules: { players: 4 }, name: 'other-rules' }, { verbose: false })).rejects.toThrow(/initialPolicy/);
    await expect(train({ ...base, critic: 'shared', criticWarmupUpdates: 1, name: 'no-critic' }, { verbose: false })).rejects.toThrow(/criticWarmupUpdates/);
    sourceWeights.dispose();
  });

  it('defaults to the oracle critic; a run saved before the critic existed resumes with its value head', async () => {
    expect(parseTrainConfig({}).critic).toBe('oracle');
    // Widths for a critic the run does not build were taken without a word.
    expect(() => parseTrainConfig({ critic: 'shared', criticHiddenSizes: [32] })).toThrow(expect.objectContaining({ field: 'criticHiddenSizes' }));
    expect(parseTrainConfig({ critic: 'oracle-head', criticHiddenSizes: [32] }).criticHiddenSizes).toEqual([32]);
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-old-run-'));
    const config = {
      rules: { players: 3 }, seed: 3, imitationUpdates: 1, updates: 2, numEnvs: 6, rolloutSteps: 40, hiddenSizes: [16],
      minibatchSize: 64, epochs: 2, evalEvery: 0, finalEvalDeals: 0, checkpointEvery: 1, runsDir: dir, critic: 'shared',
    };
    const straight = await train({ ...config, name: 'straight' }, { verbose: false });
    await train({ ...config, name: 'old' }, { verbose: false, stopAfter: 2 });
    const path = join(dir, 'old', 'config.json');
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    delete saved.critic;
    // Saved before such widths were refused beside the shared critic: they built nothing, and
    // the run resumes as it was (it was refused once the refusal came) [review, session 36].
    saved.criticHiddenSizes = [32];
    writeFileSync(path, JSON.stringify(saved));
    const { critic: _, ...withoutCritic } = config;
    const resumed = await train({ ...withoutCritic, name: 'old' }, { verbose: false, resume: true });
    expect(resumed.metrics.map(withoutTimings)).toEqual(straight.metrics.map(withoutTimings));
  });
});
