// A host (the main thread's or a heavy worker's) keeps nothing for a connection that went while
// its request was still loading: such a session or policy stayed in the worker, uncounted.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PolicyAgent } from '../agents/policy-agent.js';
import { selectBackend } from '../agents/tfjs.js';
import { DEFAULT_AGENT_LIMITS } from '../agents/registry.js';
import { writeCheckpoint } from '../checkpoints/checkpoint.js';
import { SessionHost, type HostedReply } from './host.js';

const RULES = { profile: 'didactic4', players: 4 };
let tmp: string;
let checkpoint: string;

beforeAll(async () => {
  await selectBackend('wasm');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kratzen-host-'));
  const agent = new PolicyAgent({ architecture: { hiddenSizes: [8] }, seed: 3, mode: 'greedy' });
  checkpoint = path.join(tmp, 'policy');
  await writeCheckpoint(checkpoint, { agent, rules: RULES, step: 1 });
  agent.dispose();
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

const host = () => new SessionHost({ backend: 'wasm', checkpointRoots: [tmp], agentLimits: DEFAULT_AGENT_LIMITS, seedSecret: 'host-test' });

it('keeps no session or policy created for a connection disposed of while it loaded', async () => {
  const h = host();
  const create = h.handle({ connection: 7, id: 1, method: 'env.create', target: 's1', params: { mode: 'single', numEnvs: 1, encoding: 'json', config: { rules: RULES }, learnerSeat: 0, opponents: checkpoint } });
  const load = h.handle({ connection: 7, id: 2, method: 'policy.load', target: 'p2', params: { agent: checkpoint, mode: 'greedy', seed: 0 } });
  expect(create).toBeInstanceOf(Promise);
  h.dispose(7);
  expect(((await create) as HostedReply).ok).toBe(false);
  expect(((await load) as HostedReply).ok).toBe(false);
  const reset = (await h.handle({ connection: 7, id: 3, method: 'env.reset', target: 's1', params: { session: 's1' } })) as HostedReply;
  expect(reset.reply).toMatch(/unknown_session/);
  const act = (await h.handle({ connection: 7, id: 4, method: 'policy.act', target: 'p2', params: { policy: 'p2', observations: [[0]], masks: [[1]] } })) as HostedReply;
  expect(act.reply).toMatch(/unknown_policy/);
  // A connection that stays gets both.
  const kept = (await h.handle({ connection: 8, id: 1, method: 'policy.load', target: 'p1', params: { agent: checkpoint, mode: 'greedy', seed: 0 } })) as HostedReply;
  expect(kept.ok).toBe(true);
});

// Hosts remembered the newest 4096 connections disposed of: every closing socket disposes of
// itself in every host, so 4096 quick connections made a worker forget a client whose work was
// paused, and a load finishing then was kept for nobody [bridge probe, session 42].
it('a connection disposed of stays gone however many others close after it, and one that is still open is not gone', async () => {
  const h = host();
  h.admit(7);
  h.admit(8);
  expect(h.isGone(7)).toBe(false);
  h.dispose(7);
  for (let other = 100; other < 10_100; other++) h.dispose(other);
  expect(h.isGone(7)).toBe(true);
  expect(h.isGone(8)).toBe(false);
  const create = h.handle({ connection: 8, id: 1, method: 'env.create', target: 's1', params: { mode: 'single', numEnvs: 1, encoding: 'json', config: { rules: RULES }, learnerSeat: 0, opponents: checkpoint } });
  for (let other = 20_000; other < 25_000; other++) h.dispose(other);
  h.dispose(8);
  expect(((await create) as HostedReply).ok).toBe(false);
});
