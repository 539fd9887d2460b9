// The PPO learner: clipped surrogate objective, value loss, entropy bonus, minibatch epochs and
// global-norm gradient clipping, on a PolicyAgent's model. Masked logits come from the agent's
// `forward`, so illegal actions get no probability and no gradient. With an oracle critic
// (training/critic.ts) its value loss joins the loss and its weights the optimizer. With
// gradient helpers (training/gradient-helper.ts) other threads differentiate parts of each
// minibatch. Every tensor is created and released inside tf.tidy.

import seedrandom from 'seedrandom';
import { NUM_ACTIONS, ValidationError } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { tf, tidyData } from '../agents/tfjs.js';
import type { PolicyAgent } from '../agents/policy-agent.js';
import type { Batch } from './rollout.js';
import { ADAM_POWERS, checkAdamState, isAdamPower, type AdamPower, type NamedArray } from '../checkpoints/optimizer-state.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { canonicalCardRows } from '../env/suit-symmetry.js';
import type { OracleCritic } from './critic.js';
import type { GradientHelper, GradientPart } from './gradient-helper.js';

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
  /** The policy's own value head against the returns (trained in every case). */
  valueLoss: number;
  /** With an oracle critic: its loss against the returns. */
  criticLoss?: number;
  entropy: number;
  /** KL divergence of the updated policy from the collecting one on the batch's decisions, estimated (>= 0). */
  approxKl: number;
  clipFraction: number;
  gradNorm: number;
}

export interface ImitationMetrics {
  imitationLoss: number;
  valueLoss: number;
  criticLoss?: number;
  accuracy: number;
  gradNorm: number;
}

/** A minibatch as tensors, for the loss functions. */
interface MinibatchTensors {
  obs: tf.Tensor2D;
  masks: tf.Tensor2D;
  actions: tf.Tensor1D;
  /** One-hot of `actions`. */
  chosen: tf.Tensor;
  oldLogProbs: tf.Tensor1D;
  advantages: tf.Tensor1D;
  returns: tf.Tensor1D;
  /** With an oracle critic: the other seats' hands, else null. */
  otherHands: tf.Tensor2D | null;
}

/** A minibatch's rows packed for tensors (what `gather` returns). */
export type GatheredRows = ReturnType<typeof gather>;

/** Which loss a minibatch step differentiates: PPO's (optionally the oracle critic's alone), or behaviour cloning's. */
export type LossKind = { loss: 'ppo'; criticOnly: boolean } | { loss: 'imitation' };

export class PpoLearner {
  readonly optimizer: tf.AdamOptimizer;

  /**
   * With `critic`, its value loss joins the loss (same `valueCoef`), its weights the optimizer
   * and the gradient clipping; the advantages are whatever the batch carries (the rollout's,
   * from the critic). `helpers`: threads that differentiate parts of each minibatch.
   */
  constructor(
    readonly agent: PolicyAgent,
    readonly hp: PpoHyperparameters,
    readonly critic: OracleCritic | null = null,
    private readonly helpers: readonly GradientHelper[] = [],
  ) {
    this.optimizer = tf.train.adam(hp.learningRate);
  }

  /**
   * One PPO update over a batch; the minibatch order comes from `seed`. `criticOnly`: only the
   * oracle critic learns (a fresh critic beside a trained policy warms up first); the policy's
   * weights get zero gradients and stay exactly where they are (Adam's moments for them decay).
   */
  update(batch: Batch, seed: string, criticOnly = false): UpdateMetrics {
    if (criticOnly && !this.critic) throw new Error('criticOnly needs an oracle critic');
    const names = withCritic(this.critic, ['policyLoss', 'valueLoss', 'entropy', 'approxKl', 'clipFraction'] as const);
    const advantages = batch.size ? normalized(batch.advantages) : batch.advantages;
    return this.optimize(inNetworkLabels(this.agent, batch), advantages, `${seed}/minibatches`, names, { loss: 'ppo', criticOnly });
  }

  /** Adam's step size from the next step on (a schedule's value for this update). */
  setLearningRate(learningRate: number): void {
    (this.optimizer as unknown as { learningRate: number }).learningRate = learningRate;
  }

  /**
   * Behaviour cloning on a batch whose actions a teacher chose: cross-entropy on the masked
   * policy plus the value loss on the observed returns. Warms up the policy before PPO.
   */
  imitate(batch: Batch, seed: string): ImitationMetrics {
    const names = withCritic(this.critic, ['imitationLoss', 'valueLoss', 'accuracy'] as const);
    return this.optimize(inNetworkLabels(this.agent, batch), batch.advantages, `${seed}/imitation`, names, { loss: 'imitation' });
  }

  /** The minibatch's loss of `kind`, and the scalars it reports (named as `update` and `imitate` name them). */
  private lossOf(kind: LossKind, t: MinibatchTensors): { loss: tf.Scalar; report: tf.Scalar[] } {
    const { hp, agent } = this;
    const { logits, value, features } = agent.forward(t.obs, t.masks, true, this.critic?.onTrunk);
    const valueLoss = tf.mean(tf.square(tf.sub(value, t.returns))) as tf.Scalar;
    const critic = this.criticLoss(t, features);
    const valueLosses = tf.mul(critic ? tf.add(valueLoss, critic) : valueLoss, hp.valueCoef);
    if (kind.loss === 'imitation') {
      const crossEntropy = tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(logits), t.chosen), 1))) as tf.Scalar;
      const accuracy = tf.mean(tf.cast(tf.equal(tf.argMax(logits, 1), t.actions), 'float32')) as tf.Scalar;
      return { loss: tf.add(crossEntropy, valueLosses) as tf.Scalar, report: [crossEntropy, valueLoss, accuracy, ...(critic ? [critic] : [])] };
    }
    const logAll = tf.logSoftmax(logits);
    const logProb = tf.sum(tf.mul(logAll, t.chosen), 1);
    const logRatio = tf.sub(logProb, t.oldLogProbs);
    const ratio = tf.exp(logRatio);
    const clipped = tf.clipByValue(ratio, 1 - hp.clip, 1 + hp.clip);
    const policyLoss = tf.neg(tf.mean(tf.minimum(tf.mul(ratio, t.advantages), tf.mul(clipped, t.advantages)))) as tf.Scalar;
    // Masked logits are -1e9: their probability is exactly 0, so p * log p adds 0 there.
    const entropy = tf.neg(tf.mean(tf.sum(tf.mul(tf.exp(logAll), logAll), 1))) as tf.Scalar;
    // KL(old || new) estimated as the mean of (r - 1) - log r (Schulman's "k3"), each term >= 0
    // (floored at 0 against float32 rounding where r is within an ulp of 1); the mean of -log r
    // dips below 0 when the policy barely moves.
    const approxKl = tf.mean(tf.relu(tf.sub(tf.sub(ratio, 1), logRatio))) as tf.Scalar;
    const clipFraction = tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), hp.clip), 'float32')) as tf.Scalar;
    const full = tf.add(policyLoss, tf.sub(valueLosses, tf.mul(entropy, hp.entropyCoef)));
    // Zero times the policy's losses keeps its weights in the gradient list (Adam keys its moments by position).
    const loss = (kind.criticOnly ? tf.add(tf.mul(critic!, hp.valueCoef), tf.mul(full, 0)) : full) as tf.Scalar;
    return { loss, report: [policyLoss, valueLoss, entropy, approxKl, clipFraction, ...(critic ? [critic] : [])] };
  }

  /** The oracle critic's squared error against the returns; null without a critic. */
  private criticLoss(t: MinibatchTensors, features: tf.Tensor2D | undefined): tf.Scalar | null {
    if (!this.critic) return null;
    if (!t.otherHands) throw new Error('an oracle critic needs batches with the other seats\' hands (collected with recordOtherHands)');
    const input = this.critic.onTrunk ? features! : t.obs;
    return tf.mean(tf.square(tf.sub(this.critic.forward(input, t.otherHands, true), t.returns))) as tf.Scalar;
  }

  /**
   * The one minibatch loop: `epochs` passes over the batch in an order drawn from `stream`, one
   * Adam step per minibatch on the loss of `kind` (`lossOf`) with its gradients clipped to
   * `maxGradNorm` (global norm). Returns the mean over minibatches of the scalars `lossOf`
   * reports (named by `names`) and of the gradient norm before clipping.
   */
  private optimize<K extends string>(batch: Batch, advantages: Float32Array, stream: string, names: readonly K[], kind: LossKind): Record<K | 'gradNorm', number> {
    const { hp } = this;
    const sums = Object.fromEntries([...names, 'gradNorm'].map((k) => [k, 0])) as Record<K | 'gradNorm', number>;
    if (batch.size === 0) return sums;
    const random = seedrandom.alea(stream);
    const order = Array.from({ length: batch.size }, (_, i) => i);
    let minibatches = 0;
    for (let epoch = 0; epoch < hp.epochs; epoch++) {
      shuffle(order, random);
      for (let start = 0; start < batch.size; start += hp.minibatchSize) {
        const rows = order.slice(start, start + hp.minibatchSize);
        // A tail much smaller than a minibatch adds noise and time for little signal.
        if (rows.length < Math.min(hp.minibatchSize, batch.size) / 4) continue;
        const values = this.step(batch, rows, advantages, kind);
        names.forEach((k, j) => (sums[k] += values[j]!));
        sums.gradNorm += values[names.length]!;
        minibatches++;
      }
    }
    for (const k of Object.keys(sums) as (K | 'gradNorm')[]) sums[k] /= Math.max(1, minibatches);
    return sums;
  }

  /**
   * One clipped Adam step on the minibatch `rows` of `batch`; returns the reported scalars, then
   * the gradient norm. With K - 1 helper threads the rows are cut into K consecutive parts: this
   * thread differentiates the first while each helper does one of the others, and the gradients
   * (and scalars) are averaged, weighted by rows, in part order.
   */
  private step(batch: Batch, rows: number[], advantages: Float32Array, kind: LossKind): number[] {
    const { hp, helpers } = this;
    const parts = Math.min(helpers.length + 1, rows.length);
    const bounds = Array.from({ length: parts + 1 }, (_, j) => Math.ceil((j * rows.length) / parts));
    const weights = parts > 1 ? this.variableValues() : [];
    for (let j = 1; j < parts; j++) helpers[j - 1]!.begin({ kind, rows: gather(batch, rows.slice(bounds[j], bounds[j + 1]), advantages), weights });
    return tf.tidy(() => {
      let own;
      let others: GradientPart[];
      try {
        own = this.gradients(gather(batch, parts > 1 ? rows.slice(0, bounds[1]) : rows, advantages), kind);
      } finally {
        // Every helper's reply is taken, whatever failed: a helper left in flight refuses the next job.
        others = finishAll(helpers.slice(0, parts - 1));
      }
      let { grads, report: values } = own;
      if (parts > 1) {
        // Each part's share of the rows; the last takes what the others leave, so that the shares sum to 1.
        const shares = bounds.slice(1, -1).map((b, j) => (b - bounds[j]!) / rows.length);
        shares.push(1 - shares.reduce((sum, share) => sum + share, 0));
        grads = grads.map((g) => tf.mul(g, shares[0]!));
        values = values.map((v) => v * shares[0]!);
        others.forEach((part, j) => {
          grads = grads.map((g, i) => tf.add(g, tf.mul(tf.tensor(part.grads[i]!, g.shape), shares[j + 1]!)));
          values = values.map((v, k) => v + part.report[k]! * shares[j + 1]!);
        });
      }
      const norm = tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g)))));
      const normValue = norm.dataSync()[0]!;
      const scale = normValue > hp.maxGradNorm ? hp.maxGradNorm / normValue : 1;
      const variables = this.variables();
      const clipped: Record<string, tf.Tensor> = {};
      grads.forEach((g, i) => (clipped[variables[i]!.name] = scale === 1 ? g : tf.mul(g, scale)));
      // A critic-only step gives the policy zero gradients, but Adam still moves weights that
      // carry momentum (from imitation updates): they are put back, so the policy is held still.
      const held = kind.loss === 'ppo' && kind.criticOnly ? this.policyVariables() : [];
      const before = held.map((v) => v.clone());
      this.optimizer.applyGradients(clipped as unknown as Parameters<tf.AdamOptimizer['applyGradients']>[0]);
      held.forEach((v, i) => v.assign(before[i]!));
      return [...values, normValue];
    });
  }

  /** The gradients of the mean loss over `rows`, one per variable in `variables()` order, and the reported scalars. */
  private gradients(rows: GatheredRows, kind: LossKind): { grads: tf.Tensor[]; report: number[] } {
    const m = rows.actions.length;
    const actions = tf.tensor1d(rows.actions, 'int32');
    const t: MinibatchTensors = {
      obs: tf.tensor2d(rows.obs, [m, OBS_SIZE]),
      masks: tf.tensor2d(rows.masks, [m, NUM_ACTIONS], 'bool') as tf.Tensor2D,
      actions,
      chosen: tf.oneHot(actions, NUM_ACTIONS),
      oldLogProbs: tf.tensor1d(rows.oldLogProbs),
      advantages: tf.tensor1d(rows.adv),
      returns: tf.tensor1d(rows.returns),
      otherHands: rows.otherHands ? tf.tensor2d(rows.otherHands, [m, ORACLE_SIZE]) : null,
    };
    let report: tf.Scalar[] = [];
    const variables = this.variables();
    const { grads } = tf.variableGrads(() => {
      const out = this.lossOf(kind, t);
      // Kept: variableGrads disposes everything its function made but the loss.
      report = out.report.map((r) => tf.keep(r));
      return out.loss;
    }, variables);
    const values = report.map((r) => r.dataSync()[0]!);
    report.forEach((r) => r.dispose());
    return {
      grads: variables.map((v) => {
        // Adam keys its moments by position: every variable needs its gradient, every step.
        if (!grads[v.name]) throw new Error(`the loss does not reach ${v.name}`);
        return grads[v.name]!;
      }),
      report: values,
    };
  }

  /** A helper's part of a minibatch (training/gradient-worker.ts): gradients and scalars as arrays. */
  partGradients(rows: GatheredRows, kind: LossKind): { grads: Float32Array[]; report: number[] } {
    let report: number[] = [];
    const grads = tidyData(() => {
      const part = this.gradients(rows, kind);
      report = part.report;
      return part.grads;
    });
    return { grads, report };
  }

  /** Every trainable variable's value, in `variables()` order (what a helper thread is sent). */
  private variableValues(): Float32Array[] {
    return this.variables().map((v) => v.dataSync() as Float32Array);
  }

  /** Sets the trainable variables from arrays in `variables()` order (a helper's replica). */
  setVariables(values: readonly Float32Array[]): void {
    const variables = this.variables();
    if (values.length !== variables.length) throw new Error(`expected ${variables.length} weight arrays, got ${values.length}`);
    tf.tidy(() => variables.forEach((v, i) => v.assign(tf.tensor(values[i]!, v.shape))));
  }

  /**
   * The learner's own trainable variables (the policy's, then the critic's), in a fixed order:
   * Adam keys its moments by position, and other models in the process (league snapshots) must
   * not be touched.
   */
  private variables(): tf.Variable[] {
    const policy = this.policyVariables();
    return this.critic ? [...policy, ...this.critic.trainableVariables] : policy;
  }

  /** The policy network's trainable variables (its trunk and both heads). */
  private policyVariables(): tf.Variable[] {
    return this.agent.model.trainableWeights.map((w) => w.read() as tf.Variable);
  }

  /**
   * Adam's state (step count, moments, and the running powers of its betas) as named arrays, for
   * checkpoints (checkpoints/optimizer-state.ts).
   */
  async optimizerState(): Promise<NamedArray[]> {
    const weights = await this.optimizer.getWeights();
    const powers = adamPowers(this.optimizer);
    return [
      ...weights.map((w) => ({ name: w.name, shape: w.tensor.shape, data: w.tensor.dataSync() as Float32Array })),
      ...ADAM_POWERS.map((name) => ({ name, shape: [], data: powers[name].dataSync() as Float32Array })),
    ];
  }

  /**
   * Restores Adam's state from `optimizerState()`'s arrays (of the checkpoint at `path`); a
   * checkpoint whose arrays do not fit is refused here (it failed in the first update, after the
   * run's config was rewritten).
   */
  async restoreOptimizer(state: readonly NamedArray[], path: string): Promise<void> {
    checkAdamState(state, this.variables().map((v) => v.shape), path);
    await this.optimizer.setWeights(state.filter((w) => !isAdamPower(w.name)).map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape) })));
    // setWeights recomputes the powers as beta^(t+1), a few float32 ulps from the product the
    // running optimizer keeps: a resumed run drifted from the uninterrupted one after some
    // updates. Checkpoints from before they were saved keep the recomputed ones.
    const powers = adamPowers(this.optimizer);
    for (const w of state) if (isAdamPower(w.name) && w.data.length === 1) powers[w.name].assign(tf.scalar(w.data[0]!));
  }
}

/** The replies of `helpers`, each with a job in flight; throws the first failure once all have answered. */
function finishAll(helpers: readonly GradientHelper[]): GradientPart[] {
  const replies = helpers.map((h) => {
    try {
      return h.finish();
    } catch (e) {
      return e as Error;
    }
  });
  const failure = replies.find((r): r is Error => r instanceof Error);
  if (failure) throw failure;
  return replies as GradientPart[];
}

/** Adam's running products of beta1 and beta2, which tfjs keeps in fields of these names. */
function adamPowers(optimizer: tf.AdamOptimizer): Record<AdamPower, tf.Variable> {
  return optimizer as unknown as Record<AdamPower, tf.Variable>;
}

/** Metric names, with `criticLoss` last when there is a critic (its loss is reported last). */
function withCritic<K extends string>(critic: OracleCritic | null, names: readonly K[]): readonly (K | 'criticLoss')[] {
  return critic ? [...names, 'criticLoss'] : names;
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
  const otherHands = batch.otherHands ? new Float32Array(m * ORACLE_SIZE) : null;
  rows.forEach((r, k) => {
    if (otherHands) otherHands.set(batch.otherHands!.subarray(r * ORACLE_SIZE, (r + 1) * ORACLE_SIZE), k * ORACLE_SIZE);
    obs.set(batch.observations.subarray(r * OBS_SIZE, (r + 1) * OBS_SIZE), k * OBS_SIZE);
    masks.set(batch.masks.subarray(r * NUM_ACTIONS, (r + 1) * NUM_ACTIONS), k * NUM_ACTIONS);
    actions[k] = batch.actions[r]!;
    oldLogProbs[k] = batch.logProbs[r]!;
    adv[k] = advantages[r]!;
    returns[k] = batch.returns[r]!;
  });
  return { obs, masks, actions, oldLogProbs, adv, returns, otherHands };
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

/**
 * The batch as the learner's network reads it (PolicyAgent.networkRows), once per update; with
 * suit symmetry the other seats' hands are relabelled alike for the oracle critic (which values
 * batches the same way, OracleCritic.batchValues).
 */
function inNetworkLabels(agent: PolicyAgent, batch: Batch): Batch {
  if (!agent.suitSymmetry) return batch;
  const rows = agent.networkRows(batch.observations, batch.masks, batch.actions);
  return {
    ...batch,
    observations: rows.observations,
    masks: rows.masks,
    actions: rows.actions!,
    ...(batch.otherHands && { otherHands: canonicalCardRows(batch.otherHands, ORACLE_SIZE, rows.relabellings!) }),
  };
}

/**
 * Throws "training diverged" (field learningRate) when a loss of update `update` is no longer a
 * number: the weights are gone too, and whatever learns on from them (or is saved, or played)
 * holds none. `after` ends the message (what is left intact).
 */
export function checkLossesFinite(losses: object, update: number, config: { learningRate: number; maxGradNorm: number }, after = ''): void {
  for (const [name, value] of Object.entries(losses)) {
    if (!Number.isFinite(value)) {
      throw new ValidationError('training diverged', 'learningRate', `update ${update}: ${name} is ${value}; the weights no longer hold numbers (learningRate ${config.learningRate}, maxGradNorm ${config.maxGradNorm})${after}`);
    }
  }
}
