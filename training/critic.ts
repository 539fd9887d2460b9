// The oracle critic: a value network that also sees every other seat's hand (env/oracle.ts),
// used for the advantages during training only. Two forms (config `critic`):
// - `oracle`: its own MLP over the learner's observation and the other hands (PerfectDou);
// - `oracle-head`: a head on the policy's last hidden layer and the other hands, so the
//   observation passes through the network once (its loss trains the shared layers too, as the
//   policy's value head does).
// The policy never sees the other hands and checkpoints of the policy do not contain the critic;
// a training checkpoint carries its weights as an extra so that a resumed run goes on with it.

import { OBS_SIZE } from '../env/observation.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { canonicalCardRows, canonicalObservations, relabellings } from '../env/suit-symmetry.js';
import { tf, tidyData } from '../agents/tfjs.js';
import type { PolicyAgent } from '../agents/policy-agent.js';
import type { Batch } from './rollout.js';

export class OracleCritic {
  readonly model: tf.LayersModel;

  /**
   * `inputSize`: OBS_SIZE for its own MLP over the observation, or the width of the policy's
   * last hidden layer for a head on it (`onTrunk`).
   */
  constructor(
    readonly hiddenSizes: readonly number[],
    seed: number,
    readonly onTrunk = false,
    inputSize = OBS_SIZE,
  ) {
    // Seeds apart from the policy's (createPolicyModel uses seed * 1000 + layer).
    let layerSeed = seed * 1000 + 500;
    const glorot = () => tf.initializers.glorotUniform({ seed: layerSeed++ });
    const obs = tf.input({ shape: [inputSize], name: onTrunk ? 'critic_features' : 'critic_observation' });
    const hands = tf.input({ shape: [ORACLE_SIZE], name: 'critic_other_hands' });
    let x = tf.layers.concatenate({ name: 'critic_inputs' }).apply([obs, hands]) as tf.SymbolicTensor;
    hiddenSizes.forEach((units, i) => {
      x = tf.layers.dense({ units, activation: 'relu', kernelInitializer: glorot(), name: `critic_hidden_${i}` }).apply(x) as tf.SymbolicTensor;
    });
    const value = tf.layers.dense({ units: 1, kernelInitializer: glorot(), name: 'critic_value' }).apply(x) as tf.SymbolicTensor;
    this.model = tf.model({ inputs: [obs, hands], outputs: value, name: 'kratzen_oracle_critic' });
  }

  get inputSize(): number {
    return this.model.inputs[0]!.shape[1]!;
  }

  /** Values as a tensor (`input`: observations or trunk features), inside the caller's tidy or gradient function. */
  forward(input: tf.Tensor2D, otherHands: tf.Tensor2D, training = false): tf.Tensor1D {
    return tf.tidy(() => (this.model.apply([input, otherHands], { training }) as tf.Tensor2D).reshape([-1]) as tf.Tensor1D);
  }

  /** Values of N rows (inputs N x inputSize, other hands N x ORACLE_SIZE). */
  values(inputs: Float32Array, otherHands: Float32Array): Float32Array {
    const width = this.inputSize;
    const n = inputs.length / width;
    if (!Number.isInteger(n) || otherHands.length !== n * ORACLE_SIZE) {
      throw new RangeError(`critic batch mismatch: ${inputs.length} input floats, ${otherHands.length} hand floats`);
    }
    return tidyData(() => [this.forward(tf.tensor2d(inputs, [n, width]), tf.tensor2d(otherHands, [n, ORACLE_SIZE]))])[0]!;
  }

  /**
   * Values of a batch's decisions (collected with `recordOtherHands`), `learner` giving the trunk
   * features of a head; in chunks, which bound the tensors' memory whatever the batch's size.
   */
  batchValues(batch: Batch, learner: PolicyAgent): Float32Array {
    const hands = batch.otherHands;
    if (!hands) throw new Error('the oracle critic needs batches with the other seats\' hands (collected with recordOtherHands)');
    const values = new Float32Array(batch.size);
    const CHUNK = 8192;
    for (let start = 0; start < batch.size; start += CHUNK) {
      const end = Math.min(batch.size, start + CHUNK);
      const obs = batch.observations.subarray(start * OBS_SIZE, end * OBS_SIZE);
      const chunkHands = hands.subarray(start * ORACLE_SIZE, end * ORACLE_SIZE);
      // A policy that relabels suits has its critic read relabelled cards too (as PpoLearner feeds it).
      const ids = learner.suitSymmetry ? relabellings(obs, learner.suitSymmetry) : null;
      const input = this.onTrunk ? learner.features(obs) : ids ? canonicalObservations(obs, ids) : obs;
      values.set(this.values(input, ids ? canonicalCardRows(chunkHands, ORACLE_SIZE, ids) : chunkHands), start);
    }
    return values;
  }

  get trainableVariables(): tf.Variable[] {
    return this.model.trainableWeights.map((w) => w.read() as tf.Variable);
  }

  weights(): Float32Array[] {
    return this.model.getWeights().map((w) => w.dataSync() as Float32Array);
  }

  /** How many values each array of `weights()` holds. */
  weightSizes(): number[] {
    return this.model.getWeights().map((w) => w.size);
  }

  /** Replaces the weights with `arrays` (as `weights()` returned them); throws on a shape mismatch. */
  setWeights(arrays: readonly Float32Array[]): void {
    const current = this.model.getWeights();
    if (arrays.length !== current.length || arrays.some((a, i) => a.length !== current[i]!.size)) {
      throw new Error(`critic weights do not fit the critic (${arrays.length} arrays for ${current.length})`);
    }
    const tensors = arrays.map((a, i) => tf.tensor(a, current[i]!.shape));
    this.model.setWeights(tensors);
    tensors.forEach((t) => t.dispose());
  }

  dispose(): void {
    this.model.dispose();
  }
}
