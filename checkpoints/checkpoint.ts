// One checkpoint directory: written atomically (temp directory next to it, fsync, rename) and
// loaded only after its manifest, its compatibility with this build and every file hash check out.

import { access, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { NUM_ACTIONS, RuleSetError, type RuleSet } from '../env/rules/index.js';
import { OBS_SIZE, OBS_VERSION } from '../env/observation.js';
import { PolicyAgent, architectureOf, checkPolicyModel, policyWeightBytes, sameArchitecture, type PolicyAgentOptions } from '../agents/policy-agent.js';
import { ensureBackend, tf } from '../agents/tfjs.js';
import { makeDirs, syncDir, writeFileDurable } from './durable-fs.js';
import type { Reuse, SharedModels } from './shared-models.js';
import { CheckpointError } from './errors.js';
import {
  CHECKPOINT_FORMAT_VERSION,
  MANIFEST_FILE,
  MODEL_FILE,
  NAME_PATTERN,
  WEIGHTS_FILE,
  canonicalJson,
  manifestSchema,
  normalizeRules,
  sha256,
  type CheckpointManifest,
  type JsonValue,
} from './manifest.js';
import { loadWeightsInto, modelFamily, modelFromFiles, modelToFiles } from './model-files.js';
import { MAX_METADATA_BYTES, parseCheckpointJson, readRegularFile } from './safe-read.js';
import { firstIssue } from '../env/rules/zod-issue.js';

export type RulesInput = Record<string, unknown> | RuleSet;

/** A named binary blob stored beside the model, e.g. optimizer state, with a JSON description. */
export interface ExtraBlob {
  data: Uint8Array;
  meta?: JsonValue;
}

export interface CheckpointContent {
  agent: PolicyAgent;
  /** The rule set the policy was trained for; stored normalized. */
  rules: RulesInput;
  step: number;
  /** @default {} */
  metrics?: Record<string, number>;
  /** Stored as `<name>.bin`, hashed like the model files. @default {} */
  extras?: Record<string, ExtraBlob>;
}

export interface WrittenCheckpoint {
  dir: string;
  manifest: CheckpointManifest;
  /** sha256 of manifest.json, which pointers record so an edited manifest is caught. */
  manifestSha256: string;
}

const RESERVED_EXTRAS = new Set(['weights', 'manifest', 'model']);

/** Writes a new checkpoint at `dir`; a failure or crash never leaves anything under that name. */
export async function writeCheckpoint(dir: string, content: CheckpointContent): Promise<WrittenCheckpoint> {
  const parent = path.dirname(dir);
  const name = path.basename(dir);
  if (!NAME_PATTERN.test(name)) throw new CheckpointError('invalid-argument', dir, `checkpoint name must match ${NAME_PATTERN}`);
  let rules: Record<string, unknown>;
  try {
    rules = normalizeRules(content.rules);
  } catch (e) {
    if (e instanceof RuleSetError) throw new CheckpointError('invalid-argument', dir, e.message);
    throw e;
  }

  const { modelJson, weights } = await modelToFiles(content.agent.model);
  const files = new Map<string, Uint8Array>([
    [MODEL_FILE, modelJson],
    [WEIGHTS_FILE, weights],
  ]);
  const extras: CheckpointManifest['extras'] = {};
  for (const [extraName, blob] of Object.entries(content.extras ?? {})) {
    if (!NAME_PATTERN.test(extraName) || RESERVED_EXTRAS.has(extraName)) {
      throw new CheckpointError('invalid-argument', dir, `extra name '${extraName}' is reserved or not a plain name`);
    }
    files.set(`${extraName}.bin`, blob.data);
    extras[extraName] = { file: `${extraName}.bin`, meta: blob.meta ?? null };
  }
  const parsed = manifestSchema.safeParse({
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    rules,
    obsVersion: OBS_VERSION,
    numActions: NUM_ACTIONS,
    observationSize: OBS_SIZE,
    architecture: content.agent.architecture,
    ...(content.agent.suitSymmetry ? { suitSymmetry: content.agent.suitSymmetry } : {}),
    step: content.step,
    metrics: content.metrics ?? {},
    seed: content.agent.seed,
    createdAt: new Date().toISOString(),
    backend: tf.getBackend(),
    files: Object.fromEntries([...files].map(([file, data]) => [file, { sha256: sha256(data), bytes: data.byteLength }])),
    extras,
  });
  if (!parsed.success) throw new CheckpointError('invalid-argument', dir, firstIssue(parsed.error).message);
  const manifestBytes = new TextEncoder().encode(`${JSON.stringify(parsed.data, null, 2)}\n`);

  if (await exists(dir)) throw new CheckpointError('already-exists', dir, 'checkpoints are immutable; choose another name');
  makeDirs(parent);
  // The temp directory lies beside the target: rename() is atomic only within one file system.
  const temp = await mkdtemp(path.join(parent, `.tmp-${name}-`));
  try {
    for (const [file, data] of files) await writeFileDurable(path.join(temp, file), data);
    // The manifest last: a directory with a manifest had all its files written first.
    await writeFileDurable(path.join(temp, MANIFEST_FILE), manifestBytes);
    await syncDir(temp);
    await rename(temp, dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOTEMPTY' || e.code === 'EEXIST') throw new CheckpointError('already-exists', dir, 'written concurrently by another writer');
      throw e;
    });
  } catch (e) {
    await rm(temp, { recursive: true, force: true });
    throw e;
  }
  await syncDir(parent);
  return { dir, manifest: parsed.data, manifestSha256: sha256(manifestBytes) };
}

export interface LoadCheckpointOptions {
  /**
   * The rule set the caller plays; a checkpoint for other rules is refused. Omit it only to
   * take the checkpoint's own rules (`manifest.rules`) as the ones to play.
   */
  rules?: RulesInput;
  /** The manifest's sha256 as a pointer recorded it. */
  manifestSha256?: string;
  /**
   * Read only model.json and weights.bin (to play the policy): extras (optimizer, trainer
   * state) are neither read nor checked, and `extras` is empty. @default false
   */
  policyOnly?: boolean;
  /**
   * Shares the network with every other load of the same files through this pool (with
   * `policyOnly`; for agents that only play it): `model` is then the pool's, released when the
   * agent `toAgent` makes is disposed (one agent: once released, the pool may put another
   * checkpoint's weights into the network, so a second agent would play those).
   */
  sharedModels?: SharedModels;
  /**
   * The most bytes of weights the caller loads (the bridge's `--max-model-bytes`): a larger
   * network is refused (`too-large`) from its manifest, before any other file is read.
   */
  maxWeightBytes?: number;
}

export interface LoadedCheckpoint {
  dir: string;
  manifest: CheckpointManifest;
  /** The caller owns it (dispose it, or hand it to `toAgent`). */
  model: tf.LayersModel;
  extras: Map<string, ExtraBlob>;
  /** A PolicyAgent playing this model; it owns (and disposes) the model. */
  toAgent(options?: Omit<PolicyAgentOptions, 'model' | 'architecture' | 'suitSymmetry'>): PolicyAgent;
}

/** Reads and validates manifest.json alone (no file hashes): for listings. */
export async function readManifest(dir: string): Promise<{ manifest: CheckpointManifest; bytes: Uint8Array }> {
  const bytes = await readRegularFile(path.join(dir, MANIFEST_FILE), dir, { maxBytes: MAX_METADATA_BYTES });
  const json = parseCheckpointJson(bytes, MANIFEST_FILE, dir, 'bad-manifest');
  let parsed;
  try {
    parsed = manifestSchema.safeParse(json);
  } catch (e) {
    // The schema walks free-form JSON (extras' meta) recursively: 10,000 nested arrays there
    // overflowed the stack, reported as an invalid agent with the engine's message.
    if (e instanceof RangeError) throw new CheckpointError('bad-manifest', dir, `${MANIFEST_FILE} nests too deeply`);
    throw e;
  }
  if (!parsed.success) throw new CheckpointError('bad-manifest', dir, firstIssue(parsed.error).message);
  return { manifest: parsed.data, bytes };
}

/**
 * The sizes the manifest gives the policy's files, checked before they are read or fetched (a
 * manifest that promised a weights.bin of 1.5 GB for a small network had it read whole before
 * its hash failed); returns the weights' size.
 */
export function checkPolicyFileSizes(dir: string, manifest: CheckpointManifest): number {
  const weightBytes = policyWeightBytes(manifest.architecture);
  if (manifest.files[WEIGHTS_FILE]!.bytes !== weightBytes) {
    throw new CheckpointError('bad-manifest', dir, `${WEIGHTS_FILE}: the manifest says ${manifest.files[WEIGHTS_FILE]!.bytes} bytes; hidden layers [${manifest.architecture.hiddenSizes.join(', ')}] have ${weightBytes}`);
  }
  if (manifest.files[MODEL_FILE]!.bytes > MAX_METADATA_BYTES) {
    throw new CheckpointError('bad-manifest', dir, `${MODEL_FILE}: the manifest says ${manifest.files[MODEL_FILE]!.bytes} bytes, more than ${MAX_METADATA_BYTES}`);
  }
  return weightBytes;
}

/** Loads a checkpoint, refusing it (CheckpointError) unless every check passes. */
export async function loadCheckpoint(dir: string, options: LoadCheckpointOptions = {}): Promise<LoadedCheckpoint> {
  const { manifest, bytes } = await readManifest(dir);
  if (options.manifestSha256 !== undefined && sha256(bytes) !== options.manifestSha256) {
    throw new CheckpointError('hash-mismatch', dir, `${MANIFEST_FILE} differs from the one its pointer recorded`);
  }
  checkCompatible(dir, manifest, options.rules);
  const weightBytes = checkPolicyFileSizes(dir, manifest);
  // NaN turned the bound off (every comparison with it is false).
  if (options.maxWeightBytes !== undefined && !(options.maxWeightBytes >= 0)) throw new RangeError(`maxWeightBytes must be a number of bytes, got ${String(options.maxWeightBytes).slice(0, 40)}`);
  if (options.maxWeightBytes !== undefined && weightBytes > options.maxWeightBytes) {
    throw new CheckpointError('too-large', dir, `its network holds ${weightBytes} bytes of weights, more than this server loads (${options.maxWeightBytes}, --max-model-bytes)`);
  }

  const files = new Map<string, Uint8Array>();
  const toRead = options.policyOnly ? [MODEL_FILE, WEIGHTS_FILE] : Object.keys(manifest.files);
  for (const file of toRead) {
    const expected = manifest.files[file]!;
    const data = await readRegularFile(path.join(dir, file), dir, { exactBytes: expected.bytes });
    if (sha256(data) !== expected.sha256) {
      // Its size matches (read with exactBytes): the bytes differ, damaged or replaced.
      throw new CheckpointError('hash-mismatch', dir, `${file}: its SHA-256 is not the manifest's (${data.byteLength} bytes, as listed; the content was changed or damaged)`);
    }
    files.set(file, data);
  }
  await ensureBackend();
  const modelFiles = { modelJson: files.get(MODEL_FILE)!, weights: files.get(WEIGHTS_FILE)! };
  // The manifest must describe the network it plays (a crafted one might not), built or reused.
  const checkModel = (model: tf.LayersModel) => {
    try {
      checkPolicyModel(model);
      const actual = architectureOf(model);
      if (!sameArchitecture(actual, manifest.architecture)) {
        throw new Error(`model.json has architecture ${JSON.stringify(actual)}, the manifest says ${JSON.stringify(manifest.architecture)}`);
      }
    } catch (e) {
      throw new CheckpointError('bad-model', dir, (e as Error).message);
    }
  };
  const build = async () => {
    const built = await modelFromFiles(modelFiles, dir, manifest.architecture);
    try {
      checkModel(built);
    } catch (e) {
      built.dispose();
      throw e;
    }
    return built;
  };
  // A network of the same model.json, initializers aside, can take these weights.
  const family = modelFamily(modelFiles.modelJson);
  const reuse: Reuse | undefined = family === null ? undefined : {
    family,
    load: (model) => {
      checkModel(model);
      loadWeightsInto(model, modelFiles, dir);
    },
  };
  const shared = options.sharedModels && options.policyOnly
    ? await options.sharedModels.acquire(`${manifest.files[MODEL_FILE]!.sha256}:${manifest.files[WEIGHTS_FILE]!.sha256}`, weightBytes, build, reuse)
    : null;
  const model = shared ? shared.model : await build();
  const extras = new Map<string, ExtraBlob>();
  if (!options.policyOnly) for (const [name, extra] of Object.entries(manifest.extras)) extras.set(name, { data: files.get(extra.file)!, meta: extra.meta });
  let agentMade = false;
  return {
    dir,
    manifest,
    model,
    extras,
    toAgent: (agentOptions = {}) => {
      if (shared && agentMade) throw new Error(`${dir}: a checkpoint loaded from shared networks gives one agent; load it again for another`);
      agentMade = true;
      return new PolicyAgent({
        seed: manifest.seed,
        name: `policy:${path.basename(dir)}`,
        ownsModel: shared === null,
        ...agentOptions,
        ...(shared && { onDispose: shared.release }),
        model,
        architecture: manifest.architecture,
        suitSymmetry: manifest.suitSymmetry ?? false,
      });
    },
  };
}

function checkCompatible(dir: string, manifest: CheckpointManifest, rules: RulesInput | undefined): void {
  if (manifest.obsVersion !== OBS_VERSION || manifest.observationSize !== OBS_SIZE) {
    throw new CheckpointError(
      'incompatible-obs',
      dir,
      `trained on observation version ${manifest.obsVersion} (${manifest.observationSize} floats); this build has version ${OBS_VERSION} (${OBS_SIZE} floats)`,
    );
  }
  if (manifest.numActions !== NUM_ACTIONS) {
    throw new CheckpointError('incompatible-actions', dir, `trained for ${manifest.numActions} actions; this build has ${NUM_ACTIONS}`);
  }
  let stored: string;
  try {
    stored = canonicalJson(playedRules(manifest.rules));
  } catch (e) {
    throw new CheckpointError('bad-manifest', dir, `rules: ${(e as Error).message}`);
  }
  if (rules === undefined) return;
  const wanted = canonicalJson(playedRules(rules));
  if (stored !== wanted) throw new CheckpointError('incompatible-rules', dir, `trained for rules ${stored}, not ${wanted}`);
}

/**
 * The rule set as far as play goes: `deckStyle` only names the cards (docs/rules.md §0), so a
 * policy trained with one plays any (a French-deck table refused every checkpoint).
 */
function playedRules(rules: unknown): Record<string, unknown> {
  const { deckStyle: _shown, ...played } = normalizeRules(rules);
  return played;
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

