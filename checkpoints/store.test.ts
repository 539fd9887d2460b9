// The checkpoint store on the wasm backend: latest / best pointers, listing, pruning, manifest
// edits caught through pointers, and atomic saves (a write that fails midway leaves no trace).

import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PolicyAgent } from '../agents/policy-agent.js';
import { selectBackend } from '../agents/tfjs.js';
import { replaceFileAtomic, writeFileDurable } from './durable-fs.js';
import { CheckpointError } from './errors.js';
import { CheckpointStore, checkpointName, loadCheckpointOrLatest } from './store.js';

// Wrapped, not replaced: tests make one call throw to simulate a crash in the middle of a save.
vi.mock('./durable-fs.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./durable-fs.js')>();
  return { ...actual, writeFileDurable: vi.fn(actual.writeFileDurable), replaceFileAtomic: vi.fn(actual.replaceFileAtomic) };
});

const RULES = { profile: 'didactic4', players: 4 };
let tmp: string;
let agent: PolicyAgent;
let counter = 0;

async function newStore(options: Partial<ConstructorParameters<typeof CheckpointStore>[1]> = {}) {
  return new CheckpointStore(path.join(tmp, `store-${counter++}`), { rules: RULES, ...options });
}

async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(
    () => null,
    (e: unknown) => (e instanceof CheckpointError ? e.code : String(e)),
  );
}

beforeAll(async () => {
  await selectBackend('wasm');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kratzen-store-'));
  agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 1 });
});

afterAll(async () => {
  agent.dispose();
  await rm(tmp, { recursive: true, force: true });
});

afterEach(() => {
  vi.mocked(writeFileDurable).mockClear();
  vi.mocked(replaceFileAtomic).mockClear();
});

describe('CheckpointStore', () => {
  it('refuses a latest.json whose step contradicts the checkpoint it names (it was accepted) [probe, session 47]', async () => {
    const store = await newStore();
    await store.save(agent, { step: 4 });
    const file = path.join(store.root, 'latest.json');
    const pointer = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...pointer, step: 99 }));
    const error = await store.load('latest').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad-pointer', path: file, reason: expect.stringContaining('says step 99') });
    await writeFile(file, JSON.stringify(pointer));
    expect((await store.load('latest')).manifest.step).toBe(4);
  });

  it('says a folder that is no checkpoint, store or run is none of them (it was "the store has no latest checkpoint", naming latest.json) [probe, session 47]', async () => {
    const empty = path.join(tmp, 'neither');
    await mkdir(empty);
    const error = await loadCheckpointOrLatest(empty).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect(error).toMatchObject({ code: 'missing-file', path: empty, reason: expect.stringMatching(/^no manifest\.json \(so no checkpoint\) and no latest checkpoint/) });
    const store = await newStore();
    await store.save(agent, { step: 7 });
    expect((await loadCheckpointOrLatest(store.root)).manifest.step).toBe(7);
  });

  it('points latest at each save and lists by step', async () => {
    const store = await newStore();
    expect(await store.list()).toEqual([]);
    expect(await store.pointer('latest')).toBeNull();
    expect(await codeOf(store.load('latest'))).toBe('missing-file');
    for (const step of [20, 3, 100]) await store.save(agent, { step, metrics: { loss: 1 / step } });
    expect((await store.list()).map((c) => c.step)).toEqual([3, 20, 100]);
    expect(await store.pointer('latest')).toBe(checkpointName(100));
    const loaded = await store.load('latest');
    expect(loaded.manifest.step).toBe(100);
    loaded.model.dispose();
    expect(await codeOf(store.save(agent, { step: 100 }))).toBe('already-exists');
    expect(await codeOf(store.save(agent, { step: 1, name: 'latest' }))).toBe('invalid-argument');
    expect(await codeOf(store.load('../escape'))).toBe('invalid-argument');
  });

  it('verifyPointer refuses a damaged pointer, one naming no checkpoint of the store, or another manifest, at once (a resumed run found them after each save) [probe round 14]', async () => {
    const store = await newStore({ bestMetric: { name: 'winRate', higherIsBetter: true } });
    await store.verifyPointer('best'); // none yet
    await store.save(agent, { step: 1, metrics: { winRate: 0.5 } });
    await store.verifyPointer('best');
    const file = path.join(store.root, 'best.json');
    const good = await readFile(file, 'utf8');
    for (const bad of ['{x', good.replace(checkpointName(1), '../../x'), good.replace(checkpointName(1), checkpointName(2)), good.replace(/"manifestSha256": "[0-9a-f]+"/, `"manifestSha256": "${'0'.repeat(64)}"`)]) {
      await writeFile(file, bad);
      expect(await codeOf(store.verifyPointer('best')), bad.slice(0, 80)).toBe('bad-pointer');
    }
    await writeFile(file, good);
    await store.verifyPointer('best');
  });

  it('moves best by a metric, by request, or by setBest', async () => {
    const store = await newStore({ bestMetric: { name: 'winRate', higherIsBetter: true } });
    await store.save(agent, { step: 1, metrics: { winRate: 0.3 } });
    await store.save(agent, { step: 2, metrics: { winRate: 0.5 } });
    await store.save(agent, { step: 3, metrics: { winRate: 0.4 } });
    await store.save(agent, { step: 4 });
    expect(await store.pointer('best')).toBe(checkpointName(2));
    expect(await store.pointer('latest')).toBe(checkpointName(4));
    await store.save(agent, { step: 5, metrics: { winRate: 0.1 }, best: true });
    expect(await store.pointer('best')).toBe(checkpointName(5));
    await store.setBest(checkpointName(3));
    const best = await store.load('best');
    expect(best.manifest.metrics).toEqual({ winRate: 0.4 });
    best.model.dispose();
    expect(await codeOf(store.setBest('step-nope'))).toBe('missing-file');
  });

  it('catchUpBest points best at a checkpoint that beats it, as save would have (a stop between the two pointers left best behind) [determinism probe, session 48]', async () => {
    const store = await newStore({ bestMetric: { name: 'winRate', higherIsBetter: true } });
    await store.save(agent, { step: 1, metrics: { winRate: 0.3 } });
    await store.save(agent, { step: 2, metrics: { winRate: 0.5 } });
    // As a run stopped after step 2's latest.json and before its best.json leaves the store.
    await store.setBest(checkpointName(1));
    expect(await store.catchUpBest(checkpointName(2))).toBe(true);
    expect(await store.pointer('best')).toBe(checkpointName(2));
    expect(await store.catchUpBest(checkpointName(2))).toBe(false);
    // A worse checkpoint, or one without the metric, leaves best where it is.
    await store.save(agent, { step: 3, metrics: { winRate: 0.4 } });
    await store.save(agent, { step: 4 });
    expect(await store.catchUpBest(checkpointName(3))).toBe(false);
    expect(await store.catchUpBest(checkpointName(4))).toBe(false);
    expect(await store.pointer('best')).toBe(checkpointName(2));
    expect(await codeOf(store.catchUpBest('step-nope'))).toBe('missing-file');
  });

  it('prunes to the newest N plus best, and removes leftovers of interrupted writes', async () => {
    const store = await newStore();
    for (const step of [1, 2, 3, 4, 5, 6]) await store.save(agent, { step });
    await store.setBest(checkpointName(2));
    await writeFile(path.join(store.root, 'notes.txt'), 'kept: not a checkpoint');
    await mkdir(path.join(store.root, '.tmp-step-7-abc'));
    const removed = await store.prune(2);
    expect(removed).toEqual([1, 3, 4].map(checkpointName));
    expect((await store.list()).map((c) => c.step)).toEqual([2, 5, 6]);
    expect((await readdir(store.root)).sort()).toEqual(['best.json', 'latest.json', 'notes.txt', ...[2, 5, 6].map(checkpointName)].sort());
    expect(await codeOf(store.prune(0))).toBe('invalid-argument');
  });

  it('keepOnly removes every checkpoint it is not given, and leftovers of interrupted writes', async () => {
    const store = await newStore();
    for (const step of [1, 2, 3, 4]) await store.save(agent, { step });
    await mkdir(path.join(store.root, '.tmp-step-5-abc'));
    expect(await store.keepOnly(new Set([checkpointName(2), checkpointName(4), 'no-such-checkpoint']))).toEqual([1, 3].map(checkpointName));
    expect((await store.list()).map((c) => c.step)).toEqual([2, 4]);
    expect((await readdir(store.root)).sort()).toEqual(['latest.json', ...[2, 4].map(checkpointName)].sort());
  });

  it('catches a consistently edited manifest through the pointer hash', async () => {
    const store = await newStore();
    const { dir } = await store.save(agent, { step: 7, metrics: { winRate: 0.2 } });
    const file = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(await readFile(file, 'utf8'));
    manifest.metrics.winRate = 0.9; // still a valid manifest, with valid file hashes
    await writeFile(file, JSON.stringify(manifest, null, 2));
    expect(await codeOf(store.load('latest'))).toBe('hash-mismatch');
    await writeFile(path.join(store.root, 'best.json'), '{"checkpoint": 1}');
    expect(await codeOf(store.load('best'))).toBe('bad-pointer');
    // A pointer giving a key twice: JSON.parse kept the last, which another reader would not.
    const latest = await readFile(path.join(store.root, 'latest.json'), 'utf8');
    await writeFile(path.join(store.root, 'best.json'), latest.replace('{', '{"step": 0, '));
    const error = await store.load('best').catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as CheckpointError).code).toBe('bad-pointer');
    expect((error as Error).message).toMatch(/best\.json: step: "step" is given twice/);
  });

  it('refuses checkpoints of other rules', async () => {
    const store = await newStore();
    await store.save(agent, { step: 1 });
    const other = new CheckpointStore(store.root, { rules: { profile: 'didactic4', players: 3 } });
    expect(await codeOf(other.load('latest'))).toBe('incompatible-rules');
  });
});

describe('hostile arguments', () => {
  it('removeAfter refuses a step that is no integer and removes nothing (NaN removed every checkpoint) [probe round 3]', async () => {
    const store = await newStore();
    for (const step of [1, 2, 3]) await store.save(agent, { step });
    for (const bad of [Number.NaN, undefined, -Infinity, -1, 1.5, '2']) {
      expect(await codeOf(store.removeAfter(bad as number)), String(bad)).toBe('invalid-argument');
    }
    expect((await store.list()).map((c) => c.step)).toEqual([1, 2, 3]);
    expect(await store.removeAfter(2)).toEqual([checkpointName(3)]);
  });

  it('save refuses a name that is not a plain checkpoint name, as load does (../x was written beside the store) [probe round 3]', async () => {
    const store = await newStore();
    for (const name of ['../escape', '/tmp/abs', 'a/b', '', '.hidden', 5]) {
      expect(await codeOf(store.save(agent, { step: 1, name: name as string })), String(name)).toBe('invalid-argument');
    }
    expect(await readdir(tmp)).not.toContain('escape');
    expect(() => new CheckpointStore('', { rules: RULES })).toThrow(CheckpointError);
  });
});

describe('atomic saves', () => {
  it('a write failing midway leaves no checkpoint, no temp directory, and the old latest', async () => {
    const store = await newStore();
    await store.save(agent, { step: 1 });
    const before = (await readdir(store.root)).sort();
    // The second file of the checkpoint (weights.bin) fails, as a full disk or a crash would.
    const real = vi.mocked(writeFileDurable).getMockImplementation()!;
    let calls = 0;
    vi.mocked(writeFileDurable).mockImplementation(async (file, data) => {
      if (++calls === 2) {
        await real(file, (data as Uint8Array).subarray(0, 10)); // half-written, then the failure
        throw new Error('simulated crash');
      }
      return real(file, data);
    });
    try {
      await expect(store.save(agent, { step: 2 })).rejects.toThrow('simulated crash');
    } finally {
      vi.mocked(writeFileDurable).mockImplementation(real);
    }
    expect(calls).toBe(2);
    expect((await readdir(store.root)).sort()).toEqual(before);
    expect(await store.pointer('latest')).toBe(checkpointName(1));
    const loaded = await store.load('latest');
    expect(loaded.manifest.step).toBe(1);
    loaded.model.dispose();
  });

  it('a failure while moving latest leaves the old pointer, and the new checkpoint complete', async () => {
    const store = await newStore();
    await store.save(agent, { step: 1 });
    vi.mocked(replaceFileAtomic).mockRejectedValueOnce(new Error('simulated crash'));
    await expect(store.save(agent, { step: 2 })).rejects.toThrow('simulated crash');
    expect(await store.pointer('latest')).toBe(checkpointName(1));
    for (const name of ['latest', checkpointName(2)]) {
      const loaded = await store.load(name);
      loaded.model.dispose();
    }
  });
});
