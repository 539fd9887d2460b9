// Fuzz: thousands of random, malformed and mutated messages. Every one gets exactly one reply,
// in order, with its id (or null) and a known error code that is never internal_error; then
// the server still serves that connection and new ones.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { BridgeClient, type RawReply } from './client.js';
import { ERROR_CODES } from './errors.js';
import { METHODS, PROTOCOL_VERSION } from './protocol.js';
import { BridgeServer } from './server.js';

let server: BridgeServer;
beforeAll(async () => {
  server = await new BridgeServer({ port: 0, maxEnvsPerConnection: 16, maxSessionsPerConnection: 4, maxMessageBytes: 256 * 1024 }).start();
});
afterAll(() => server.close());

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = rng(20240601);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;

function randomValue(depth = 0): unknown {
  switch (int(depth > 2 ? 6 : 9)) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 1, 3, 73, 74, 1e308, -0, 2 ** 53, 0.5, NaN]);
    case 3:
      return pick(['', 's1', 's2', 'p1', 'random', 'heuristic', 'pimc:samples=2', '/nonexistent', 'multi', 'single', 'binary', 'x'.repeat(int(300))]);
    case 4:
      return String.fromCharCode(...Array.from({ length: int(12) }, () => int(0xd800)));
    case 5:
      return int(200) - 100;
    case 6:
      return Array.from({ length: int(6) }, () => randomValue(depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(['session', 'actions', 'seed', 'numEnvs', 'config', 'mode', 'rules', 'policy', 'agent', 'record', 'observations', 'masks', 'zzz']), randomValue(depth + 1)]));
  }
}

/** Valid-looking params for each method, to be mutated. */
const TEMPLATES: Record<string, () => Record<string, unknown>> = {
  hello: () => ({ protocolVersion: PROTOCOL_VERSION }),
  ping: () => ({}),
  spec: () => ({}),
  'env.create': () => ({ numEnvs: 1 + int(4), mode: pick(['multi', 'single']), encoding: pick(['json', 'binary']), opponents: pick(['random', 'heuristic']), config: { rules: pick([{}, { profile: 'tavern5', players: 5 }]), episode: pick(['hand', 'session']) } }),
  'env.reset': () => ({ session: `s${1 + int(6)}`, seed: int(5) }),
  'env.step': () => ({ session: `s${1 + int(6)}`, actions: Array.from({ length: 1 + int(4) }, () => int(80)) }),
  'env.close': () => ({ session: `s${1 + int(6)}` }),
  'policy.load': () => ({ agent: pick(['random', 'heuristic', 'pimc:samples=2,timeBudgetMs=5', 'nope']) }),
  'policy.act': () => (random() < 0.5 ? { policy: `p${1 + int(8)}`, record: { rules: {}, seed: int(3) } } : { policy: `p${1 + int(8)}`, observations: [[0]], masks: [[1]] }),
  'policy.close': () => ({ policy: `p${1 + int(8)}` }),
};

function mutate(params: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = { ...params };
  const keys = Object.keys(out);
  switch (int(6)) {
    case 0:
      return out; // left valid
    case 1:
      if (keys.length) delete out[pick(keys)];
      return out;
    case 2:
      if (keys.length) out[pick(keys)] = randomValue();
      return out;
    case 3:
      out[pick(['extra', 'session', 'actions', 'seed'])] = randomValue();
      return out;
    case 4:
      return randomValue();
    default:
      return out;
  }
}

function randomMessage(): { frame: string | Buffer; id: unknown } {
  const kind = int(10);
  if (kind === 0) return { frame: Buffer.from(Array.from({ length: int(64) }, () => int(256))), id: null };
  if (kind === 1) return { frame: Array.from({ length: int(40) }, () => String.fromCharCode(32 + int(95))).join(''), id: null };
  if (kind === 2) return { frame: JSON.stringify(randomValue()), id: null };
  const method = random() < 0.9 ? pick(METHODS) : pick(['', 'env.', 'hello ', 'constructor', '__proto__']);
  const id = pick<unknown>([int(1e6), `r${int(1e6)}`, null, {}, 1.5, 'x'.repeat(200)]);
  const message: Record<string, unknown> = { id, method };
  if (random() < 0.9) message.params = mutate(Object.hasOwn(TEMPLATES, method) ? TEMPLATES[method]!() : {});
  if (random() < 0.05) message.extra = 1;
  let frame = JSON.stringify(message);
  if (random() < 0.05) frame = frame.slice(0, int(frame.length)); // truncated JSON
  return { frame, id };
}

const validId = (id: unknown) => (typeof id === 'string' && id.length <= 128) || (typeof id === 'number' && Number.isSafeInteger(id));

it('survives thousands of random and malformed messages', async () => {
  const client = await BridgeClient.open(server.url);
  const codes = new Set(Object.keys(ERROR_CODES));
  const seen = new Map<string, number>();
  let sent = 0;
  for (let batch = 0; batch < 40; batch++) {
    const messages = Array.from({ length: 100 }, randomMessage);
    const replies: RawReply[] = await Promise.all(messages.map((m) => client.sendRaw(m.frame)));
    replies.forEach((reply, i) => {
      const { frame, id } = messages[i]!;
      const parsedId = typeof frame === 'string' && validId(id) && frame.startsWith('{') ? id : null;
      if (reply.error) {
        expect(codes.has(reply.error.code), reply.error.code).toBe(true);
        expect(reply.error.code, `${frame.toString().slice(0, 200)} -> ${reply.error.message}`).not.toBe('internal_error');
        expect(reply.error.message.length).toBeGreaterThan(0);
        seen.set(reply.error.code, (seen.get(reply.error.code) ?? 0) + 1);
      } else {
        expect(reply.result).toBeDefined();
        seen.set('ok', (seen.get('ok') ?? 0) + 1);
      }
      // A reply to a whole, parseable request carries its id.
      if (parsedId !== null && reply.error?.code !== 'parse_error' && reply.error?.code !== 'invalid_request') expect(reply.id).toEqual(parsedId);
      if (reply.error?.code === 'parse_error') expect(reply.id).toBeNull();
    });
    sent += messages.length;
  }
  expect(sent).toBe(4000);
  for (const code of ['ok', 'parse_error', 'invalid_request', 'unknown_method', 'invalid_params', 'unknown_session']) expect(seen.get(code), code).toBeGreaterThan(0);
  // Still serving: this connection, and a fresh one through a whole episode step.
  expect((await client.call('ping')).result).toEqual({});
  const fresh = await BridgeClient.open(server.url);
  const session = (await fresh.call('env.create', { numEnvs: 2 })).result.session;
  const reset = (await fresh.call('env.reset', { session, seed: 1 })).result;
  const masks = reset.masks as number[][];
  const step = await fresh.call('env.step', { session, actions: masks.map((m) => m.indexOf(1)) });
  expect(step.result.numEnvs).toBe(2);
  await fresh.close();
  await client.close();
}, 120_000);
