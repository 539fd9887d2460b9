// The shipped policies (checkpoints/pretrained/): they load for their rules on this build's
// observation version and play legally, and they still beat random players in a short duplicate
// match (the README's 1600-deal figures are the full measurement).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../agents/tfjs.js';
import { runTournament } from '../training/tournament.js';
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
