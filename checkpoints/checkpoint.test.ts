// One checkpoint directory on the wasm backend: round trip, the standard model.json format,
// extras, corruption (each with its error code) and incompatibility.

import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import seedrandom from 'seedrandom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NUM_ACTIONS, NUM_CARDS, NUM_RANKS } from '../env/rules/index.js';
import { OBS_SIZE, OBS_VERSION, sliceOffset } from '../env/observation.js';
import { PolicyAgent } from '../agents/policy-agent.js';
import { selectBackend, tf } from '../agents/tfjs.js';
import { loadCheckpoint, readManifest, writeCheckpoint } from './checkpoint.js';
import { CheckpointError, type CheckpointErrorCode } from './errors.js';
import { sha256 } from './manifest.js';
import { TRUMP_OFFSET } from '../env/suit-symmetry.js';

const HAND_OFFSET = sliceOffset('hand');

const RULES = { profile: 'tavern5', players: 5, exchange: {} };
let tmp: string;
let agent: PolicyAgent;
let dir: string;

function batch(n: number) {
  const rng = seedrandom.alea('batch');
  const observations = new Float32Array(n * OBS_SIZE).map(() => (rng() < 0.2 ? rng() : 0));
  const masks = new Uint8Array(n * NUM_ACTIONS).map(() => (rng() < 0.5 ? 1 : 0));
  for (let i = 0; i < n; i++) masks[i * NUM_ACTIONS + (i % NUM_ACTIONS)] = 1;
  return { observations, masks, seats: new Int32Array(n) };
}

async function expectCode(promise: Promise<unknown>, code: CheckpointErrorCode): Promise<CheckpointError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CheckpointError);
  expect((error as CheckpointError).code).toBe(code);
  return error as CheckpointError;
}

/** A copy of the checkpoint to damage, optionally edited and with the manifest hash refreshed. */
async function copyWith(file: string, edit: (bytes: Buffer) => Buffer | string, rehash = false): Promise<string> {
  const copy = await mkdtemp(path.join(tmp, 'copy-'));
  for (const f of ['manifest.json', 'model.json', 'weights.bin', 'optimizer.bin']) await writeFile(path.join(copy, f), await readFile(path.join(dir, f)));
  const edited = edit(await readFile(path.join(copy, file)));
  await writeFile(path.join(copy, file), edited);
  if (rehash) {
    const manifest = JSON.parse(await readFile(path.join(copy, 'manifest.json'), 'utf8'));
    const bytes = await readFile(path.join(copy, file));
    manifest.files[file] = { sha256: sha256(bytes), bytes: bytes.byteLength };
    await writeFile(path.join(copy, 'manifest.json'), JSON.stringify(manifest));
  }
  return copy;
}

function editManifest(change: (m: Record<string, any>) => void) {
  return (bytes: Buffer) => {
    const m = JSON.parse(bytes.toString('utf8'));
    change(m);
    return JSON.stringify(m);
  };
}

beforeAll(async () => {
  await selectBackend('wasm');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kratzen-ckpt-'));
  agent = new PolicyAgent({ architecture: { hiddenSizes: [48, 24], activation: 'tanh' }, seed: 21 });
  dir = path.join(tmp, 'step-1');
  await writeCheckpoint(dir, {
    agent,
    rules: RULES,
    step: 1,
    metrics: { meanReward: 0.25 },
    extras: { optimizer: { data: new Uint8Array([1, 2, 3, 4, 5]), meta: { kind: 'adam', beta1: 0.9 } } },
  });
});

afterAll(async () => {
  agent.dispose();
  await rm(tmp, { recursive: true, force: true });
});

describe('checkpoint directory', () => {
  it('refuses a weight bound that is no number of bytes (NaN turned the bound off) [probe round 8]', async () => {
    for (const maxWeightBytes of [Number.NaN, -1]) await expect(loadCheckpoint(dir, { rules: RULES, maxWeightBytes }), String(maxWeightBytes)).rejects.toThrow(/maxWeightBytes must be a number of bytes/);
    await expect(loadCheckpoint(dir, { rules: RULES, maxWeightBytes: 1 })).rejects.toMatchObject({ code: 'too-large' });
  });

  it('round-trips: identical probabilities, values and sampled actions', async () => {
    const loaded = await loadCheckpoint(dir, { rules: RULES });
    const copy = loaded.toAgent();
    const { observations, masks, seats } = batch(32);
    const a = agent.evaluate(observations, masks);
    const b = copy.evaluate(observations, masks);
    expect(b.probs).toEqual(a.probs);
    expect(b.values).toEqual(a.values);
    agent.reseed();
    expect(Array.from(copy.act(observations, masks, seats))).toEqual(Array.from(agent.act(observations, masks, seats)));
    expect(copy.name).toBe('policy:step-1');
    expect(copy.architecture).toEqual({ hiddenSizes: [48, 24], activation: 'tanh' });
    const before = tf.memory().numTensors;
    copy.dispose(); // the agent owns the loaded model
    expect(tf.memory().numTensors).toBeLessThan(before);
  });

  it('keeps whether the network relabels suits (absent for one that does not), and plays it the same after loading', async () => {
    const symmetric = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4, suitSymmetry: true });
    const symmetricDir = path.join(tmp, 'symmetric');
    await writeCheckpoint(symmetricDir, { agent: symmetric, rules: RULES, step: 2 });
    expect((await readManifest(symmetricDir)).manifest.suitSymmetry).toBe(true);
    expect((await readManifest(dir)).manifest.suitSymmetry).toBeUndefined();
    const copy = (await loadCheckpoint(symmetricDir, { rules: RULES })).toAgent();
    expect(copy.suitSymmetry).toBe(true);
    const { observations, masks } = batch(16);
    // Rows that show a trump suit, so that the relabelling moves cards.
    for (let i = 0; i < 16; i++) observations.fill(0, i * OBS_SIZE + TRUMP_OFFSET, i * OBS_SIZE + TRUMP_OFFSET + 4)[i * OBS_SIZE + TRUMP_OFFSET + (i % 4)] = 1;
    // ...and hands whose longest plain suit is the last in rotated order, which 'holding' moves.
    for (let i = 0; i < 16; i++) {
      observations.fill(0, i * OBS_SIZE + HAND_OFFSET, i * OBS_SIZE + HAND_OFFSET + NUM_CARDS);
      for (let rank = 0; rank < 3; rank++) observations[i * OBS_SIZE + HAND_OFFSET + ((i + 3) % 4) * NUM_RANKS + rank] = 1;
    }
    expect(copy.evaluate(observations, masks).probs).toEqual(symmetric.evaluate(observations, masks).probs);
    // 'holding' is kept as such: played as a rotation it would read other cards.
    const holding = new PolicyAgent({ model: symmetric.model, ownsModel: false, suitSymmetry: 'holding' });
    const holdingDir = path.join(tmp, 'holding');
    await writeCheckpoint(holdingDir, { agent: holding, rules: RULES, step: 2 });
    expect((await readManifest(holdingDir)).manifest.suitSymmetry).toBe('holding');
    const holdingCopy = (await loadCheckpoint(holdingDir, { rules: RULES })).toAgent();
    expect(holdingCopy.suitSymmetry).toBe('holding');
    expect(holdingCopy.evaluate(observations, masks).probs).toEqual(holding.evaluate(observations, masks).probs);
    expect(holdingCopy.evaluate(observations, masks).probs).not.toEqual(copy.evaluate(observations, masks).probs);
    holdingCopy.dispose();
    copy.dispose();
    symmetric.dispose();
  });

  it('writes a manifest with rules, versions, hashes and extras', async () => {
    const { manifest } = await readManifest(dir);
    expect(manifest).toMatchObject({
      formatVersion: 1,
      rules: { profile: 'tavern5', players: 5, exchange: { maxCards: 2, feePerCard: 1 } },
      obsVersion: OBS_VERSION,
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      architecture: { hiddenSizes: [48, 24], activation: 'tanh' },
      step: 1,
      metrics: { meanReward: 0.25 },
      seed: 21,
      backend: 'wasm',
      extras: { optimizer: { file: 'optimizer.bin', meta: { kind: 'adam', beta1: 0.9 } } },
    });
    expect(Object.keys(manifest.files).sort()).toEqual(['model.json', 'optimizer.bin', 'weights.bin']);
    expect(new Date(manifest.createdAt).toISOString()).toBe(manifest.createdAt);
    const loaded = await loadCheckpoint(dir);
    expect(Array.from(loaded.extras.get('optimizer')!.data)).toEqual([1, 2, 3, 4, 5]);
    expect(loaded.extras.get('optimizer')!.meta).toEqual({ kind: 'adam', beta1: 0.9 });
    loaded.model.dispose();
  });

  it('writes the standard TF.js layers-model files', async () => {
    const json = JSON.parse(await readFile(path.join(dir, 'model.json'), 'utf8'));
    expect(json.format).toBe('layers-model');
    expect(json.modelTopology.class_name).toBe('Model');
    expect(json.weightsManifest).toHaveLength(1);
    expect(json.weightsManifest[0].paths).toEqual(['weights.bin']);
    const specs: { shape: number[]; dtype: string }[] = json.weightsManifest[0].weights;
    expect(specs.every((s) => s.dtype === 'float32')).toBe(true);
    const floats = specs.reduce((sum, s) => sum + s.shape.reduce((p, d) => p * d, 1), 0);
    expect((await readFile(path.join(dir, 'weights.bin'))).byteLength).toBe(floats * 4);
  });

  it('loads as a browser would: tf.loadLayersModel over HTTP, weights found beside model.json', async () => {
    const requested: string[] = [];
    const fetchFunc = async (input: string | URL | Request) => {
      const url = String(input);
      requested.push(url);
      return new Response(await readFile(path.join(dir, path.basename(new URL(url).pathname))));
    };
    const model = await tf.loadLayersModel(tf.io.http('https://example.test/ckpt/model.json', { fetchFunc }));
    expect(requested).toEqual(['https://example.test/ckpt/model.json', 'https://example.test/ckpt/weights.bin']);
    const { observations } = batch(4);
    const logits = (m: tf.LayersModel) => tf.tidy(() => (m.predict(tf.tensor2d(observations, [4, OBS_SIZE])) as tf.Tensor[])[0]!.dataSync());
    expect(logits(model)).toEqual(logits(agent.model));
    model.dispose();
  });

  it('refuses an existing name and bad content', async () => {
    await expectCode(writeCheckpoint(dir, { agent, rules: RULES, step: 2 }), 'already-exists');
    await expectCode(writeCheckpoint(path.join(tmp, 'x'), { agent, rules: { players: 9 }, step: 2 }), 'invalid-argument');
    await expectCode(writeCheckpoint(path.join(tmp, 'y'), { agent, rules: RULES, step: -1 }), 'invalid-argument');
    await expectCode(writeCheckpoint(path.join(tmp, 'z'), { agent, rules: RULES, step: 1, metrics: { x: NaN } }), 'invalid-argument');
    await expectCode(writeCheckpoint(path.join(tmp, 'w'), { agent, rules: RULES, step: 1, extras: { weights: { data: new Uint8Array(1) } } }), 'invalid-argument');
  });
});

describe('corruption is detected', () => {
  it('a truncated weights.bin', async () => {
    const copy = await copyWith('weights.bin', (b) => b);
    await truncate(path.join(copy, 'weights.bin'), 100);
    const error = await expectCode(loadCheckpoint(copy, { rules: RULES }), 'hash-mismatch');
    expect(error.message).toMatch(/weights\.bin has 100 bytes, the manifest says \d+/);
  });

  it('a flipped byte in weights.bin and an edited model.json or extra', async () => {
    const flipped = await expectCode(loadCheckpoint(await copyWith('weights.bin', (b) => ((b[7] = b[7]! ^ 1), b))), 'hash-mismatch');
    // It said "(72748 bytes) does not match its manifest hash (72748 bytes)" [CLI probe, session 33].
    expect(flipped.message).toMatch(/weights\.bin: its SHA-256 is not the manifest's \(\d+ bytes, as listed; the content was changed or damaged\)/);
    await expectCode(loadCheckpoint(await copyWith('model.json', (b) => b.toString().replace('"tanh"', '"relu"'))), 'hash-mismatch');
    await expectCode(loadCheckpoint(await copyWith('optimizer.bin', (b) => ((b[0] = 9), b))), 'hash-mismatch');
  });

  it('a missing file', async () => {
    const copy = await copyWith('weights.bin', (b) => b);
    await rm(path.join(copy, 'weights.bin'));
    await expectCode(loadCheckpoint(copy), 'missing-file');
    await expectCode(loadCheckpoint(path.join(tmp, 'nothing-here')), 'missing-file');
  });

  it('a key given twice in manifest.json or model.json, named (JSON.parse kept the last, which loaded) [hostile input]', async () => {
    const twice = (key: string) => (b: Buffer) => b.toString('utf8').replace('{', `{"${key}": null, `);
    const manifest = await expectCode(loadCheckpoint(await copyWith('manifest.json', twice('rules'))), 'bad-manifest');
    expect(manifest.message).toMatch(/manifest\.json: rules: "rules" is given twice in one object/);
    const model = await expectCode(loadCheckpoint(await copyWith('model.json', twice('modelTopology'), true)), 'bad-model');
    expect(model.message).toMatch(/model\.json: modelTopology: "modelTopology" is given twice/);
    // The same files without the repeated key load.
    (await loadCheckpoint(await copyWith('model.json', (b) => b, true))).model.dispose();
  });

  it('an edited or broken manifest', async () => {
    await expectCode(loadCheckpoint(await copyWith('manifest.json', (b) => b.subarray(0, 50))), 'bad-manifest');
    // The parser's message would quote the file: a client naming any file learns nothing of it.
    const secret = await expectCode(loadCheckpoint(await copyWith('manifest.json', () => 'SECRET-CONTENT of some file')), 'bad-manifest');
    expect(secret.message).not.toMatch(/SECRET/);
    const model = await expectCode(loadCheckpoint(await copyWith('model.json', () => 'SECRET-CONTENT', true)), 'bad-model');
    expect(model.message).not.toMatch(/SECRET/);
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.surprise = 1)))), 'bad-manifest');
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.formatVersion = 2)))), 'bad-manifest');
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => delete m.files['weights.bin']))), 'bad-manifest');
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.rules = { players: 42 })))), 'bad-manifest');
    // A `__proto__` key, which a record schema would have turned into a prototype and let through.
    const proto = (b: Buffer) => b.toString('utf8').replace('"rules": {', '"rules": {"__proto__": {"hands": 1}, ');
    expect((await readFile(path.join(await copyWith('manifest.json', proto), 'manifest.json'), 'utf8')).includes('"__proto__"')).toBe(true);
    const error = await expectCode(loadCheckpoint(await copyWith('manifest.json', proto)), 'bad-manifest');
    expect(error.message).toMatch(/__proto__/);
    const hash = editManifest((m) => (m.files['model.json'].sha256 = '0'.repeat(64)));
    await expectCode(loadCheckpoint(await copyWith('manifest.json', hash)), 'hash-mismatch');
    // A consistent edit of the manifest alone is caught by the hash a pointer records (store.test.ts).
    // 10,000 nested arrays in an extra's meta overflowed the schema's recursion [probe round 6].
    const deep = (b: Buffer) => editManifest((m) => (m.extras.optimizer.meta = 'DEEP'))(b).replace('"DEEP"', `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    expect((await readFile(path.join(await copyWith('manifest.json', deep), 'manifest.json'), 'utf8')).includes('[[[[')).toBe(true);
    expect((await expectCode(loadCheckpoint(await copyWith('manifest.json', deep)), 'bad-manifest')).message).toMatch(/manifest\.json nests too deeply/);
  });

  it('a model.json that hashes right but is not a loadable policy model', async () => {
    const copy = await copyWith('model.json', (b) => b.toString().replace('"weights.bin"', '"other.bin"'), true);
    await expectCode(loadCheckpoint(copy), 'bad-model');
    const activation = editManifest((m) => (m.architecture.activation = m.architecture.activation === 'relu' ? 'tanh' : 'relu'));
    const error = await expectCode(loadCheckpoint(await copyWith('manifest.json', activation)), 'bad-model');
    expect(error.message).toMatch(/model\.json has architecture/);
  });

  it('a model.json whose layers are not the manifest\'s network, refused before TF.js builds them (probe finding)', async () => {
    // One hidden layer 1.5 million units wide: TF.js allocated 3.7 GB before the weights failed to fit.
    const wide = (b: Buffer) => b.toString().replace(/"units":\s*\d+/, '"units":1500000');
    const before = process.memoryUsage().rss;
    const error = await expectCode(loadCheckpoint(await copyWith('model.json', wide, true)), 'bad-model');
    expect(error.message).toMatch(/layer "hidden_0" has 1500000 units/);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 2 ** 20);
    const layersEdit = (change: (layers: unknown[]) => void) => (b: Buffer) => {
      const model = JSON.parse(b.toString('utf8'));
      change(model.modelTopology.config.layers);
      return JSON.stringify(model);
    };
    const extra = await expectCode(loadCheckpoint(await copyWith('model.json', layersEdit((l) => l.splice(2, 0, structuredClone(l[1]))), true)), 'bad-model');
    expect(extra.message).toMatch(/layers, expected/);
    const renamed = await expectCode(loadCheckpoint(await copyWith('model.json', (b) => b.toString().replaceAll('"hidden_0"', '"hidden_x"'), true)), 'bad-model');
    expect(renamed.message).toMatch(/"hidden_x", expected Dense "hidden_0"/);
    const input = layersEdit((l) => ((l[0] as { config: { batch_input_shape: unknown } }).config.batch_input_shape = [null, 7]));
    const narrow = await expectCode(loadCheckpoint(await copyWith('model.json', input, true)), 'bad-model');
    expect(narrow.message).toMatch(/input shape \[null,7\]/);
  });

  it('a weights.bin that hashes right but holds a NaN or an infinity', async () => {
    for (const value of [NaN, Infinity]) {
      const poison = (b: Buffer) => {
        const copy = Buffer.from(b);
        copy.writeFloatLE(value, 40);
        return copy;
      };
      const error = await expectCode(loadCheckpoint(await copyWith('weights.bin', poison, true)), 'bad-model');
      expect(error.message).toMatch(new RegExp(`non-finite number \\(${value}\\) at weight 10`));
    }
  });

  it('a manifest whose weights.bin size is not its architecture\'s, before reading any file', async () => {
    // Other hidden sizes: weights.bin no longer matches them, whatever model.json says.
    const arch = editManifest((m) => (m.architecture.hiddenSizes = [48, 25]));
    const error = await expectCode(loadCheckpoint(await copyWith('manifest.json', arch)), 'bad-manifest');
    expect(error.message).toMatch(/weights\.bin: the manifest says \d+ bytes; hidden layers \[48, 25\] have \d+/);
    // Wider than any policy may be: refused by the manifest's schema.
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.architecture.hiddenSizes = [1 << 20])))), 'bad-manifest');
  });
});

describe('incompatible checkpoints are refused', () => {
  it('other rules', async () => {
    const error = await expectCode(loadCheckpoint(dir, { rules: { profile: 'tavern5', players: 5 } }), 'incompatible-rules');
    expect(error.message).toMatch(/trained for rules/);
    await expectCode(loadCheckpoint(dir, { rules: {} }), 'incompatible-rules');
    // The same rules written differently (defaults spelled out, other key order) are compatible.
    const same = await loadCheckpoint(dir, { rules: { exchange: { feePerCard: 1, maxCards: 2 }, players: 5, profile: 'tavern5', ante: 1 } });
    same.model.dispose();
    // The deck style only names the cards: a French-deck table refused every checkpoint [review, session 38].
    for (const deckStyle of ['french', 'french-joker']) {
      const shown = await loadCheckpoint(dir, { rules: { exchange: {}, players: 5, profile: 'tavern5', deckStyle } });
      shown.model.dispose();
    }
  });

  it('another observation version or size, or action count', async () => {
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.obsVersion = OBS_VERSION + 1)))), 'incompatible-obs');
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.observationSize = 10)))), 'incompatible-obs');
    await expectCode(loadCheckpoint(await copyWith('manifest.json', editManifest((m) => (m.numActions = 75)))), 'incompatible-actions');
  });

  it('an observation-v1 checkpoint (before the rule set was observed) names both versions', async () => {
    const v1 = await copyWith('manifest.json', editManifest((m) => {
      m.obsVersion = 1;
      m.observationSize = 475;
    }));
    const error = await expectCode(loadCheckpoint(v1), 'incompatible-obs');
    expect(error.message).toMatch(/observation version 1 \(475 floats\)/);
    expect(error.message).toMatch(new RegExp(`this build has version ${OBS_VERSION} \\(${OBS_SIZE} floats\\)`));
    expect(OBS_VERSION).toBe(2);
  });
});
