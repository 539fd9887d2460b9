// The TF.js policy on the wasm backend: backend selection, legality on random and real masks,
// determinism for a seed, masking, no tensor leaks, and gradients through `forward`.

import seedrandom from 'seedrandom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { VecEnv } from '../env/vec-env.js';
import { assertLegal } from './agent.js';
import { DEFAULT_ARCHITECTURE, MASKED_LOGIT, PolicyAgent, VALUE_OUTPUT, createPolicyModel } from './policy-agent.js';
import { canonicalAction, canonicalObservations, observedTrump, relabelActionRows, relabelActions, relabellings, rotationId } from '../env/suit-symmetry.js';
import { selectBackend, tf } from './tfjs.js';

const SMALL = { hiddenSizes: [32, 32] };

/** N random observations and masks; every row has at least one legal action, some exactly one. */
function randomBatch(n: number, seed: string) {
  const rng = seedrandom.alea(seed);
  const observations = new Float32Array(n * OBS_SIZE).map(() => (rng() < 0.1 ? rng() * 4 - 2 : 0));
  const masks = new Uint8Array(n * NUM_ACTIONS);
  for (let i = 0; i < n; i++) {
    const density = i % 4 === 0 ? 0 : rng();
    for (let a = 0; a < NUM_ACTIONS; a++) masks[i * NUM_ACTIONS + a] = rng() < density ? 1 : 0;
    masks[i * NUM_ACTIONS + Math.floor(rng() * NUM_ACTIONS)] = 1;
  }
  return { observations, masks, seats: new Int32Array(n) };
}

beforeAll(async () => {
  expect((await selectBackend('wasm')).backend).toBe('wasm');
});

describe('selectBackend', () => {
  it('is idempotent and reports the backend', async () => {
    const first = await selectBackend('wasm');
    const second = await selectBackend('wasm');
    expect([first.backend, second.backend]).toEqual(['wasm', 'wasm']);
    expect(second.tf.getBackend()).toBe('wasm');
  });

  it('fails clearly for tfjs-node when it is absent, and auto falls back', async () => {
    const tensorflow = await selectBackend('tensorflow').then(
      (r) => r.backend,
      (e: Error) => e.message,
    );
    // On a machine with tfjs-node installed the explicit choice succeeds instead.
    expect(tensorflow).toMatch(/^tensorflow$|backend 'tensorflow' is not available: @tensorflow\/tfjs-node/);
    const auto = await selectBackend('auto');
    expect(['tensorflow', 'wasm']).toContain(auto.backend);
    expect((await selectBackend('cpu')).backend).toBe('cpu');
    expect((await selectBackend('wasm')).backend).toBe('wasm');
  });

  it('rejects an unknown choice', async () => {
    await expect(selectBackend('webgpu' as never)).rejects.toThrow(/unknown backend 'webgpu'/);
    expect(tf.getBackend()).toBe('wasm');
  });
});

describe('PolicyAgent', () => {
  const agents: PolicyAgent[] = [];
  const make = (options: ConstructorParameters<typeof PolicyAgent>[0]) => {
    const agent = new PolicyAgent(options);
    agents.push(agent);
    return agent;
  };
  afterAll(() => agents.forEach((a) => a.dispose()));

  it('builds the default architecture with a policy and a value head', () => {
    const agent = make({});
    expect(agent.architecture).toEqual(DEFAULT_ARCHITECTURE);
    expect(agent.model.inputs[0]!.shape).toEqual([null, OBS_SIZE]);
    expect(agent.model.outputs.map((o) => o.shape)).toEqual([[null, NUM_ACTIONS], [null, 1]]);
    expect(() => make({ architecture: { hiddenSizes: [] } })).toThrow(/hiddenSizes/);
  });

  it('never plays an illegal action on random masks, in both modes', () => {
    const { observations, masks, seats } = randomBatch(256, 'legal');
    for (const mode of ['greedy', 'sample'] as const) {
      const agent = make({ architecture: SMALL, seed: 3, mode });
      for (let k = 0; k < 5; k++) assertLegal(agent.act(observations, masks, seats), masks, NUM_ACTIONS, agent.name);
    }
  });

  it('never plays an illegal action on real env masks', () => {
    for (const rules of [{}, { profile: 'tavern5', players: 5, exchange: {}, bettler: {} }]) {
      const env = new VecEnv({ numEnvs: 8, config: { rules, episode: 'hand' } }).reset(11);
      const agent = make({ architecture: SMALL, seed: 5 });
      for (let step = 0; step < 300; step++) {
        const actions = agent.act(env.observations, env.masks, env.seats);
        assertLegal(actions, env.masks, NUM_ACTIONS, agent.name);
        env.step(actions);
      }
    }
  });

  it('is deterministic for a seed: weights, samples, and greedy play', () => {
    const { observations, masks, seats } = randomBatch(64, 'det');
    const a = make({ architecture: SMALL, seed: 7 });
    const b = make({ architecture: SMALL, seed: 7 });
    const c = make({ architecture: SMALL, seed: 8 });
    const weights = (agent: PolicyAgent) => agent.model.getWeights().map((w) => Array.from(w.dataSync()));
    expect(weights(a)).toEqual(weights(b));
    expect(weights(a)).not.toEqual(weights(c));

    const runA = [0, 1, 2].map(() => Array.from(a.act(observations, masks, seats)));
    const runB = [0, 1, 2].map(() => Array.from(b.act(observations, masks, seats)));
    expect(runA).toEqual(runB);
    expect(runA[0]).not.toEqual(runA[1]); // the generator advances between calls
    a.reseed();
    expect(Array.from(a.act(observations, masks, seats))).toEqual(runA[0]);

    a.mode = 'greedy';
    const greedy = Array.from(a.act(observations, masks, seats));
    expect(Array.from(a.act(observations, masks, seats))).toEqual(greedy);
    const { probs } = a.evaluate(observations, masks);
    greedy.forEach((action, i) => {
      const row = probs.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS);
      expect(row[action]).toBe(Math.max(...row));
    });
  });

  it('samples in proportion to the policy', () => {
    // A mask with two legal actions, repeated: frequencies must follow the evaluated probabilities.
    const n = 4000;
    const one = randomBatch(1, 'freq');
    one.masks.fill(0);
    one.masks[3] = one.masks[40] = 1;
    const observations = new Float32Array(n * OBS_SIZE);
    const masks = new Uint8Array(n * NUM_ACTIONS);
    for (let i = 0; i < n; i++) {
      observations.set(one.observations, i * OBS_SIZE);
      masks.set(one.masks, i * NUM_ACTIONS);
    }
    const model = createPolicyModel(SMALL, 9);
    // Skew the policy so the test is not satisfied by a uniform choice.
    const head = model.getLayer('policy_logits');
    const skewed = tf.tidy(() => tf.oneHot([40], NUM_ACTIONS).reshape([NUM_ACTIONS]).mul(1.5));
    head.setWeights([head.getWeights()[0]!, skewed]);
    skewed.dispose();
    const agent = make({ model, seed: 1 });
    const p40 = agent.evaluate(one.observations, one.masks).probs[40]!;
    const actions = agent.act(observations, masks, new Int32Array(n));
    const freq40 = actions.filter((a) => a === 40).length / n;
    expect(p40).toBeGreaterThan(0.7);
    expect(Math.abs(freq40 - p40)).toBeLessThan(0.03);
    model.dispose();
  });

  it('masks illegal actions: zero probability, MASKED_LOGIT, rows sum to 1', () => {
    const { observations, masks } = randomBatch(32, 'mask');
    const agent = make({ architecture: SMALL, seed: 2 });
    const { probs, values, logits } = agent.evaluate(observations, masks);
    expect(values.length).toBe(32);
    for (let i = 0; i < 32; i++) {
      let sum = 0;
      for (let a = 0; a < NUM_ACTIONS; a++) {
        const k = i * NUM_ACTIONS + a;
        sum += probs[k]!;
        if (!masks[k]) {
          expect(probs[k]).toBe(0);
          expect(logits[k]).toBe(MASKED_LOGIT);
        }
      }
      expect(sum).toBeCloseTo(1, 5);
    }
    const empty = new Uint8Array(NUM_ACTIONS);
    expect(() => agent.act(observations.subarray(0, OBS_SIZE), empty, new Int32Array(1))).toThrow(/row 0 has no legal action/);
    expect(() => agent.act(observations, masks.subarray(1), new Int32Array(32))).toThrow(/batch shape mismatch/);
    expect(agent.act(new Float32Array(0), new Uint8Array(0), new Int32Array(0))).toEqual(new Int32Array(0));
  });

  it('rejects a model of the wrong shape', () => {
    const input = tf.input({ shape: [OBS_SIZE + 1] });
    const wrong = tf.model({ inputs: input, outputs: [tf.layers.dense({ units: NUM_ACTIONS }).apply(input) as tf.SymbolicTensor] });
    expect(() => new PolicyAgent({ model: wrong })).toThrow(/not a policy model/);
    wrong.dispose();
    const model = createPolicyModel({ hiddenSizes: [8, 4], activation: 'elu' }, 1);
    expect(new PolicyAgent({ model }).architecture).toEqual({ hiddenSizes: [8, 4], activation: 'elu' });
    expect(() => new PolicyAgent({ model, architecture: { hiddenSizes: [8] } })).toThrow(/not the one given/);
    model.dispose();
  });

  it('leaks no tensors in act, evaluate and forward gradients', () => {
    const { observations, masks, seats } = randomBatch(16, 'leak');
    const agent = make({ architecture: SMALL, seed: 4 });
    agent.act(observations, masks, seats); // warm-up: lazily created backend state
    const before = tf.memory().numTensors;
    for (let k = 0; k < 50; k++) {
      agent.act(observations, masks, seats);
      agent.evaluate(observations, masks);
    }
    expect(tf.memory().numTensors).toBe(before);

    // forward() inside a gradient: the learner's use. Weights must get nonzero gradients.
    const obs = tf.tensor2d(observations, [16, OBS_SIZE]);
    const mask = tf.tensor2d(masks, [16, NUM_ACTIONS], 'bool');
    const afterInputs = tf.memory().numTensors;
    const { value, grads } = tf.variableGrads(() => {
      const { logits, value: v } = agent.forward(obs, mask, true);
      return tf.logSoftmax(logits).mul(tf.softmax(logits)).sum().add(v.square().sum()).neg() as tf.Scalar;
    });
    expect(Number.isFinite(value.dataSync()[0])).toBe(true);
    const names = Object.keys(grads);
    expect(names.length).toBe(agent.model.trainableWeights.length);
    expect(names.every((name) => tf.tidy(() => grads[name]!.abs().sum().dataSync()[0]!) > 0)).toBe(true);
    value.dispose();
    tf.dispose(grads);
    expect(tf.memory().numTensors).toBe(afterInputs);
    tf.dispose([obs, mask]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('gives the last hidden layer as features, from the same weights (the value head is a dense layer on them)', () => {
    const { observations, masks } = randomBatch(8, 'features');
    const agent = make({ architecture: SMALL, seed: 6 });
    expect(agent.featureSize).toBe(SMALL.hiddenSizes[SMALL.hiddenSizes.length - 1]);
    const features = agent.features(observations);
    expect(features.length).toBe(8 * agent.featureSize);
    const [kernel, bias] = agent.model.getLayer(VALUE_OUTPUT).getWeights().map((w) => w.dataSync());
    const { values } = agent.evaluate(observations, masks);
    for (let r = 0; r < 8; r++) {
      let v = bias![0]!;
      for (let j = 0; j < agent.featureSize; j++) v += features[r * agent.featureSize + j]! * kernel![j]!;
      expect(values[r]).toBeCloseTo(v, 4);
    }
    // forward with features: the same logits and values as without, in one pass.
    const before = tf.memory().numTensors;
    tf.tidy(() => {
      const obs = tf.tensor2d(observations, [8, OBS_SIZE]);
      const mask = tf.tensor2d(masks, [8, NUM_ACTIONS], 'bool');
      const plain = agent.forward(obs, mask);
      const withFeatures = agent.forward(obs, mask, false, true);
      expect(Array.from(withFeatures.logits.dataSync())).toEqual(Array.from(plain.logits.dataSync()));
      expect(Array.from(withFeatures.features!.dataSync())).toEqual(Array.from(features));
      expect(plain.features).toBeUndefined();
    });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('with suit symmetry plays the plain network on the relabelled cards, its actions mapped back (env/suit-symmetry.ts)', () => {
    // Real observations: every trump suit, and rows before trump is known.
    const vec = new VecEnv({ numEnvs: 48, config: { rules: { profile: 'tavern5', players: 4 }, episode: 'hand' } });
    vec.reset('symmetry');
    const rng = seedrandom.alea('symmetry-steps');
    for (let t = 0; t < 5; t++) {
      const actions = new Int32Array(48).map((_, i) => {
        const legal = [...Array(NUM_ACTIONS).keys()].filter((a) => vec.masks[i * NUM_ACTIONS + a]);
        return legal[Math.floor(rng() * legal.length)]!;
      });
      vec.step(actions);
    }
    const observations = vec.observations.slice();
    const masks = vec.masks.slice();
    const trumps = Array.from({ length: 48 }, (_, i) => observedTrump(observations, i * OBS_SIZE));
    expect(new Set(trumps).size).toBeGreaterThanOrEqual(4);
    for (const suitSymmetry of [true, 'holding'] as const) {
      const symmetric = make({ architecture: SMALL, seed: 9, suitSymmetry });
      const plain = make({ model: symmetric.model, ownsModel: false });
      const ids = relabellings(observations, suitSymmetry);
      if (suitSymmetry === true) expect(Array.from(ids)).toEqual(trumps.map(rotationId));
      else expect(ids.some((id, i) => id !== rotationId(trumps[i]!))).toBe(true); // the plain suits moved too
      const canonicalMasks = relabelActionRows(masks, ids, true);
      const got = symmetric.evaluate(observations, masks);
      const want = plain.evaluate(canonicalObservations(observations, ids), canonicalMasks);
      expect(Array.from(got.values)).toEqual(Array.from(want.values));
      expect(Array.from(got.probs)).toEqual(Array.from(relabelActionRows(want.probs, ids, false)));
      trumps.forEach((trump, i) => {
        if (suitSymmetry !== true) return;
        for (let a = 0; a < NUM_ACTIONS; a++) {
          expect(got.probs[i * NUM_ACTIONS + a]).toBe(want.probs[i * NUM_ACTIONS + canonicalAction(a, Math.max(trump, 0))]);
        }
      });
      symmetric.mode = 'greedy';
      plain.mode = 'greedy';
      const chosen = symmetric.act(observations, masks, new Int32Array(48));
      const canonicalChosen = plain.act(canonicalObservations(observations, ids), canonicalMasks, new Int32Array(48));
      expect(Array.from(relabelActions(chosen, ids, true))).toEqual(Array.from(canonicalChosen));
      assertLegal(chosen, masks, NUM_ACTIONS, 'symmetric');
      expect(symmetric.suitSymmetry === suitSymmetry && !plain.suitSymmetry).toBe(true);
    }
  });
});
