// The PPO learner: clipped surrogate objective, value loss, entropy bonus, minibatch epochs and
// global-norm gradient clipping, on a PolicyAgent's model. Masked logits come from the agent's
// `forward`, so illegal actions get no probability and no gradient. Every tensor is created and
// released inside tf.tidy.

import seedrandom from 'seedrandom';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { tf } from '../agents/tfjs.js';
import type { PolicyAgent } from '../agents/policy-agent.js';
import type { Batch } from './rollout.js';

export interface PpoHyperparameters {
  learningRate: number;
  epochs: number;
  minibatchSize: number;
  clip: number;
  valueCoef: number;
  entropyCoef: number;
  maxGradNorm: number;
}

export interface UpdateMetrics {
  policyLoss: number;
  valueLoss: number;
  entropy: number;
  approxKl: number;
  clipFraction: number;
  gradNorm: number;
}

export class PpoLearner {
  readonly optimizer: tf.AdamOptimizer;

  constructor(
    readonly agent: PolicyAgent,
    readonly hp: PpoHyperparameters,
  ) {
    this.optimizer = tf.train.adam(hp.learningRate);
  }

  /** One PPO update over a batch; the minibatch order comes from `seed`. */
  update(batch: Batch, seed: string): UpdateMetrics {
    const { hp } = this;
    const sums = { policyLoss: 0, valueLoss: 0, entropy: 0, approxKl: 0, clipFraction: 0, gradNorm: 0 };
    if (batch.size === 0) return sums;
    const advantages = normalized(batch.advantages);
    const random = seedrandom.alea(`${seed}/minibatches`);
    const order = Array.from({ length: batch.size }, (_, i) => i);
    let minibatches = 0;
    for (let epoch = 0; epoch < hp.epochs; epoch++) {
      shuffle(order, random);
      for (let start = 0; start < batch.size; start += hp.minibatchSize) {
        const rows = order.slice(start, start + hp.minibatchSize);
        // A tail much smaller than a minibatch adds noise and time for little signal.
        if (rows.length < Math.min(hp.minibatchSize, batch.size) / 4) continue;
        const metrics = this.step(batch, advantages, rows);
        for (const key of Object.keys(sums) as (keyof UpdateMetrics)[]) sums[key] += metrics[key];
        minibatches++;
      }
    }
    for (const key of Object.keys(sums) as (keyof UpdateMetrics)[]) sums[key] /= Math.max(1, minibatches);
    return sums;
  }

  private step(batch: Batch, advantages: Float32Array, rows: number[]): UpdateMetrics {
    const m = rows.length;
    const { obs, masks, actions, oldLogProbs, adv, returns } = gather(batch, rows, advantages);
    const { hp, agent } = this;
    return tf.tidy(() => {
      const obsT = tf.tensor2d(obs, [m, OBS_SIZE]);
      const maskT = tf.tensor2d(masks, [m, NUM_ACTIONS], 'bool') as tf.Tensor2D;
      const chosen = tf.oneHot(tf.tensor1d(actions, 'int32'), NUM_ACTIONS);
      const oldT = tf.tensor1d(oldLogProbs);
      const advT = tf.tensor1d(adv);
      const retT = tf.tensor1d(returns);
      let parts: tf.Scalar[] = [];
      const { value: _loss, grads } = tf.variableGrads(() => {
        const { logits, value } = agent.forward(obsT, maskT, true);
        const logAll = tf.logSoftmax(logits);
        const logProb = tf.sum(tf.mul(logAll, chosen), 1);
        const ratio = tf.exp(tf.sub(logProb, oldT));
        const clipped = tf.clipByValue(ratio, 1 - hp.clip, 1 + hp.clip);
        const policyLoss = tf.neg(tf.mean(tf.minimum(tf.mul(ratio, advT), tf.mul(clipped, advT)))) as tf.Scalar;
        const valueLoss = tf.mean(tf.square(tf.sub(value, retT))) as tf.Scalar;
        // Masked logits are -1e9: their probability is exactly 0, so p * log p adds 0 there.
        const entropy = tf.neg(tf.mean(tf.sum(tf.mul(tf.exp(logAll), logAll), 1))) as tf.Scalar;
        const approxKl = tf.mean(tf.sub(oldT, logProb)) as tf.Scalar;
        const clipFraction = tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), hp.clip), 'float32')) as tf.Scalar;
        parts = [policyLoss, valueLoss, entropy, approxKl, clipFraction].map((t) => tf.keep(t));
        return tf.add(policyLoss, tf.sub(tf.mul(valueLoss, hp.valueCoef), tf.mul(entropy, hp.entropyCoef))) as tf.Scalar;
      }, this.variables());
      const names = Object.keys(grads);
      const norm = tf.sqrt(tf.addN(names.map((k) => tf.sum(tf.square(grads[k]!)))));
      const normValue = norm.dataSync()[0]!;
      const scale = normValue > hp.maxGradNorm ? hp.maxGradNorm / normValue : 1;
      const clippedGrads: Record<string, tf.Tensor> = {};
      for (const k of names) clippedGrads[k] = scale === 1 ? grads[k]! : tf.mul(grads[k]!, scale);
      this.optimizer.applyGradients(clippedGrads as unknown as Parameters<tf.AdamOptimizer["applyGradients"]>[0]);
      const [policyLoss, valueLoss, entropy, approxKl, clipFraction] = parts.map((t) => t.dataSync()[0]!);
      parts.forEach((t) => t.dispose());
      return { policyLoss: policyLoss!, valueLoss: valueLoss!, entropy: entropy!, approxKl: approxKl!, clipFraction: clipFraction!, gradNorm: normValue };
    });
  }

  /**
   * Behaviour cloning on a batch whose actions a teacher chose: cross-entropy on the masked
   * policy plus the value loss on the observed returns. Warms up the policy before PPO.
   */
  imitate(batch: Batch, seed: string): { imitationLoss: number; valueLoss: number; accuracy: number } {
    const { hp, agent } = this;
    const random = seedrandom.alea(`${seed}/imitation`);
    const order = Array.from({ length: batch.size }, (_, i) => i);
    const sums = { imitationLoss: 0, valueLoss: 0, accuracy: 0 };
    let minibatches = 0;
    for (let epoch = 0; epoch < hp.epochs; epoch++) {
      shuffle(order, random);
      for (let start = 0; start < batch.size; start += hp.minibatchSize) {
        const rows = order.slice(start, start + hp.minibatchSize);
        const m = rows.length;
        const { obs, masks, actions, returns } = gather(batch, rows, batch.advantages);
        const result = tf.tidy(() => {
          const obsT = tf.tensor2d(obs, [m, OBS_SIZE]);
          const maskT = tf.tensor2d(masks, [m, NUM_ACTIONS], 'bool') as tf.Tensor2D;
          const actT = tf.tensor1d(actions, 'int32');
          const chosen = tf.oneHot(actT, NUM_ACTIONS);
          const retT = tf.tensor1d(returns);
          let parts: tf.Scalar[] = [];
          const { grads } = tf.variableGrads(() => {
            const { logits, value } = agent.forward(obsT, maskT, true);
            const crossEntropy = tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(logits), chosen), 1))) as tf.Scalar;
            const valueLoss = tf.mean(tf.square(tf.sub(value, retT))) as tf.Scalar;
            const accuracy = tf.mean(tf.cast(tf.equal(tf.argMax(logits, 1), actT), 'float32')) as tf.Scalar;
            parts = [crossEntropy, valueLoss, accuracy].map((t) => tf.keep(t));
            return tf.add(crossEntropy, tf.mul(valueLoss, hp.valueCoef)) as tf.Scalar;
          }, this.variables());
          this.optimizer.applyGradients(grads as unknown as Parameters<tf.AdamOptimizer['applyGradients']>[0]);
          const values = parts.map((t) => t.dataSync()[0]!);
          parts.forEach((t) => t.dispose());
          return values;
        });
        sums.imitationLoss += result[0]!;
        sums.valueLoss += result[1]!;
        sums.accuracy += result[2]!;
        minibatches++;
      }
    }
    sums.imitationLoss /= Math.max(1, minibatches);
    sums.valueLoss /= Math.max(1, minibatches);
    sums.accuracy /= Math.max(1, minibatches);
    return sums;
  }

  /**
   * The learner's own trainable variables, in a fixed order: Adam keys its moments by position,
   * and other models in the process (league snapshots) must not be touched.
   */
  private variables(): tf.Variable[] {
    return this.agent.model.trainableWeights.map((w) => w.read() as tf.Variable);
  }

  /** Adam's state (step count and moments) as named arrays, for checkpoints. */
  async optimizerState(): Promise<{ name: string; shape: number[]; data: Float32Array }[]> {
    const weights = await this.optimizer.getWeights();
    return weights.map((w) => ({ name: w.name, shape: w.tensor.shape, data: w.tensor.dataSync() as Float32Array }));
  }

  async restoreOptimizer(state: { name: string; shape: number[]; data: Float32Array }[]): Promise<void> {
    await this.optimizer.setWeights(state.map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape) })));
  }
}

/** The rows of a batch, packed for tensors. */
function gather(batch: Batch, rows: number[], advantages: Float32Array) {
  const m = rows.length;
  const obs = new Float32Array(m * OBS_SIZE);
  const masks = new Uint8Array(m * NUM_ACTIONS);
  const actions = new Int32Array(m);
  const oldLogProbs = new Float32Array(m);
  const adv = new Float32Array(m);
  const returns = new Float32Array(m);
  rows.forEach((r, k) => {
    obs.set(batch.observations.subarray(r * OBS_SIZE, (r + 1) * OBS_SIZE), k * OBS_SIZE);
    masks.set(batch.masks.subarray(r * NUM_ACTIONS, (r + 1) * NUM_ACTIONS), k * NUM_ACTIONS);
    actions[k] = batch.actions[r]!;
    oldLogProbs[k] = batch.logProbs[r]!;
    adv[k] = advantages[r]!;
    returns[k] = batch.returns[r]!;
  });
  return { obs, masks, actions, oldLogProbs, adv, returns };
}

function normalized(values: Float32Array): Float32Array {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let variance = 0;
  for (const v of values) variance += (v - mean) ** 2;
  const std = Math.sqrt(variance / values.length) + 1e-8;
  return values.map((v) => (v - mean) / std);
}

function shuffle(items: number[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}
