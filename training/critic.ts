// The oracle critic (config `critic: "oracle"`): a value network over the learner's observation
// and every other seat's hand (env/oracle.ts), used for the advantages during training only.
// The policy never sees its inputs and checkpoints of the policy do not contain it; a training
// checkpoint carries its weights as an extra so that a resumed run goes on with the same critic.

import { OBS_SIZE } from '../env/observation.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { tf } from '../agents/tfjs.js';

export class OracleCritic {
  readonly model: tf.LayersModel;

  constructor(hiddenSizes: readonly number[], seed: number) {
    // Seeds apart from the policy's (createPolicyModel uses seed * 1000 + layer).
    let layerSeed = seed * 1000 + 500;
    const glorot = () => tf.initializers.glorotUniform({ seed: layerSeed++ });
    const obs = tf.input({ shape: [OBS_SIZE], name: 'critic_observation' });
    const hands = tf.input({ shape: [ORACLE_SIZE], name: 'critic_other_hands' });
    let x = tf.layers.concatenate({ name: 'critic_inputs' }).apply([obs, hands]) as tf.SymbolicTensor;
    hiddenSizes.forEach((units, i) => {
      x = tf.layers.dense({ units, activation: 'relu', kernelInitializer: glorot(), name: `critic_hidden_${i}` }).apply(x) as tf.SymbolicTensor;
    });
    const value = tf.layers.dense({ units: 1, kernelInitializer: glorot(), name: 'critic_value' }).apply(x) as tf.SymbolicTensor;
    this.model = tf.model({ inputs: [obs, hands], outputs: value, name: 'kratzen_oracle_critic' });
  }

  /** Values as a tensor, inside the caller's tidy or gradient function. */
  forward(obs: tf.Tensor2D, otherHands: tf.Tensor2D, training = false): tf.Tensor1D {
    return tf.tidy(() => (this.model.apply([obs, otherHands], { training }) as tf.Tensor2D).reshape([-1]) as tf.Tensor1D);
  }

  /** Values of N rows (observations N x OBS_SIZE, other hands N x ORACLE_SIZE). */
  values(observations: Float32Array, otherHands: Float32Array): Float32Array {
    const n = observations.length / OBS_SIZE;
    if (!Number.isInteger(n) || otherHands.length !== n * ORACLE_SIZE) {
      throw new RangeError(`critic batch mismatch: ${observations.length} observation floats, ${otherHands.length} hand floats`);
    }
    return tf.tidy(() => this.forward(tf.tensor2d(observations, [n, OBS_SIZE]), tf.tensor2d(otherHands, [n, ORACLE_SIZE])).dataSync() as Float32Array);
  }

  get trainableVariables(): tf.Variable[] {
    return this.model.trainableWeights.map((w) => w.read() as tf.Variable);
  }

  weights(): Float32Array[] {
    return this.model.getWeights().map((w) => w.dataSync() as Float32Array);
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
