// The shipped policies (checkpoints/pretrained/): they load for their rules on this build's
// observation version and play legally, and they still beat random players in a short duplicate
// match (the README's 1600-deal figures are the full measurement). Their training configs keep
// the recipe the shipped runs used, whatever the trainer's defaults become.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../agents/tfjs.js';
import { runTournament } from '../training/tournament.js';
import { parseTrainConfig } from '../training/config.js';
import { loadCheckpoint } from './agent-loader.js';

const ROOT = path.join(import.meta.dirname, 'pretrained');

beforeAll(async () => {
  await selectBackend('wasm');
});

describe.each([
  ['didactic4-p4', { profile: 'didactic4', players: 4 }],
  ['tavern5-p4', { profile: 'tavern5', players: 4 }],
])('pretrained %s', (name, rules) => {
  it('loads and beats random players over 24 duplicate deals', async () => {
    const spec = path.join(ROOT, name, 'checkpoint');
    const result = await runTournament({ agents: [spec, 'random'], rules, deals: 24, seed: `pretrained/${name}` }, { loadCheckpoint });
    const h = result.headToHead[0]!;
    expect(h.meanDifference - h.ci95).toBeGreaterThan(0);
  }, 120_000);
});

describe.each([
  ['didactic4-p4.config.json', 'didactic4-p4/metrics.jsonl'],
  ['didactic4-p4-finetune.config.json', 'didactic4-p4/finetune-metrics.jsonl'],
  ['tavern5-p4.config.json', 'tavern5-p4/metrics.jsonl'],
  ['tavern5-p4-finetune.config.json', 'tavern5-p4/finetune-metrics.jsonl'],
  ['tavern5-p4-finetune2.config.json', 'tavern5-p4/finetune2-metrics.jsonl'],
])('pretrained config %s', (configFile, metricsFile) => {
  it('takes the environment steps per update of the shipped run, at its learning rate, entropy bonus and input', () => {
    const config = parseTrainConfig(JSON.parse(readFileSync(path.join(ROOT, configFile), 'utf8')));
    const firstLine = JSON.parse(readFileSync(path.join(ROOT, metricsFile), 'utf8').split('\n')[0]!) as { update: number; envSteps: number };
    expect(firstLine.update).toBe(1);
    // Changing a trainer default (numEnvs went from 64 to 128) must not change what these files train.
    expect(config.numEnvs * config.rolloutSteps).toBe(firstLine.envSteps);
    expect(config.learningRateDecay).toBe('none');
    expect(config.entropyCoef).toBe(0.01);
    // The shipped networks read the cards as dealt (their manifests do not say suitSymmetry).
    expect(config.suitSymmetry).toBe(false);
  });
});

describe('a checkpoint loaded before any backend is chosen', () => {
  it('loads on the auto backend (it was refused as a bad model: "backend \'wasm\' has not yet been initialized") [probe round 6]', () => {
    // A process of its own: this one has chosen its backend.
    const dist = path.join(import.meta.dirname, '..', 'dist', 'checkpoints', 'index.js');
    const script = `const { loadCheckpoint } = await import(${JSON.stringify(dist)}); const c = await loadCheckpoint(${JSON.stringify(path.join(ROOT, 'didactic4-p4', 'checkpoint'))}); console.log(JSON.stringify(c.manifest.architecture.hiddenSizes));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toMatch(/bad model|not yet been initialized/);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual([128, 128]);
  }, 60_000);
});
