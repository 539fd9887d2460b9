// A LayersModel as the two standard TF.js files, model.json and weights.bin, in memory. This is
// the format the browser's `tf.loadLayersModel(url)` reads; the file:// handler that writes it
// in Node belongs to tfjs-node, which is optional, so the files go through node:fs instead.

import { createHash } from 'node:crypto';
import { tf } from '../agents/tfjs.js';
import { checkPolicyTopology, type PolicyArchitecture } from '../agents/policy-agent.js';
import { CheckpointError } from './errors.js';
import { WEIGHTS_FILE } from './manifest.js';
import { parseCheckpointJson } from './safe-read.js';
import { utf8Text } from '../env/json-scan.js';

export interface ModelFiles {
  modelJson: Uint8Array;
  weights: Uint8Array;
}

export async function modelToFiles(model: tf.LayersModel): Promise<ModelFiles> {
  let artifacts: tf.io.ModelArtifacts | undefined;
  await model.save(
    tf.io.withSaveHandler(async (a) => {
      artifacts = a;
      return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON(a) };
    }),
  );
  if (!artifacts?.modelTopology || !artifacts.weightSpecs || !artifacts.weightData) {
    throw new Error('TF.js returned no model topology or weights to save');
  }
  // Same fields, in the same order, as TF.js's own http/file handlers write.
  const json: tf.io.ModelJSON = {
    modelTopology: artifacts.modelTopology,
    format: artifacts.format,
    generatedBy: artifacts.generatedBy,
    convertedBy: artifacts.convertedBy,
    weightsManifest: [{ paths: [WEIGHTS_FILE], weights: artifacts.weightSpecs }],
  };
  if (artifacts.trainingConfig) json.trainingConfig = artifacts.trainingConfig;
  if (artifacts.userDefinedMetadata) json.userDefinedMetadata = artifacts.userDefinedMetadata;
  return {
    modelJson: new TextEncoder().encode(JSON.stringify(json)),
    weights: new Uint8Array(tf.io.CompositeArrayBuffer.join(artifacts.weightData)),
  };
}

/**
 * Builds the model from the two files' bytes; `where` names the checkpoint in errors. The
 * topology must be `expected`'s policy network before anything is built, and the weights plain,
 * finite float32 numbers.
 */
export async function modelFromFiles(files: ModelFiles, where: string, expected: PolicyArchitecture): Promise<tf.LayersModel> {
  const json = parseModelJson(files.modelJson, where);
  try {
    checkPolicyTopology(json.modelTopology, expected);
  } catch (e) {
    throw new CheckpointError('bad-model', where, (e as Error).message);
  }
  const weightData = checkedWeightData(json, files.weights, where);
  try {
    const artifacts = await tf.io.getModelArtifactsForJSON(json, async (m) => [tf.io.getWeightSpecs(m), weightData]);
    return await tf.loadLayersModel(tf.io.fromMemory(artifacts));
  } catch (e) {
    throw new CheckpointError('bad-model', where, `TF.js could not load the model: ${(e as Error).message}`);
  }
}

/**
 * Writes the weights of `files` into `model`, a network built from a model.json identical to
 * theirs, as `tf.loadLayersModel` writes them into a network it has just built: by name, every
 * one. No layer is made, so TF.js's registry of names does not grow (shared-models.ts).
 */
export function loadWeightsInto(model: tf.LayersModel, files: ModelFiles, where: string): void {
  const json = parseModelJson(files.modelJson, where);
  const weightData = checkedWeightData(json, files.weights, where);
  const specs = json.weightsManifest.flatMap((group) => group.weights);
  const bytes = specs.reduce((sum, spec) => sum + 4 * spec.shape.reduce((a, b) => a * b, 1), 0);
  if (bytes !== weightData.byteLength) throw new CheckpointError('bad-model', where, `${WEIGHTS_FILE} holds ${weightData.byteLength} bytes; model.json's weights need ${bytes}`);
  const tensors = tf.io.decodeWeights(weightData, specs);
  try {
    model.loadWeights(tensors, true);
  } catch (e) {
    throw new CheckpointError('bad-model', where, `TF.js could not load the weights: ${(e as Error).message}`);
  } finally {
    tf.dispose(Object.values(tensors));
  }
}

/**
 * The family of a model.json (shared-models.ts): networks built from files of one family compute
 * the same function of their weights, so one can take another's weights. That is the whole file
 * but the layers' initializers, which only choose the weights of a network built to be trained
 * (each training seed has its own); null when it is no model.json (building it will say why).
 */
export function modelFamily(modelJson: Uint8Array): string | null {
  let json: unknown;
  try {
    json = JSON.parse(utf8Text(modelJson));
  } catch {
    return null;
  }
  let text: string;
  try {
    text = JSON.stringify(json, (key, value: unknown) => (key.endsWith('_initializer') ? undefined : value));
  } catch {
    // Nested past the stack (JSON.parse reads deeper than stringify writes): no family.
    return null;
  }
  return createHash('sha256').update(text).digest('hex');
}

function parseModelJson(bytes: Uint8Array, where: string): tf.io.ModelJSON {
  const json = parseCheckpointJson(bytes, 'model.json', where, 'bad-model') as tf.io.ModelJSON;
  const manifest = json?.weightsManifest;
  const paths = Array.isArray(manifest) ? manifest.flatMap((group) => group.paths) : null;
  if (typeof json?.modelTopology !== 'object' || json.modelTopology === null || paths?.length !== 1 || paths[0] !== WEIGHTS_FILE) {
    throw new CheckpointError('bad-model', where, `model.json must have a modelTopology and one weights file ${WEIGHTS_FILE}`);
  }
  return json;
}

/** An exact ArrayBuffer of the weights (a Node Buffer may be a view into a larger pool), checked by checkWeightValues. */
function checkedWeightData(json: tf.io.ModelJSON, weights: Uint8Array, where: string): ArrayBuffer {
  const weightData = weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength) as ArrayBuffer;
  checkWeightValues(json, weightData, where);
  return weightData;
}

/**
 * A policy's weights are plain float32 numbers, all finite: a NaN or an infinity (an edited file,
 * or a run that diverged) would make every probability NaN, and the agent's choices meaningless.
 */
function checkWeightValues(json: tf.io.ModelJSON, weightData: ArrayBuffer, where: string): void {
  const specs = json.weightsManifest.flatMap((group) => (Array.isArray(group.weights) ? group.weights : []));
  const unusual = specs.find((spec) => spec?.dtype !== 'float32' || spec.quantization !== undefined);
  if (unusual) throw new CheckpointError('bad-model', where, `model.json: weight ${JSON.stringify(unusual?.name ?? null)} is not plain float32`);
  const floats = new Float32Array(weightData, 0, weightData.byteLength >> 2);
  for (let i = 0; i < floats.length; i++) {
    if (!Number.isFinite(floats[i]!)) throw new CheckpointError('bad-model', where, `weights.bin holds a non-finite number (${floats[i]}) at weight ${i}`);
  }
}
