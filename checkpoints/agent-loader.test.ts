// The registry's checkpoint loader: a checkpoint or store directory becomes a legal, greedy agent.

import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VecEnv } from '../env/vec-env.js';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { assertLegal } from '../agents/agent.js';
import { PolicyAgent } from '../agents/policy-agent.js';
import { selectBackend, tf } from '../agents/tfjs.js';
import { loadCheckpoint, loadPolicyCheckpoint, sharedNetworksBuilt } from './agent-loader.js';
import { CheckpointStore, RUN_STORE_FOLDER } from './store.js';
import { loadCheckpoint as loadCheckpointDir } from './checkpoint.js';

const RULES = { profile: 'didactic4', players: 4 };
let tmp: string;

beforeAll(async () => {
  await selectBackend('wasm');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kratzen-loader-'));
});

afterAll(() => rm(tmp, { recursive: true, force: true }));

it("loads a checkpoint, a store or a training run's folder as a greedy agent for the rules, and refuses other rules", async () => {
  const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 4, mode: 'greedy' });
  const runDir = path.join(tmp, 'run');
  const store = new CheckpointStore(path.join(runDir, RUN_STORE_FOLDER), { rules: RULES });
  const { dir } = await store.save(agent, { step: 5 });
  const env = new VecEnv({ numEnvs: 4, config: { rules: RULES } }).reset(1);
  const expected = agent.act(env.observations, env.masks, env.seats);
  // `eval --agents runs/x` (the run, not its checkpoints/) said the run had no latest.json.
  for (const target of [dir, store.root, runDir]) {
    const loaded = await loadCheckpoint(target, { rules: RULES, seed: 'x' });
    expect(loaded.name).toBe(`policy:${path.basename(target)}`);
    for (let step = 0; step < 50; step++) {
      const actions = loaded.act(env.observations, env.masks, env.seats);
      assertLegal(actions, env.masks, NUM_ACTIONS, loaded.name);
      if (step === 0) expect(Array.from(actions)).toEqual(Array.from(expected));
      env.step(actions);
    }
    env.reset(1);
    loaded.dispose?.();
  }
  await expect(loadCheckpoint(dir, { rules: { profile: 'didactic4', players: 3 }, seed: 0 })).rejects.toMatchObject({ code: 'incompatible-rules' });
  agent.dispose();
});

it('a file or FIFO named as a checkpoint is refused as not a folder, not with the OS message about a file inside it (probe finding)', async () => {
  const file = path.join(tmp, 'not-a-checkpoint');
  await writeFile(file, 'hello\n');
  const fifo = path.join(tmp, 'a-fifo');
  execFileSync('mkfifo', [fifo]);
  for (const target of [file, fifo]) {
    await expect(loadCheckpoint(target, { rules: RULES, seed: 'x' })).rejects.toMatchObject({ code: 'missing-file', path: target, reason: expect.stringMatching(/^not a folder: a checkpoint is a folder holding manifest\.json/) });
    // The checkpoint reader alone (train's initialPolicy) says the same.
    await expect(loadCheckpointDir(target)).rejects.toMatchObject({ code: 'missing-file', path: target, reason: 'not a folder: a checkpoint is a folder holding manifest.json' });
  }
});

it('a manifest.json that is a symbolic link (a loop among them) is refused as one, not read as a store without latest.json [probe round 6]', async () => {
  const dir = path.join(tmp, 'looped');
  await mkdir(dir);
  await symlink('manifest.json', path.join(dir, 'manifest.json'));
  await expect(loadCheckpoint(dir, { rules: RULES, seed: 'x' })).rejects.toMatchObject({ code: 'bad-file', reason: expect.stringMatching(/manifest\.json is a symbolic link/) });
});

it('builds a checkpoint\'s network once for the agents that play it, kept a while after the last goes (each build leaked ~2 KB in TF.js for good) [probe round 9]', async () => {
  const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 5, mode: 'greedy' });
  const store = new CheckpointStore(path.join(tmp, 'shared'), { rules: RULES });
  const { dir } = await store.save(agent, { step: 1 });
  const a = (await loadCheckpoint(dir, { rules: RULES, seed: 'a' })) as PolicyAgent;
  const b = (await loadCheckpoint(dir, { rules: RULES, seed: 'b' })) as PolicyAgent;
  expect(b.model).toBe(a.model);
  a.dispose();
  b.dispose();
  // Idle, not disposed: a load-and-close loop builds nothing more.
  const c = (await loadCheckpoint(dir, { rules: RULES, seed: 'c' })) as PolicyAgent;
  expect(c.model).toBe(a.model);
  const env = new VecEnv({ numEnvs: 2, config: { rules: RULES } }).reset(2);
  expect(Array.from(c.act(env.observations, env.masks, env.seats))).toEqual(Array.from(agent.act(env.observations, env.masks, env.seats)));
  c.dispose();
  // A load for training (no pool) gets a network of its own.
  const own = await loadCheckpointDir(dir, { rules: RULES });
  expect(own.model).not.toBe(a.model);
  own.model.dispose();
  agent.dispose();
});

it('a checkpoint of the same model.json as an idle network takes that network with its own weights: a loop over many checkpoints builds one network (each build leaked ~2 KB for good)', async () => {
  const store = new CheckpointStore(path.join(tmp, 'family'), { rules: RULES });
  const dirs: string[] = [];
  const trained: PolicyAgent[] = [];
  for (let k = 0; k < 10; k++) {
    const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 100 + k, mode: 'greedy' });
    dirs.push((await store.save(agent, { step: k + 1 })).dir);
    trained.push(agent);
  }
  const env = new VecEnv({ numEnvs: 8, config: { rules: RULES } }).reset(3);
  const logits = (model: PolicyAgent['model']) => {
    const out = model.predict(tf.tensor2d(env.observations, [8, env.observations.length / 8])) as tf.Tensor[];
    const values = out.map((t) => Array.from(t.dataSync()));
    tf.dispose(out);
    return values;
  };
  // One network of this shape, idle (built now, or left by an earlier test).
  (await loadCheckpoint(dirs[0]!, { rules: RULES, seed: 'x' })).dispose?.();
  const builtBefore = sharedNetworksBuilt();
  for (let round = 0; round < 2; round++) {
    for (let k = 0; k < dirs.length; k++) {
      const loaded = (await loadCheckpoint(dirs[k]!, { rules: RULES, seed: 'x' })) as PolicyAgent;
      // The checkpoints differ in weights and in their model.json's initializer seeds: none builds.
      expect(sharedNetworksBuilt()).toBe(builtBefore);
      // Bit for bit what the checkpoint's own network computes.
      expect(logits(loaded.model)).toEqual(logits(trained[k]!.model));
      loaded.dispose();
    }
  }
  // In use, a network is never given to another checkpoint: the second gets a network of its own.
  const a = (await loadCheckpoint(dirs[0]!, { rules: RULES, seed: 'a' })) as PolicyAgent;
  const b = (await loadCheckpoint(dirs[1]!, { rules: RULES, seed: 'b' })) as PolicyAgent;
  expect(b.model).not.toBe(a.model);
  const c = (await loadCheckpoint(dirs[2]!, { rules: RULES, seed: 'c' })) as PolicyAgent;
  expect(new Set([a.model, b.model, c.model]).size).toBe(3);
  expect(logits(a.model)).toEqual(logits(trained[0]!.model));
  expect(logits(b.model)).toEqual(logits(trained[1]!.model));
  expect(logits(c.model)).toEqual(logits(trained[2]!.model));
  a.dispose();
  b.dispose();
  c.dispose();
  for (const agent of trained) agent.dispose();
});

it('a checkpoint loaded from shared networks makes one agent (a second would play whatever weights the network holds next)', async () => {
  const agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 7, mode: 'greedy' });
  const { dir } = await new CheckpointStore(path.join(tmp, 'once'), { rules: RULES }).save(agent, { step: 1 });
  const loaded = await loadPolicyCheckpoint(dir, RULES);
  const first = loaded.toAgent();
  expect(() => loaded.toAgent()).toThrow(/gives one agent; load it again/);
  first.dispose();
  agent.dispose();
});

it('says a symbolic link that leads to nothing is one, and a path that is not there is no agent [probe, session 47]', async () => {
  const rules = { profile: 'didactic4', players: 4 };
  const loop = path.join(tmp, 'loop');
  await symlink(loop, loop);
  const dangling = path.join(tmp, 'dangling');
  await symlink(path.join(tmp, 'nowhere'), dangling);
  for (const link of [loop, dangling]) {
    await expect(loadCheckpoint(link, { rules, seed: 0 })).rejects.toMatchObject({ code: 'bad-file', path: link, reason: expect.stringContaining('symbolic link that leads to nothing') });
  }
  await expect(loadCheckpoint(path.join(tmp, 'absent'), { rules, seed: 0 })).rejects.toThrow(/^unknown agent /);
});
