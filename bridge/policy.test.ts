// Policy serving from a checkpoint written here: actions equal the local agent's, probabilities
// are a masked distribution, a record's current state is answered for its seat to act, and a
// checkpoint can be an opponent of a single-agent session.

import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NUM_ACTIONS, OBS_SIZE, VecEnv, createGame, ruleSetToJson, stateToRecord } from '../index.js';
import { SLICE_OFFSETS } from '../env/observation.js';
import { PolicyAgent, policyWeightBytes } from '../agents/policy-agent.js';
import { selectBackend } from '../agents/tfjs.js';
import { CheckpointStore } from '../checkpoints/store.js';
import { writeCheckpoint } from '../checkpoints/checkpoint.js';
import { BridgeClient } from './client.js';
import { BridgeServer } from './server.js';

const RULES = { profile: 'didactic4', players: 4 };
let tmp: string;
let storeDir: string;
let checkpointDir: string;
let agent: PolicyAgent;
let server: BridgeServer;
let client: BridgeClient;

beforeAll(async () => {
  await selectBackend('wasm');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kratzen-bridge-'));
  agent = new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 9, mode: 'greedy' });
  storeDir = path.join(tmp, 'run');
  await new CheckpointStore(storeDir, { rules: RULES }).save(agent, { step: 1 });
  checkpointDir = path.join(tmp, 'single');
  await writeCheckpoint(checkpointDir, { agent, rules: RULES, step: 2 });
  server = await new BridgeServer({ port: 0, backend: 'wasm', checkpointRoots: [tmp] }).start();
  client = await BridgeClient.open(server.url);
});

afterAll(async () => {
  await client.close();
  await server.close();
  agent.dispose();
  await rm(tmp, { recursive: true, force: true });
});

it('serves actions and probabilities of a checkpoint for given observations', async () => {
  const loaded = (await client.call('policy.load', { agent: checkpointDir })).result;
  expect(loaded).toMatchObject({ probabilities: true, mode: 'greedy', architecture: { hiddenSizes: [16] } });
  // The rule set it plays, from its manifest: a client had to guess the table to seat it at.
  expect(loaded.rules).toEqual(ruleSetToJson(createGame(RULES).rules));
  const env = new VecEnv({ numEnvs: 5, config: { rules: RULES } }).reset(2);
  const rows = <T extends Float32Array | Uint8Array>(a: T, w: number) => Array.from({ length: 5 }, (_, i) => Array.from(a.subarray(i * w, (i + 1) * w)));
  const reply = (await client.call('policy.act', { policy: loaded.policy, observations: rows(env.observations, OBS_SIZE), masks: rows(env.masks, NUM_ACTIONS) })).result;
  expect(reply.actions).toEqual(Array.from(agent.act(env.observations, env.masks, env.seats)));
  const probs = reply.probabilities as number[][];
  const expected = agent.evaluate(env.observations, env.masks);
  probs.forEach((row, i) => {
    expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    row.forEach((p, a) => {
      if (!env.masks[i * NUM_ACTIONS + a]) expect(p).toBe(0);
      expect(p).toBeCloseTo(expected.probs[i * NUM_ACTIONS + a]!, 6);
    });
  });
  expect((reply.values as number[]).length).toBe(5);
  // Seats given are checked against the rows' own, for every agent [probe: seat 5 at a 4-seat table].
  const own = Array.from(env.seats);
  expect((await client.call('policy.act', { policy: loaded.policy, observations: rows(env.observations, OBS_SIZE), masks: rows(env.masks, NUM_ACTIONS), seats: own })).result.actions).toEqual(reply.actions);
  const heuristic = (await client.call('policy.load', { agent: 'heuristic' })).result.policy;
  for (const [policy, seats] of [[loaded.policy, own.map((s, i) => (i === 3 ? (s + 1) % 4 : s))], [heuristic, [5, ...own.slice(1)]]] as const) {
    const wrong = await client.request('policy.act', { policy, observations: rows(env.observations, OBS_SIZE), masks: rows(env.masks, NUM_ACTIONS), seats });
    const row = seats[3] === own[3] ? 0 : 3;
    expect(wrong.error).toMatchObject({ code: 'invalid_params', field: `params.seats[${row}]` });
  }
  // Seats have the rows' bound, like observations and masks (500,000 were walked before the
  // count was refused) [bridge probe, session 39].
  const many = await client.request('policy.act', { policy: heuristic, observations: rows(env.observations, OBS_SIZE).slice(0, 1), masks: rows(env.masks, NUM_ACTIONS).slice(0, 1), seats: Array(513).fill(0) });
  expect(many.error).toMatchObject({ code: 'invalid_params', field: 'params.seats', message: expect.stringContaining('at most 512 rows') });
  // A row within every slice's bounds that no encoder writes (all zero: no table size) is the
  // client's fault, named by its row (internal_error without a field before) [probe round 4].
  const zeros = await client.request('policy.act', { policy: heuristic, observations: [Array(OBS_SIZE).fill(0)], masks: [Array(NUM_ACTIONS).fill(1)] });
  expect(zeros.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[0]' });
  expect(zeros.error!.message).toMatch(/^params\.observations\[0\]: not an observation an env writes/);
  const second = await client.request('policy.act', {
    policy: heuristic,
    observations: [rows(env.observations, OBS_SIZE)[0]!, Array(OBS_SIZE).fill(0)],
    masks: [rows(env.masks, NUM_ACTIONS)[0]!, Array(NUM_ACTIONS).fill(1)],
  });
  expect(second.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[1]' });
  // The random policy reads no observation but its seat: an all-zero row (no seat, no table) or
  // one with two seats was answered as seat 0's [known since session 44].
  const random = (await client.call('policy.load', { agent: 'random' })).result.policy;
  const twoSeats = rows(env.observations, OBS_SIZE)[0]!;
  twoSeats[SLICE_OFFSETS.seat + ((env.seats[0]! + 1) % 4)] = 1;
  for (const [policy, bad] of [[random, Array(OBS_SIZE).fill(0)], [random, twoSeats], [heuristic, twoSeats]] as const) {
    const refused = await client.request('policy.act', { policy, observations: [rows(env.observations, OBS_SIZE)[0]!, bad], masks: rows(env.masks, NUM_ACTIONS).slice(0, 2) });
    expect(refused.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[1]' });
    expect(refused.error!.message).toMatch(/^params\.observations\[1\]: not an observation an env writes \(slice seat is not one-hot/);
  }
  const played = await client.call('policy.act', { policy: random, observations: rows(env.observations, OBS_SIZE).slice(0, 2), masks: rows(env.masks, NUM_ACTIONS).slice(0, 2) });
  (played.result.actions as number[]).forEach((a, i) => expect(env.masks[i * NUM_ACTIONS + a]).toBe(1));
  await client.call('policy.close', { policy: random });
  await client.call('policy.close', { policy: heuristic });
  const wrongWidth = await client.request('policy.act', { policy: loaded.policy, observations: [[1, 2]], masks: [Array(NUM_ACTIONS).fill(1)] });
  expect(wrongWidth.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[0]' });
  // Entries beyond their slice's bounds made the network answer NaN probabilities (sent as null).
  for (const value of [3e38, -1, 1.5, 1e39]) {
    const observation = rows(env.observations, OBS_SIZE)[0]!;
    observation[7] = value; // in the `hand` slice, bounds [0, 1]
    const reply = await client.request('policy.act', { policy: loaded.policy, observations: [observation], masks: rows(env.masks, NUM_ACTIONS).slice(0, 1) });
    expect(reply.error, String(value)).toMatchObject({ code: 'invalid_params', field: 'params.observations[0][7]' });
    expect(reply.error!.message).toContain('"hand"');
  }
  // A refused row deep in a full request is named by its row, once the policy is known: the
  // main thread screens it a row at a time instead of running the schema over 512 rows.
  const full = Array.from({ length: 512 }, () => rows(env.observations, OBS_SIZE)[0]!);
  full[511] = full[511]!.slice();
  full[511]![7] = 2;
  const fullMasks = Array.from({ length: 512 }, () => rows(env.masks, NUM_ACTIONS)[0]!);
  const deep = await client.request('policy.act', { policy: loaded.policy, observations: full, masks: fullMasks });
  expect(deep.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[511][7]' });
  expect(deep.error!.message).toMatch(/^params\.observations\[511\]\[7\]: 2 is outside \[0, 1\].*"hand"/);
  expect((await client.request('policy.act', { policy: 'p999', observations: full, masks: fullMasks })).error).toMatchObject({ code: 'unknown_policy' });
  // A checkpoint's network acts on its own rules' observations only: a 6-player tavern5 row got an action.
  const foreign = new VecEnv({ numEnvs: 1, config: { rules: { profile: 'tavern5', players: 6 } } }).reset(2);
  const other = await client.request('policy.act', { policy: loaded.policy, observations: [Array.from(foreign.observations)], masks: [Array.from(foreign.masks)] });
  expect(other.error).toMatchObject({ code: 'invalid_params', field: 'params.observations[0]' });
  expect(other.error!.message).toMatch(/other rules/);
  // The two forms of params were a union whose every error read "params: Invalid input".
  const observation = rows(env.observations, OBS_SIZE)[0]!;
  const mask = rows(env.masks, NUM_ACTIONS)[0]!;
  for (const [params, field] of [
    [{}, 'params.observations'],
    [{ observations: [observation] }, 'params.masks'],
    [{ observations: 5, masks: [mask] }, 'params.observations'],
    [{ observations: [['a']], masks: [mask] }, 'params.observations[0][0]'],
    [{ observations: new Array(513).fill(observation), masks: [mask] }, 'params.observations'],
    [{ record: {}, observations: [observation], masks: [mask] }, 'params.observations'],
    [{ record: [] }, 'params.record'],
  ] as const) {
    const reply = await client.request('policy.act', { policy: loaded.policy, ...params });
    expect(reply.error, JSON.stringify(params).slice(0, 80)).toMatchObject({ code: 'invalid_params', field });
    expect(reply.error!.message).not.toMatch(/^params: Invalid input$/);
  }
  await client.call('policy.close', { policy: loaded.policy });
  expect((await client.request('policy.act', { policy: loaded.policy, record: {} })).error).toMatchObject({ code: 'unknown_policy' });
});

it("answers for a record's seat to act, and refuses a finished or malformed record", async () => {
  const policy = (await client.call('policy.load', { agent: storeDir, rules: RULES })).result.policy;
  const state = createGame(RULES).newState({ seed: 5 });
  for (let k = 0; k < 7; k++) state.apply(state.legalActions()[0]!);
  const reply = (await client.call('policy.act', { policy, record: stateToRecord(state) })).result;
  expect(reply.seat).toBe(state.currentSeat);
  expect(state.legalActions()).toContain((reply.actions as number[])[0]);
  expect((reply.actionNames as string[])[0]).toMatch(/^(play|discard|in|out)/);
  const malformed = await client.request('policy.act', { policy, record: { rules: { players: 2 } } });
  expect(malformed.error).toMatchObject({ code: 'invalid_record', field: 'params.record.rules.players' });
  const record = stateToRecord(state);
  record.hands![0]!.actions!.push({ seat: (state.currentSeat + 1) % 4, action: 'in' });
  expect((await client.request('policy.act', { policy, record })).error).toMatchObject({ code: 'invalid_record' });
  // A settlement past 2^53 - 1 units (the dealer's 2P) in the record's last action.
  const deck = ["9c", "W", "Jd", "Td", "9s", "Qd", "7s", "9d", "Jh", "Js", "Jc", "7c", "9h", "Ah", "8d", "Qc", "Th", "Qs", "8h", "Ac", "7d", "As", "Qh", "Kh", "7h", "8s", "Ad", "Kd", "Tc", "Kc", "Ts", "Ks", "8c"];
  const actions = ([[0, "discard Qc"], [1, "in"], [2, "in"], [3, "in"], [0, "play Jh"], [1, "play W"], [2, "play 9h"], [3, "play Ah"], [3, "play 9s"], [0, "play 7s"], [1, "play Js"], [2, "play Td"], [1, "play 9c"], [2, "play 7c"], [3, "play Qd"], [0, "play Th"], [0, "play 9d"], [1, "play Jc"], [2, "play Jd"], [3, "play 8d"]] as [number, string][]).map(([seat, action]) => ({ seat, action }));
  const overflowing = { rules: { hands: 1 }, start: { dealer: 0, pot: 1200000000000000 }, hands: [{ deck, actions }] };
  expect((await client.request('policy.act', { policy, record: overflowing })).error).toMatchObject({
    code: 'amount_overflow',
    field: 'params.record',
    details: { hand: 0, action: actions.length - 1 },
  });
  await client.call('policy.close', { policy });
});

it('reports unloadable checkpoints, and seats a checkpoint as an opponent', async () => {
  const foreign = await client.request('policy.load', { agent: checkpointDir, rules: { profile: 'didactic4', players: 3 } });
  // Named by the rules the client gave, not the checkpoint it named [probe, session 47].
  expect(foreign.error).toMatchObject({ code: 'checkpoint_error', field: 'params.rules', details: { reason: 'incompatible-rules' } });
  expect(foreign.error!.message).toMatch(/^params\.rules: checkpoint /);
  const broken = path.join(tmp, 'broken');
  await writeCheckpoint(broken, { agent, rules: RULES, step: 3 });
  await writeFile(path.join(broken, 'weights.bin'), 'garbage');
  expect((await client.request('policy.load', { agent: broken })).error).toMatchObject({ code: 'checkpoint_error', details: { reason: 'hash-mismatch' } });
  expect((await client.request('policy.load', { agent: path.join(tmp, 'missing') })).error).toMatchObject({ code: 'invalid_params', field: 'params.agent' });
  // A bad rule set is refused for every agent, also one that would play any rules.
  for (const agentSpec of ['heuristic', 'random', checkpointDir]) {
    expect((await client.request('policy.load', { agent: agentSpec, rules: { players: 9 } })).error).toMatchObject({ code: 'invalid_params', field: 'params.rules.players' });
  }
  const deep = await client.sendRaw(`{"id":"deep","method":"policy.load","params":{"agent":"heuristic","rules":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}`);
  expect(deep).toMatchObject({ id: 'deep', error: { code: 'invalid_params', field: 'params.rules.a', message: 'params.rules.a: unknown field a' } });

  const session = (await client.call('env.create', { mode: 'single', numEnvs: 2, opponents: storeDir, config: { rules: RULES, episode: 'hand' } })).result.session;
  let r = (await client.call('env.reset', { session, seed: 1 })).result;
  for (let step = 0; step < 20; step++) {
    r = (await client.call('env.step', { session, actions: (r.masks as number[][]).map((m) => m.indexOf(1)) })).result;
  }
  await client.call('env.close', { session });
}, 60_000);

it('loads a checkpoint holding only the policy (manifest.json, model.json, weights.bin), as docs/bridge.md says [F7]', async () => {
  // Before: policy.load read the training files too (optimizer.bin, ...) and refused such a copy.
  const trained = path.join(tmp, 'trained');
  await writeCheckpoint(trained, { agent, rules: RULES, step: 3, extras: { optimizer: { data: new Uint8Array(64).fill(7) } } });
  expect(await readdir(trained)).toContain('optimizer.bin');
  const policyOnly = path.join(tmp, 'policy-only');
  await mkdir(policyOnly);
  for (const file of ['manifest.json', 'model.json', 'weights.bin']) await copyFile(path.join(trained, file), path.join(policyOnly, file));
  const loaded = (await client.call('policy.load', { agent: policyOnly })).result;
  expect(loaded).toMatchObject({ probabilities: true });
  const env = new VecEnv({ numEnvs: 1, config: { rules: RULES } }).reset(4);
  const reply = (await client.call('policy.act', { policy: loaded.policy, observations: [Array.from(env.observations)], masks: [Array.from(env.masks)] })).result;
  expect(reply.actions).toEqual(Array.from(agent.act(env.observations, env.masks, env.seats)));
});

it('refuses a checkpoint whose network is larger than --max-model-bytes, as policy and as opponent, before reading it [probe round 6]', async () => {
  const bytes = policyWeightBytes(agent.architecture);
  const small = await new BridgeServer({ port: 0, backend: 'wasm', checkpointRoots: [tmp], agentLimits: { maxModelBytes: bytes - 1 } }).start();
  const guarded = await BridgeClient.open(small.url);
  try {
    const refused = await guarded.request('policy.load', { agent: checkpointDir });
    expect(refused.error).toMatchObject({ code: 'checkpoint_error', field: 'params.agent', details: { reason: 'too-large' } });
    expect(refused.error!.message).toContain(`holds ${bytes} bytes of weights, more than this server loads (${bytes - 1}, --max-model-bytes)`);
    const opponent = await guarded.request('env.create', { mode: 'single', numEnvs: 1, opponents: storeDir, config: { rules: RULES } });
    expect(opponent.error).toMatchObject({ code: 'checkpoint_error', details: { reason: 'too-large' } });
    expect((await guarded.request('policy.load', { agent: 'heuristic' })).error).toBeUndefined();
  } finally {
    await guarded.close();
    await small.close();
  }
  // The default server loads it.
  expect((await client.request('policy.load', { agent: checkpointDir })).error).toBeUndefined();
}, 60_000);
