// The TF.js policy: an MLP over the observation vector with a policy head (NUM_ACTIONS logits,
// illegal actions masked before the softmax) and a value head, and the Agent that plays it.

import seedrandom from 'seedrandom';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { canonicalObservations, envAction, relabelActionRows, relabelActions, relabellings, type SuitSymmetry } from '../env/suit-symmetry.js';
import { checkBatch, type Agent } from './agent.js';
import { tf, tidyData } from './tfjs.js';

/**
 * The logit given to illegal actions. Finite on purpose: softmax still sends it to exactly 0,
 * while log-softmax and `p * log p` (entropy) stay finite where -Infinity would make NaN.
 */
export const MASKED_LOGIT = -1e9;

export const ACTIVATIONS = ['relu', 'tanh', 'elu', 'selu', 'swish'] as const;
export type Activation = (typeof ACTIVATIONS)[number];

export interface PolicyArchitecture {
  /** Widths of the hidden layers shared by both heads. @default [256, 256] */
  hiddenSizes: number[];
  /** @default 'relu' */
  activation: Activation;
}

export const DEFAULT_ARCHITECTURE: Readonly<PolicyArchitecture> = Object.freeze({ hiddenSizes: [256, 256], activation: 'relu' });

/** Output names of the model, fixed so training code and checkpoints can rely on them. */
export const POLICY_OUTPUT = 'policy_logits';
export const VALUE_OUTPUT = 'value';

/**
 * Builds the network: OBS_SIZE inputs -> hidden layers -> [logits (N x NUM_ACTIONS), value (N x 1)].
 * Weights are a function of `seed` alone (TF.js seeded initializers draw on the JS side, so
 * every backend gets the same numbers).
 */
export function createPolicyModel(architecture: Partial<PolicyArchitecture> = {}, seed = 0): tf.LayersModel {
  const arch = { ...DEFAULT_ARCHITECTURE, ...architecture };
  if (arch.hiddenSizes.length === 0 || !arch.hiddenSizes.every((h) => Number.isInteger(h) && h > 0)) {
    throw new RangeError(`hiddenSizes must be positive integers, got [${arch.hiddenSizes.join(', ')}]`);
  }
  // Each layer gets its own seed: one seed for all would give identically-shaped layers equal weights.
  let layerSeed = seed * 1000;
  const glorot = () => tf.initializers.glorotUniform({ seed: layerSeed++ });
  const input = tf.input({ shape: [OBS_SIZE], name: 'observation' });
  let x: tf.SymbolicTensor = input;
  arch.hiddenSizes.forEach((units, i) => {
    x = tf.layers
      .dense({ units, activation: arch.activation, kernelInitializer: glorot(), name: `hidden_${i}` })
      .apply(x) as tf.SymbolicTensor;
  });
  // A small policy head starts near the uniform policy, the usual PPO initialization.
  const logits = tf.layers
    .dense({
      units: NUM_ACTIONS,
      kernelInitializer: tf.initializers.varianceScaling({ scale: 0.01, mode: 'fanAvg', distribution: 'uniform', seed: layerSeed++ }),
      name: POLICY_OUTPUT,
    })
    .apply(x) as tf.SymbolicTensor;
  const value = tf.layers.dense({ units: 1, kernelInitializer: glorot(), name: VALUE_OUTPUT }).apply(x) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: [logits, value], name: 'kratzen_policy' });
}

/** Bounds of a policy's hidden layers (training configs and checkpoint manifests alike). */
export const MAX_HIDDEN_WIDTH = 4096;
export const MAX_HIDDEN_LAYERS = 8;

/** Weights (kernels and biases) of dense layers from `inputs` through `hiddenSizes` to `outputs` units. */
export function denseWeightCount(inputs: number, hiddenSizes: readonly number[], outputs: number): number {
  let total = 0;
  for (const units of [...hiddenSizes, outputs]) {
    total += inputs * units + units;
    inputs = units;
  }
  return total;
}

/** Bytes of the float32 weights of the network createPolicyModel builds (its weights.bin). */
export function policyWeightBytes(architecture: Pick<PolicyArchitecture, 'hiddenSizes'>): number {
  const lastHidden = architecture.hiddenSizes[architecture.hiddenSizes.length - 1] ?? OBS_SIZE;
  // The logits' stack, and the value head beside the logits on the last hidden layer.
  return 4 * (denseWeightCount(OBS_SIZE, architecture.hiddenSizes, NUM_ACTIONS) + lastHidden + 1);
}

/** Throws unless `model` maps OBS_SIZE inputs to [NUM_ACTIONS logits, 1 value]. */
export function checkPolicyModel(model: tf.LayersModel): void {
  const inShape = model.inputs.length === 1 ? model.inputs[0]!.shape : null;
  const outShapes = model.outputs.map((o) => o.shape);
  const ok =
    inShape?.length === 2 &&
    inShape[1] === OBS_SIZE &&
    outShapes.length === 2 &&
    outShapes[0]![1] === NUM_ACTIONS &&
    outShapes[1]![1] === 1;
  if (!ok) {
    throw new Error(
      `not a policy model: expected input [null, ${OBS_SIZE}] and outputs [[null, ${NUM_ACTIONS}], [null, 1]], ` +
        `got input ${JSON.stringify(inShape)} and outputs ${JSON.stringify(outShapes)}`,
    );
  }
}

/**
 * Checks a model.json topology before TF.js builds it: exactly the layers createPolicyModel makes
 * for `architecture` (the input, the hidden Dense layers of its widths, the two heads), nothing
 * else. TF.js allocates every layer it reads, so a 3 KB edit of one `units` would otherwise cost
 * gigabytes before the weights fail to fit.
 */
export function checkPolicyTopology(topology: unknown, architecture: PolicyArchitecture): void {
  const fail = (reason: string): never => {
    throw new Error(`model.json does not describe the manifest's policy network (hidden layers [${architecture.hiddenSizes.join(', ')}]): ${reason}`);
  };
  const layers = (topology as { config?: { layers?: unknown } } | null)?.config?.layers;
  if (!Array.isArray(layers)) return fail('no layer list');
  const expected: [className: string, name: string, units: number | null][] = [
    ['InputLayer', 'observation', null],
    ...architecture.hiddenSizes.map((units, i): [string, string, number] => ['Dense', `hidden_${i}`, units]),
    ['Dense', POLICY_OUTPUT, NUM_ACTIONS],
    ['Dense', VALUE_OUTPUT, 1],
  ];
  if (layers.length !== expected.length) return fail(`${layers.length} layers, expected ${expected.length}`);
  layers.forEach((layer: unknown, i) => {
    const [className, name, units] = expected[i]!;
    const { class_name: actualClass, config } = (layer ?? {}) as { class_name?: unknown; config?: { name?: unknown; units?: unknown; batch_input_shape?: unknown } };
    if (actualClass !== className || config?.name !== name) return fail(`layer ${i} is ${JSON.stringify(actualClass)} ${JSON.stringify(config?.name)}, expected ${className} "${name}"`);
    if (units === null) {
      const shape = config.batch_input_shape;
      if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== null || shape[1] !== OBS_SIZE) return fail(`input shape ${JSON.stringify(shape)}, expected [null, ${OBS_SIZE}]`);
    } else if (config.units !== units) return fail(`layer "${name}" has ${JSON.stringify(config.units)} units, expected ${units}`);
  });
}

/** The hidden Dense layers of a policy model, input side first (everything but the two heads). */
function hiddenLayers(model: tf.LayersModel) {
  return model.layers.filter((l) => l.getClassName() === 'Dense' && l.name !== POLICY_OUTPUT && l.name !== VALUE_OUTPUT);
}

/** The hidden layers of a policy model as an architecture; throws if they do not form one. */
export function architectureOf(model: tf.LayersModel): PolicyArchitecture {
  const hidden = hiddenLayers(model).map((l) => l.getConfig() as { units: number; activation: string });
  const activation = hidden[0]?.activation as Activation | undefined;
  if (!activation || !ACTIVATIONS.includes(activation) || hidden.some((h) => h.activation !== activation)) {
    throw new Error(`not a policy model: hidden layers must be Dense with one activation of ${ACTIVATIONS.join(', ')}`);
  }
  return { hiddenSizes: hidden.map((h) => h.units), activation };
}

export function sameArchitecture(a: PolicyArchitecture, b: PolicyArchitecture): boolean {
  return a.activation === b.activation && a.hiddenSizes.join() === b.hiddenSizes.join();
}

export type PolicyMode = 'greedy' | 'sample';

export interface PolicyAgentOptions {
  /** A model to play (e.g. loaded from a checkpoint); built from `architecture` and `seed` when absent. */
  model?: tf.LayersModel;
  /** @default DEFAULT_ARCHITECTURE, or read from `model` (and checked against it when both are given) */
  architecture?: Partial<PolicyArchitecture>;
  /** Seeds the weight initialization (when the model is built here) and the sampling generator. @default 0 */
  seed?: number;
  /** `greedy` plays the most probable legal action, `sample` draws from the policy. @default 'sample' */
  mode?: PolicyMode;
  /** @default 'policy' */
  name?: string;
  /** Whether `dispose()` disposes the model. @default true when built here, false for a given `model` */
  ownsModel?: boolean;
  /** Called once by `dispose()` (a shared model's release, checkpoints/shared-models.ts). */
  onDispose?: () => void;
  /**
   * The network reads the cards with the suits relabelled so that trump is suit 0 (`true`), and
   * with `'holding'` the plain suits ordered by the observer's holding; its actions are
   * relabelled back (env/suit-symmetry.ts): what it learns about one trump suit holds for all
   * four. A property of the weights, kept in checkpoints. @default false
   */
  suitSymmetry?: SuitSymmetry;
}

/** Rows as the network reads them (see `PolicyAgent.networkRows`). */
export interface NetworkRows {
  observations: Float32Array;
  masks: Uint8Array;
  /** With actions given: the same actions in the network's labels. */
  actions?: Int32Array;
  /** Each row's relabelling id (env/suit-symmetry.ts); null when the network reads rows as they are. */
  relabellings: Int8Array | null;
}

export interface PolicyEvaluation {
  /** N x NUM_ACTIONS; 0 for illegal actions, each row sums to 1. */
  probs: Float32Array;
  /** N state values. */
  values: Float32Array;
  /** N x NUM_ACTIONS masked logits (illegal actions at MASKED_LOGIT). */
  logits: Float32Array;
}

export class PolicyAgent implements Agent {
  readonly name: string;
  readonly model: tf.LayersModel;
  readonly architecture: PolicyArchitecture;
  readonly seed: number;
  mode: PolicyMode;
  private rng: () => number;
  private readonly ownsModel: boolean;
  private onDispose: (() => void) | undefined;
  private withFeatures: tf.LayersModel | null = null;
  readonly suitSymmetry: SuitSymmetry;

  constructor(options: PolicyAgentOptions = {}) {
    this.seed = options.seed ?? 0;
    const wanted = { ...DEFAULT_ARCHITECTURE, ...options.architecture };
    this.model = options.model ?? createPolicyModel(wanted, this.seed);
    checkPolicyModel(this.model);
    // Read back from the model, so a checkpoint of this agent describes the weights it holds.
    this.architecture = architectureOf(this.model);
    if (options.model && options.architecture && !sameArchitecture(this.architecture, wanted)) {
      throw new Error(`the model's architecture ${JSON.stringify(this.architecture)} is not the one given, ${JSON.stringify(wanted)}`);
    }
    this.ownsModel = options.ownsModel ?? options.model === undefined;
    this.onDispose = options.onDispose;
    this.mode = options.mode ?? 'sample';
    this.name = options.name ?? 'policy';
    this.rng = seedrandom.alea(`policy:${this.seed}`);
    this.suitSymmetry = options.suitSymmetry ?? false;
  }

  /**
   * N rows (observations N x OBS_SIZE, masks N x NUM_ACTIONS, optionally the actions taken) as
   * the network reads them: with suit symmetry each row relabelled as its suits say, else the very
   * same arrays. `forward` takes these; a learner converts its batch once per update.
   */
  networkRows(observations: Float32Array, masks: Uint8Array, actions?: Int32Array): NetworkRows {
    if (!this.suitSymmetry) return { observations, masks, ...(actions && { actions }), relabellings: null };
    const ids = relabellings(observations, this.suitSymmetry);
    return {
      observations: canonicalObservations(observations, ids),
      masks: relabelActionRows(masks, ids, true),
      ...(actions && { actions: relabelActions(actions, ids, true) }),
      relabellings: ids,
    };
  }

  /** Restarts the sampling generator, so a run can be repeated exactly. */
  reseed(seed: number | string = this.seed): void {
    this.rng = seedrandom.alea(`policy:${seed}`);
  }

  /**
   * Masked logits and values as tensors, for use inside the caller's `tf.tidy` or gradient
   * function (the PPO learner). `obs` N x OBS_SIZE float32, `mask` N x NUM_ACTIONS (nonzero = legal),
   * both as `networkRows` gives them; so are the logits' action labels. With `withFeatures`, also
   * the last hidden layer's activations (N x its width), from the same pass.
   */
  forward(obs: tf.Tensor2D, mask: tf.Tensor2D, training = false, withFeatures = false): { logits: tf.Tensor2D; value: tf.Tensor1D; features?: tf.Tensor2D } {
    return tf.tidy(() => {
      const model = withFeatures ? this.featureModel() : this.model;
      const [raw, value, features] = model.apply(obs, { training }) as tf.Tensor2D[];
      // where(), not an added penalty: illegal logits are exactly MASKED_LOGIT and get no gradient.
      const logits = tf.where(tf.cast(mask, 'bool'), raw!, tf.fill(raw!.shape, MASKED_LOGIT)) as tf.Tensor2D;
      return { logits, value: value!.reshape([-1]) as tf.Tensor1D, ...(features ? { features } : {}) };
    });
  }

  /** The last hidden layer's activations of N observations (N x its width), e.g. for a critic head. */
  features(observations: Float32Array): Float32Array {
    const n = observations.length / OBS_SIZE;
    if (this.suitSymmetry) observations = canonicalObservations(observations, relabellings(observations, this.suitSymmetry));
    // apply, not predict: predict would cut the rows into batches of 32.
    return tidyData(() => [(this.featureModel().apply(tf.tensor2d(observations, [n, OBS_SIZE])) as tf.Tensor[])[2]!])[0]!;
  }

  /** Width of the last hidden layer (what `features` returns per row). */
  get featureSize(): number {
    return this.architecture.hiddenSizes[this.architecture.hiddenSizes.length - 1]!;
  }

  /** The model with the last hidden layer as a third output, sharing every weight (built on first use). */
  private featureModel(): tf.LayersModel {
    if (!this.withFeatures) {
      const hidden = hiddenLayers(this.model);
      const last = hidden[hidden.length - 1]!.output as tf.SymbolicTensor;
      this.withFeatures = tf.model({ inputs: this.model.inputs, outputs: [...this.model.outputs, last] });
    }
    return this.withFeatures;
  }

  /** Probabilities, values and masked logits of N rows (observations N x OBS_SIZE, masks N x NUM_ACTIONS). */
  evaluate(observations: Float32Array, masks: Uint8Array): PolicyEvaluation {
    const n = checkBatch(observations, masks);
    const rows = this.networkRows(observations, masks);
    const [probs, values, logits] = tidyData(() => {
      const { logits, value } = this.forward(tf.tensor2d(rows.observations, [n, OBS_SIZE]), tf.tensor2d(rows.masks, [n, NUM_ACTIONS], 'bool'));
      return [tf.softmax(logits), value, logits];
    }) as [Float32Array, Float32Array, Float32Array];
    const ids = rows.relabellings;
    if (!ids) return { probs, values, logits };
    return { probs: relabelActionRows(probs, ids, false), values, logits: relabelActionRows(logits, ids, false) };
  }

  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    // Seats are not an input (the observation encodes the observer's seat), but they size the batch.
    const n = checkBatch(observations, masks, seats);
    if (n === 0) return new Int32Array(0);
    const rows = this.networkRows(observations, masks);
    const [logits] = tidyData(() => [(this.model.predict(tf.tensor2d(rows.observations, [n, OBS_SIZE])) as tf.Tensor[])[0]!]) as [Float32Array];
    const actions = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const chosen = this.mode === 'greedy' ? greedyLegal(logits, rows.masks, i) : this.sampleLegal(logits, rows.masks, i);
      actions[i] = rows.relabellings ? envAction(chosen, rows.relabellings[i]!) : chosen;
    }
    return actions;
  }

  dispose(): void {
    if (this.ownsModel) this.model.dispose();
    const onDispose = this.onDispose;
    this.onDispose = undefined;
    onDispose?.();
  }

  /**
   * Draws from the softmax over the legal actions of row `row`, in float64 on the JS side so the
   * draw depends only on the seed (not on tf.multinomial's global generator or the backend).
   */
  private sampleLegal(logits: Float32Array, masks: Uint8Array, row: number): number {
    const base = row * NUM_ACTIONS;
    const best = greedyLegal(logits, masks, row);
    const max = logits[base + best]!;
    let total = 0;
    for (let a = 0; a < NUM_ACTIONS; a++) if (masks[base + a]) total += Math.exp(logits[base + a]! - max);
    // One draw per row whatever happens, so the generator stays in step across runs.
    let u = this.rng() * total;
    // Non-finite logits (a diverged model) make `total` NaN: play the argmax, still legal.
    if (!Number.isFinite(total)) return best;
    let last = best;
    for (let a = 0; a < NUM_ACTIONS; a++) {
      if (!masks[base + a]) continue;
      u -= Math.exp(logits[base + a]! - max);
      if (u < 0) return a;
      last = a;
    }
    return last; // rounding left u a hair above 0
  }
}

/** The legal action with the largest logit (lowest id on ties); throws if the row has none. */
function greedyLegal(logits: Float32Array, masks: Uint8Array, row: number): number {
  const base = row * NUM_ACTIONS;
  let best = -1;
  for (let a = 0; a < NUM_ACTIONS; a++) {
    if (!masks[base + a]) continue;
    if (best < 0 || logits[base + a]! > logits[base + best]!) best = a;
  }
  if (best < 0) throw new Error(`row ${row} has no legal action`);
  return best;
}

