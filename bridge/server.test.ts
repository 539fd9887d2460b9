// Bridge server against a real socket on port 0: the check order (parse, method, params,
// legality), sessions matching local envs, binary frames, limits, token, heartbeats, shutdown.

import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { NUM_ACTIONS, OBS_SIZE, VecEnv } from '../index.js';
import { BridgeClient, BridgeRequestError } from './client.js';
import { denseFromCsr } from './codec.js';
import { PROTOCOL_VERSION } from './protocol.js';
import { BridgeServer, CLOSE_IDLE } from './server.js';

let server: BridgeServer;
let client: BridgeClient;

beforeAll(async () => {
  server = await new BridgeServer({ port: 0, maxSessionsPerConnection: 3, maxEnvsPerConnection: 64, maxMessageBytes: 64 * 1024 }).start();
  client = await BridgeClient.open(server.url);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

function firstLegal(masks: ArrayLike<number>, numEnvs: number): number[] {
  return Array.from({ length: numEnvs }, (_, i) => {
    for (let a = 0; a < NUM_ACTIONS; a++) if (masks[i * NUM_ACTIONS + a]) return a;
    return -1;
  });
}

const flat = (rows: number[][]) => rows.flat();

describe('masking', () => {
  it.runIf(process.platform === 'linux' && process.arch === 'x64')('ws unmasks frames with bufferutil\'s native code (16 MiB of frames took 60 ms in JavaScript)', () => {
    const require = createRequire(import.meta.url);
    const native = require('bufferutil') as { unmask: (b: Buffer, m: Buffer) => void };
    expect(native).not.toBe(require('bufferutil/fallback.js'));
    const data = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]);
    const copy = Buffer.from(data);
    native.unmask(copy, Buffer.from([0xff, 0, 0xff, 0]));
    expect(Array.from(copy)).toEqual(Array.from(data, (b, i) => (i % 2 === 0 ? b ^ 0xff : b)));
  });
});

describe('check order: parse, method, params', () => {
  it('answers malformed JSON with parse_error and id null, then keeps serving', async () => {
    const reply = await client.sendRaw('{"id": 1, "method": ');
    expect(reply).toMatchObject({ id: null, error: { code: 'parse_error' } });
    expect((await client.call('ping')).result).toEqual({});
  });

  it('answers non-requests with invalid_request', async () => {
    expect(await client.sendRaw('[1,2]')).toMatchObject({ id: null, error: { code: 'invalid_request' } });
    expect(await client.sendRaw('{"method":"ping"}')).toMatchObject({ id: null, error: { code: 'invalid_request', field: 'id' } });
    expect(await client.sendRaw('{"id":{"a":1},"method":"ping"}')).toMatchObject({ id: null, error: { code: 'invalid_request' } });
    expect(await client.sendRaw('{"id":"x","method":3}')).toMatchObject({ id: 'x', error: { code: 'invalid_request', field: 'method' } });
  });

  it('answers an unknown method with unknown_method and the request id', async () => {
    const reply = await client.sendRaw('{"id":"q7","method":"env.explode","params":{}}');
    expect(reply).toMatchObject({ id: 'q7', error: { code: 'unknown_method', field: 'method' } });
    expect(reply.error!.message).toContain('env.explode');
  });

  it('names the field of a schema violation', async () => {
    const bad = await client.request('env.create', { numEnvs: 'four' });
    expect(bad.error).toMatchObject({ code: 'invalid_params', field: 'params.numEnvs' });
    const extra = await client.request('env.create', { numEnvs: 1, colour: 'red' });
    expect(extra.error).toMatchObject({ code: 'invalid_params', field: 'params.colour' });
    expect(extra.error!.message).toContain('colour');
    const topLevel = await client.sendRaw(JSON.stringify({ id: 5, method: 'ping', params: {}, extra: 1 }));
    expect(topLevel).toMatchObject({ id: 5, error: { code: 'invalid_request', field: 'extra' } });
  });

  it('maps env config and rule-set errors to the field', async () => {
    const players = await client.request('env.create', { config: { rules: { players: 9 } } });
    expect(players.error).toMatchObject({ code: 'invalid_params', field: 'params.config.rules.players' });
    // Nested 4,000 deep (within the 64 KiB limit here and its 4,096 arrays and objects): a clear
    // error, not a stack overflow (internal_error).
    const deep = await client.sendRaw(`{"id":9,"method":"env.create","params":{"config":{"rules":${'{"a":'.repeat(4_000)}1${'}'.repeat(4_000)}}}}`);
    expect(deep).toMatchObject({ id: 9, error: { code: 'invalid_params', field: 'params.config.rules.a', message: 'params.config.rules.a: unknown field a' } });
    const deepKnown = await client.sendRaw(`{"id":10,"method":"env.create","params":{"config":{"rules":{"profile":"tavern5","exchange":${'{"maxCards":'.repeat(4_000)}1${'}'.repeat(4_000)}}}}}`);
    expect(deepKnown).toMatchObject({ id: 10, error: { code: 'invalid_params', field: 'params.config.rules.exchange.maxCards.maxCards.maxCards' } });
    const episode = await client.request('env.create', { config: { episode: 'forever' } });
    expect(episode.error).toMatchObject({ code: 'invalid_params', field: 'params.config.episode' });
    const seat = await client.request('env.create', { mode: 'single', learnerSeat: 5 });
    expect(seat.error).toMatchObject({ code: 'invalid_params', field: 'params.learnerSeat' });
    const opponent = await client.request('env.create', { mode: 'single', opponents: 'grandmaster' });
    expect(opponent.error).toMatchObject({ code: 'invalid_params', field: 'params.opponents' });
    expect(opponent.error!.message).toContain('grandmaster');
    // A spec for a seat the table lacks would never play nor be checked [probe: a typo unseen].
    const beyond = await client.request('env.create', { mode: 'single', opponents: [null, 'random', 'random', 'random', null, 'bogus'] });
    expect(beyond.error).toMatchObject({ code: 'invalid_params', field: 'params.opponents[5]' });
    expect(beyond.error!.message).toContain('the table has 4 seats');
    const padded = await client.request('env.create', { mode: 'single', numEnvs: 1, opponents: [null, 'random', 'random', 'random', null, null] });
    expect(padded.error).toBeUndefined();
    await client.call('env.close', { session: padded.result!.session });
    // A multi session plays every seat: single-mode params there were ignored, typos and all.
    for (const params of [{ opponents: 'nope' }, { mode: 'multi', learnerSeat: 5 }]) {
      const key = Object.keys(params).find((k) => k !== 'mode')!;
      expect((await client.request('env.create', params)).error).toMatchObject({ code: 'invalid_params', field: `params.${key}` });
    }
  });

  it('answers unknown sessions and policies, and step before reset', async () => {
    expect((await client.request('env.step', { session: 'nope', actions: [0] })).error).toMatchObject({ code: 'unknown_session', field: 'params.session' });
    expect((await client.request('policy.act', { policy: 'p0', record: {} })).error).toMatchObject({ code: 'unknown_policy' });
    const { result } = await client.call('env.create', { numEnvs: 1 });
    expect((await client.request('env.step', { session: result.session, actions: [0] })).error).toMatchObject({ code: 'not_reset', field: 'params.session' });
    for (const method of ['env.view', 'env.record', 'env.observe']) {
      const error = (await client.request(method, { session: result.session, env: 0 })).error!;
      expect(error, method).toMatchObject({ code: 'not_reset', field: 'params.session' });
      expect(error.message, method).toContain('call env.reset first');
    }
    await client.call('env.close', { session: result.session });
  });

  it('replies in request order when requests are pipelined', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => client.sendRaw(JSON.stringify({ id: i, method: i % 3 ? 'ping' : 'spec' }))));
    expect(replies.map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

describe('handshake and token', () => {
  it('requires hello first; a refused first hello (another version, malformed) ends the connection', async () => {
    for (const [params, code] of [
      [{ protocolVersion: 99 }, 'unsupported_version'],
      [{ protocolVersion: PROTOCOL_VERSION, token: 'x'.repeat(2000) }, 'invalid_params'],
      [{ protocolVersion: PROTOCOL_VERSION, token: 7 }, 'invalid_params'],
    ] as const) {
      const raw = await BridgeClient.connect(server.url);
      expect((await raw.request('ping')).error).toMatchObject({ code: 'handshake_required' });
      const closed = new Promise((r) => raw.ws.once('close', r));
      expect((await raw.request('hello', params)).error).toMatchObject({ code, field: expect.stringMatching(/^params/) });
      await closed;
      expect(raw.closeCode).toBe(1008);
    }
    const raw = await BridgeClient.connect(server.url);
    const hello = await raw.call('hello', { protocolVersion: PROTOCOL_VERSION });
    expect(hello.result).toMatchObject({ protocolVersion: PROTOCOL_VERSION, numActions: NUM_ACTIONS, observationSize: OBS_SIZE });
    // A greeted client's second hello is only answered.
    expect((await raw.request('hello', { protocolVersion: 99 })).error).toMatchObject({ code: 'unsupported_version' });
    expect((await raw.call('ping')).result).toEqual({});
    await raw.close();
  });

  it('refuses a missing or wrong token and drops the peer; accepts the right one', async () => {
    const guarded = await new BridgeServer({ port: 0, token: 's3cret' }).start();
    for (const token of [undefined, 'wrong', 's3cret-and-more']) {
      const peer = await BridgeClient.connect(guarded.url);
      const params = token === undefined ? { protocolVersion: PROTOCOL_VERSION } : { protocolVersion: PROTOCOL_VERSION, token };
      expect((await peer.request('hello', params)).error).toMatchObject({ code: 'unauthorized' });
      await new Promise((r) => peer.ws.once('close', r));
      expect(peer.closeCode).toBe(1008);
    }
    const good = await BridgeClient.open(guarded.url, 's3cret');
    expect((await good.call('ping')).result).toEqual({});
    // A greeted client's repeated hello with a wrong token is only answered (errors.ts says so).
    expect((await good.request('hello', { protocolVersion: PROTOCOL_VERSION, token: 'wrong' })).error).toMatchObject({ code: 'unauthorized' });
    expect((await good.call('ping')).result).toEqual({});
    await good.close();
    await guarded.close();
  });
});

describe('sessions', () => {
  it('deals a single-agent seed by the rules, however the config spells them, and not by its other settings [bridge probe 2, session 32]', async () => {
    const spellings = [
      { rules: { profile: 'tavern5', players: 5 } },
      { rules: { players: 5, profile: 'tavern5' } },
      { rules: { profile: 'tavern5', players: 5, ante: 1, weliRank: 'second' } },
      { rules: { profile: 'tavern5', players: 5 }, rewardScale: 2, illegalActionPenalty: 3, maxSteps: 500 },
    ];
    const first: unknown[] = [];
    for (const config of spellings) {
      const session = (await client.call('env.create', { mode: 'single', numEnvs: 2, learnerSeat: 1, opponents: 'random', config })).result.session;
      first.push((await client.call('env.reset', { session, seed: 7 })).result.observations);
      await client.call('env.close', { session });
    }
    for (const observations of first.slice(1)) expect(observations).toEqual(first[0]);
    // Other rules deal other games.
    const other = (await client.call('env.create', { mode: 'single', numEnvs: 2, learnerSeat: 1, opponents: 'random', config: { rules: { profile: 'tavern5', players: 5, ante: 2 } } })).result.session;
    expect((await client.call('env.reset', { session: other, seed: 7 })).result.observations).not.toEqual(first[0]);
    await client.call('env.close', { session: other });
  });

  it('an unseeded reset reports no episode end, also for an env it keeps because its episode began in the last step', async () => {
    const config = { rules: { profile: 'didactic4', players: 4 }, episode: 'hand' as const };
    for (const encoding of ['json', 'binary'] as const) {
      const session = (await client.call('env.create', { numEnvs: 1, config, encoding })).result.session;
      const local = new VecEnv({ numEnvs: 1, config }).reset(4);
      await client.call('env.reset', { session, seed: 4 });
      let steps = 0;
      do {
        const actions = firstLegal(local.masks, 1);
        local.step(actions);
        await client.call('env.step', { session, actions });
      } while (!local.terminated[0] && ++steps < 200);
      expect(local.terminated[0]).toBe(1);
      const reset = await client.call('env.reset', { session });
      const terminated = encoding === 'json' ? reset.result.terminated : Array.from(reset.arrays!.terminated!, Boolean);
      expect(terminated).toEqual([false]);
      await client.call('env.close', { session });
    }
  });

  it('multi-agent: reset and steps equal a local VecEnv with the same seed; json and binary agree', async () => {
    const config = { rules: { profile: 'tavern5', players: 5 }, episode: 'hand' as const };
    const json = (await client.call('env.create', { numEnvs: 3, config })).result.session;
    const bin = (await client.call('env.create', { numEnvs: 3, config, encoding: 'binary' })).result.session;
    const local = new VecEnv({ numEnvs: 3, config }).reset(11);
    let a = (await client.call('env.reset', { session: json, seed: 11 })).result;
    let b = await client.call('env.reset', { session: bin, seed: '11' });
    let endedSeen = 0;
    for (let step = 0; step < 120; step++) {
      expect(flat(a.observations as number[][])).toEqual(Array.from(local.observations));
      expect(flat(a.masks as number[][])).toEqual(Array.from(local.masks));
      expect(a.seats).toEqual(Array.from(local.seats));
      const arrays = b.arrays!;
      expect(Array.from(denseFromCsr(arrays['observations.indptr'] as Uint32Array, arrays['observations.indices'] as Uint16Array, arrays['observations.values'] as Float32Array))).toEqual(
        Array.from(local.observations),
      );
      expect(Array.from(arrays.masks!)).toEqual(Array.from(local.masks));
      const actions = firstLegal(local.masks, 3);
      local.step(actions);
      a = (await client.call('env.step', { session: json, actions })).result;
      b = await client.call('env.step', { session: bin, actions });
      expect(a.terminated).toEqual(Array.from(local.terminated, Boolean));
      expect((a.rewards as number[][]).map((r) => r.length)).toEqual([5, 5, 5]);
      const final = a.final as { env: number; observation: number[]; info: { balances: number[] } }[];
      for (const f of final) {
        endedSeen++;
        expect(f.observation).toEqual(Array.from(local.finalObservations.subarray(f.env * OBS_SIZE, (f.env + 1) * OBS_SIZE)));
        expect(f.info.balances).toEqual(local.finalInfo(f.env)!.balances);
      }
      expect((b.result.final as unknown[]).length).toBe(final.length);
    }
    expect(endedSeen).toBeGreaterThan(0);
    await client.call('env.close', { session: json });
    await client.call('env.close', { session: bin });
  });

  it('refuses a batch with one illegal action before stepping any env', async () => {
    const session = (await client.call('env.create', { numEnvs: 4 })).result.session;
    const local = new VecEnv({ numEnvs: 4, config: {} }).reset(3);
    await client.call('env.reset', { session, seed: 3 });
    const actions = firstLegal(local.masks, 4);
    const illegal = [...actions];
    illegal[2] = local.masks.subarray(2 * NUM_ACTIONS, 3 * NUM_ACTIONS).indexOf(0);
    const refused = await client.request('env.step', { session, actions: illegal });
    expect(refused.error).toMatchObject({ code: 'illegal_action', field: 'params.actions[2]', details: { env: 2, action: illegal[2] } });
    expect(refused.error!.message).toMatch(/env 2: illegal action/);
    expect((await client.request('env.step', { session, actions: [0, 1] })).error).toMatchObject({ code: 'invalid_params', field: 'params.actions' });
    // Ids outside 0..NUM_ACTIONS-1 are refused too, also where they would land on a neighbour's
    // legal entry of the mask rows: -1 for env 1 is env 0's last entry, NUM_ACTIONS for env 1 env 2's first.
    // Whole numbers past 2^53 too, as every id out of range: they were invalid_params, "no
    // integer" [session 33]. A fraction is no action id at all.
    for (const outside of [-1, NUM_ACTIONS, NUM_ACTIONS + local.masks.subarray(2 * NUM_ACTIONS).indexOf(1), 1e6, 2 ** 53, -(2 ** 60), 1e308]) {
      const batch = [...actions];
      batch[1] = outside;
      const error = (await client.request('env.step', { session, actions: batch })).error;
      expect(error).toMatchObject({ code: 'illegal_action', field: 'params.actions[1]', details: { env: 1, action: outside } });
      expect(error!.message).toMatch(/no such action id/);
    }
    const fraction = [...actions];
    fraction[1] = 0.5;
    expect((await client.request('env.step', { session, actions: fraction })).error).toMatchObject({ code: 'invalid_params', field: 'params.actions[1]', message: 'params.actions[1]: an action id is a whole number' });
    // Unchanged: the legal batch now gives what the local env gives after one step.
    local.step(actions);
    const after = (await client.call('env.step', { session, actions })).result;
    expect(flat(after.observations as number[][])).toEqual(Array.from(local.observations));
    await client.call('env.close', { session });
  });

  it('single-agent: opponents on the server, same-step autoreset, equal seeds give equal trajectories', async () => {
    const create = { mode: 'single', numEnvs: 2, opponents: ['random', null, 'heuristic', 'random'], learnerSeat: 1, config: { episode: 'hand' } };
    const session = (await client.call('env.create', create)).result.session;
    const play = async () => {
      const trace: unknown[] = [];
      let r = (await client.call('env.reset', { session, seed: 42 })).result;
      let ended = 0;
      for (let step = 0; step < 60; step++) {
        expect(r.seats).toEqual([1, 1]);
        const actions = firstLegal(flat(r.masks as number[][]), 2);
        r = (await client.call('env.step', { session, actions })).result;
        trace.push(r.rewards, r.terminated, r.observations);
        ended += (r.final as unknown[]).length;
      }
      return { trace, ended };
    };
    const first = await play();
    const second = await play();
    expect(first.ended).toBeGreaterThan(0);
    expect(second.trace).toEqual(first.trace);
    await client.call('env.close', { session });
  });

  it('illegalAction terminate: an illegal action ends the episode with the penalty', async () => {
    const session = (await client.call('env.create', { mode: 'single', config: { illegalAction: 'terminate', illegalActionPenalty: 3 } })).result.session;
    await client.call('env.reset', { session, seed: 1 });
    const r = (await client.call('env.step', { session, actions: [999] })).result;
    expect(r.terminated).toEqual([true]);
    // The penalty, plus what the learner paid before its first action (the ante).
    expect((r.rewards as number[])[0]).toBeLessThanOrEqual(-3);
    expect((r.final as { info: { illegalAction?: boolean } }[])[0]!.info.illegalAction).toBe(true);
    await client.call('env.close', { session });
  });

  it('illegalAction terminate in multi sessions of hand episodes: the episode ends, the env goes on in a new session', async () => {
    const session = (await client.call('env.create', { numEnvs: 2, config: { episode: 'hand', illegalAction: 'terminate', illegalActionPenalty: 4 } })).result.session;
    let r = (await client.call('env.reset', { session, seed: 3 })).result;
    const legal = (masks: number[][]) => masks.map((m) => m.indexOf(1));
    for (let k = 0; k < 5; k++) r = (await client.call('env.step', { session, actions: legal(r.masks as number[][]) })).result;
    const actions = legal(r.masks as number[][]);
    const offender = (r.seats as number[])[1]!;
    actions[1] = (r.masks as number[][])[1]!.indexOf(0);
    r = (await client.call('env.step', { session, actions })).result;
    expect(r.terminated).toEqual([false, true]);
    const final = (r.final as { env: number; info: { illegalActionSeat?: number } }[])[0]!;
    expect(final).toMatchObject({ env: 1, info: { illegalActionSeat: offender } });
    expect((r.rewards as number[][])[1]![offender]).toBe(-4);
    // The env plays on: its next episode starts a new session of the seed's sequence.
    for (let k = 0; k < 30; k++) r = (await client.call('env.step', { session, actions: legal(r.masks as number[][]) })).result;
    await client.call('env.close', { session });
  });

  it('serves the spec', async () => {
    const { result } = await client.call('spec');
    expect(result).toMatchObject({ protocolVersion: PROTOCOL_VERSION, numActions: NUM_ACTIONS });
    expect((result.actions as string[])[66]).toBe('in');
    expect((result.observation as { size: number }).size).toBe(OBS_SIZE);
  });
});

describe('every seat\'s view of an episode\'s end [bridge probe: a turn-based client showed agents stale or zero observations]', () => {
  it('keeps it for multi sessions created with finalObservations "every-seat", for env.observe with episode "ended"', async () => {
    const config = { rules: { profile: 'tavern5', players: 4 }, episode: 'hand', maxSteps: 2 };
    const created = (await client.call('env.create', { numEnvs: 2, config, finalObservations: 'every-seat' })).result;
    expect(created.finalObservations).toBe('every-seat');
    const session = created.session;
    type StepReply = { masks: number[][]; final: { env: number; observation: number[] }[] };
    let reply = (await client.call('env.reset', { session, seed: 3 })).result as unknown as StepReply;
    const observe = (params: Record<string, unknown>) => client.request('env.observe', { session, env: 0, ...params });
    expect((await observe({ seat: 0, episode: 'ended' })).error).toMatchObject({ code: 'invalid_params', field: 'params.episode' });
    const firstAction = (masks: number[][]) => masks.map((m) => m.indexOf(1));
    for (let k = 0; k < 2; k++) reply = (await client.call('env.step', { session, actions: firstAction(reply.masks) })).result as unknown as StepReply;
    const final = reply.final.find((f) => f.env === 0);
    expect(final).toBeDefined();
    const views: number[][] = [];
    for (let seat = 0; seat < 4; seat++) {
      const result = (await observe({ seat, episode: 'ended' })).result as { seat: number; mask: number[]; observation: number[] };
      expect(result.seat).toBe(seat);
      expect(result.mask.every((m) => m === 0)).toBe(true);
      views.push(result.observation);
    }
    // The observer's is the reply's final observation; the others' are their own seat's.
    expect(views).toContainEqual(final!.observation);
    expect(new Set(views.map((v) => JSON.stringify(v))).size).toBe(4);
    expect((await observe({ episode: 'ended' })).error).toMatchObject({ code: 'invalid_params', field: 'params.seat' });
    await client.call('env.close', { session });
  });

  it('refuses it elsewhere, naming the field', async () => {
    for (const [params, field] of [
      [{ mode: 'single', finalObservations: 'every-seat' }, 'params.finalObservations'],
      [{ numEnvs: 257, finalObservations: 'every-seat' }, 'params.finalObservations'],
      [{ finalObservations: 'all' }, 'params.finalObservations'],
    ] as const) {
      expect((await client.request('env.create', params)).error, JSON.stringify(params)).toMatchObject({ code: 'invalid_params', field });
    }
    const session = (await client.call('env.create', { numEnvs: 1, config: { maxSteps: 1 } })).result.session;
    const reply = (await client.call('env.reset', { session, seed: 1 })).result as { masks: number[][] };
    await client.call('env.step', { session, actions: [reply.masks[0]!.indexOf(1)] });
    const error = (await client.request('env.observe', { session, env: 0, seat: 1, episode: 'ended' })).error!;
    expect(error).toMatchObject({ code: 'invalid_params', field: 'params.episode' });
    expect(error.message).toContain('every-seat');
    await client.call('env.close', { session });
  });
});

describe('limits', () => {
  it('limits sessions and envs per connection', async () => {
    const peer = await BridgeClient.open(server.url);
    const tooMany = await peer.request('env.create', { numEnvs: 65 });
    expect(tooMany.error).toMatchObject({ code: 'limit_exceeded', field: 'params.numEnvs' });
    for (let i = 0; i < 3; i++) await peer.call('env.create', { numEnvs: 1 });
    expect((await peer.request('env.create', { numEnvs: 1 })).error).toMatchObject({ code: 'limit_exceeded' });
    await peer.close();
  });

  it('closes a connection sending a frame over the size limit (1009), others keep working', async () => {
    const peer = await BridgeClient.open(server.url);
    await expect(peer.sendRaw(JSON.stringify({ id: 1, method: 'ping', pad: 'x'.repeat(70 * 1024) }))).rejects.toThrow(/closed/);
    expect(peer.closeCode).toBe(1009);
    expect((await client.call('ping')).result).toEqual({});
  });

  it('closes a client with no request answered without an error for the idle timeout, pongs or refusals or not (4000); terminates one that stops answering pings', async () => {
    // Every WebSocket library answers pings by itself: when pongs counted, a client that said
    // hello and then nothing held its connection slot for ever.
    const strict = await new BridgeServer({ port: 0, idleTimeoutMs: 300, heartbeatIntervalMs: 40 }).start();
    // hello tells both, so that a client answering pings itself (Python's keepalive) looks in time.
    const told = await BridgeClient.connect(strict.url);
    const limits = (await told.call('hello', { protocolVersion: PROTOCOL_VERSION })).result.limits;
    expect(limits).toMatchObject({ idleTimeoutMs: 300, heartbeatIntervalMs: 40 });
    told.close();
    const quiet = await BridgeClient.open(strict.url);
    const active = await BridgeClient.open(strict.url);
    // Refused requests are not activity either (they kept a connection alive for ever: F6).
    const refused = await BridgeClient.open(strict.url);
    const codes = new Set<string>();
    const refusing = (async () => {
      while (refused.closeCode === null) {
        const replies = await Promise.all([
          refused.request('env.step', { session: 's99', actions: [0] }),
          refused.request('env.create', { numEnvs: 100_000 }),
          refused.request('policy.act', { policy: 'p9', observations: [[0]], masks: [[1]] }),
          refused.request('policy.load', { agent: '/etc' }),
          refused.request('policy.load', { agent: 'pimc:samples=100000' }),
        ]).catch(() => []);
        for (const reply of replies) codes.add(reply.error?.code ?? 'ok');
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    // The active client pings until the refused one is gone: the refused client's first
    // policy.load starts the heavy pool (0.9-1 s here), and the idle clock waits for work in
    // progress, so it outlived a fixed 12 pings and the active client idled out meanwhile.
    for (let i = 0; i < 12 || refused.closeCode === null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      expect((await active.call('ping')).result).toEqual({});
    }
    await refusing;
    // Refused by the connection (unknown ids, limits) and by the host (no checkpoint, a capped option).
    expect([...codes].sort()).toEqual(['invalid_params', 'limit_exceeded', 'unknown_policy', 'unknown_session']);
    expect(quiet.closeCode).toBe(CLOSE_IDLE);
    expect(refused.closeCode).toBe(CLOSE_IDLE);
    expect(active.closeCode).toBeNull();
    const deaf = new WebSocket(strict.url, { autoPong: false });
    await new Promise((r) => deaf.once('open', r));
    deaf.send(JSON.stringify({ id: 1, method: 'hello', params: { protocolVersion: PROTOCOL_VERSION } }));
    const code = await new Promise<number>((resolve) => deaf.on('close', (c) => resolve(c)));
    expect(code).toBe(1006); // terminated, no close frame
    await active.close();
    await strict.close();
  });

  it('counts an id\'s length in code points, as the schema does (128 emoji are 256 UTF-16 units)', async () => {
    const peer = await BridgeClient.open(server.url);
    const fits = '😀'.repeat(128);
    expect(await peer.sendRaw(JSON.stringify({ id: fits, method: 'ping' }))).toMatchObject({ id: fits, result: {} });
    const over = await peer.sendRaw(JSON.stringify({ id: '😀'.repeat(129), method: 'ping' }));
    expect(over).toMatchObject({ id: null, error: { code: 'invalid_request', field: 'id' } });
    await peer.close();
  });

  it('fails a connection whose text frame or close reason is not UTF-8 (1007, RFC 6455 section 8.1; the reason was echoed back), others keep working', async () => {
    const misbehaviours = [(ws: WebSocket) => ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false }), (ws: WebSocket) => ws.close(4001, Buffer.from([0xff]))];
    for (const misbehave of misbehaviours) {
      // This client does not check what it receives either: it reports the code the server sent.
      const ws = new WebSocket(server.url, { skipUTF8Validation: true });
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
      ws.on('error', () => undefined);
      ws.send(JSON.stringify({ id: 1, method: 'hello', params: { protocolVersion: PROTOCOL_VERSION } }));
      await new Promise((resolve) => ws.once('message', resolve));
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      misbehave(ws);
      expect(await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 3000))])).toBe(1007);
    }
    expect((await client.call('ping')).result).toEqual({});
  });

  it('refuses a binary frame as a request, in its turn, and goes on', async () => {
    const peer = await BridgeClient.open(server.url);
    const binary = peer.sendRaw(Buffer.from(JSON.stringify({ id: 7, method: 'ping' })));
    const after = peer.call('ping');
    expect((await binary).error).toMatchObject({ code: 'invalid_request' });
    expect((await after).result).toEqual({});
    await peer.close();
  });

  it('names numEnvs when a session passes the env limit, also when its hands would pass theirs', async () => {
    const peer = await BridgeClient.open(server.url);
    const reply = await peer.request('env.create', { numEnvs: 65, config: { rules: { hands: 1000 } } });
    expect(reply.error).toMatchObject({ code: 'limit_exceeded', field: 'params.numEnvs' });
    await peer.close();
  });

  it('the client answers a request over the server\'s message limit itself, and the connection stays', async () => {
    const peer = await BridgeClient.open(server.url);
    expect(peer.maxMessageBytes).toBe(64 * 1024);
    const reply = await peer.request('ping', { pad: 'x'.repeat(70 * 1024) });
    expect(reply.error).toMatchObject({ code: 'limit_exceeded', details: { limit: 'maxMessageBytes' } });
    expect((await peer.call('ping')).result).toEqual({});
    expect(peer.closeCode).toBeNull();
    await peer.close();
  });
});

/**
 * Sends a ping and `count` resets of `session` in one TCP write, and waits for the ping's reply:
 * the server then holds the resets, which a shutdown must let finish. (Written one by one, a
 * loaded machine could deliver the last resets after close() had begun: they got shutting_down.)
 */
async function resetsQueuedBehindPing(peer: BridgeClient, session: unknown, count: number) {
  const socket = (peer.ws as unknown as { _socket: import('node:net').Socket })._socket;
  socket.cork();
  const ping = peer.call('ping');
  const resets = Array.from({ length: count }, (_, seed) => peer.request('env.reset', { session, seed }));
  socket.uncork();
  await ping;
  return resets;
}

describe('graceful shutdown', () => {
  it('lets running work finish, closes sockets with 1001 and stops listening', async () => {
    const doomed = await new BridgeServer({ port: 0 }).start();
    const url = doomed.url;
    const peer = await BridgeClient.open(url);
    const session = (await peer.call('env.create', { numEnvs: 8 })).result.session;
    const pending = await resetsQueuedBehindPing(peer, session, 5);
    const closing = doomed.close();
    for (const reply of pending) await expect(reply).resolves.toMatchObject({ result: { numEnvs: 8 } });
    await closing;
    expect(peer.closeCode).toBe(1001);
    expect(doomed.numConnections).toBe(0);
    await expect(BridgeClient.connect(url)).rejects.toThrow();
  });

  it('refuses a hello that comes while it shuts down and closes that socket (it greeted the client, then refused all it asked)', async () => {
    const doomed = await new BridgeServer({ port: 0 }).start();
    const busy = await BridgeClient.open(doomed.url);
    const late = await BridgeClient.connect(doomed.url);
    const session = (await busy.call('env.create', { numEnvs: 1024 })).result.session;
    const resets = await resetsQueuedBehindPing(busy, session, 6);
    const closing = doomed.close();
    const closed = new Promise((resolve) => late.ws.once('close', resolve));
    expect((await late.request('hello', { protocolVersion: PROTOCOL_VERSION })).error).toMatchObject({ code: 'shutting_down' });
    await closed;
    expect(late.closeCode).toBe(1001);
    await Promise.all(resets);
    await closing;
  });
});

it('BridgeRequestError carries code and field', async () => {
  const error = await client.call('env.step', { session: 'x', actions: [1] }).catch((e) => e);
  expect(error).toBeInstanceOf(BridgeRequestError);
  expect(error).toMatchObject({ code: 'unknown_session', field: 'params.session' });
});
