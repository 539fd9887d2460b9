// A connection's request queue (connection.ts), driven without sockets: a fake ws records what is sent.
import { describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { Connection, scheduler, type ConnectionContext } from './connection.js';
import { SLICE_MS } from './fair-scheduler.js';
import { PROTOCOL_VERSION } from './protocol.js';

function fakeSocket() {
  const sent: unknown[] = [];
  const ws = { OPEN: 1, readyState: 1, bufferedAmount: 0, send: (data: unknown) => sent.push(data), pause() {}, resume() {}, close() {}, terminate() {} };
  return { ws: ws as unknown as WebSocket, sent };
}

function context(): ConnectionContext {
  return {
    token: 'secret',
    maxSessionsPerConnection: 1,
    maxEnvsPerConnection: 1,
    maxHandsPerConnection: 1,
    maxTotalEnvs: 1,
    maxTotalHands: 1,
    totals: { envs: 0, hands: 0 },
    maxPoliciesPerConnection: 1,
    maxCheckpointOpponentsPerConnection: 1,
    maxBufferedBytes: 1 << 20,
    maxQueuedRequests: 8,
    maxMessageBytes: 1 << 20,
    idleTimeoutMs: 600_000,
    heartbeatIntervalMs: 30_000,
    host: { dispose: () => undefined } as unknown as ConnectionContext['host'],
    pool: { dispose: () => undefined } as unknown as ConnectionContext['pool'],
    isShuttingDown: () => false,
    admit: () => true,
    afterReply: () => undefined,
  };
}

describe('Connection [issue: a token holder locked out by a flood of silent sockets]', () => {
  it('answers hello at once, even when the thread\'s slice is used up, so its socket is never evicted as silent', () => {
    // Another connection's request uses up the slice: a request of a greeted client now waits
    // for the next turn, and a hello used to wait with it while new sockets evicted its socket.
    scheduler.wake({
      usage: 0,
      usageAt: performance.now(),
      serveOne: () => {
        const end = performance.now() + SLICE_MS + 2;
        while (performance.now() < end);
        return false;
      },
    });
    const { ws, sent } = fakeSocket();
    const connection = new Connection(ws, context());
    connection.receive(Buffer.from(JSON.stringify({ id: 1, method: 'hello', params: { protocolVersion: PROTOCOL_VERSION, token: 'secret' } })));
    expect(connection.greeted).toBe(true);
    expect(JSON.parse(String(sent[0]))).toMatchObject({ id: 1, result: { protocolVersion: PROTOCOL_VERSION } });
    // Once greeted, requests take their turn: this ping waits for the next one.
    connection.receive(Buffer.from(JSON.stringify({ id: 2, method: 'ping' })));
    expect(sent).toHaveLength(1);
    connection.dispose();
  });
});

describe('Connection: a frame\'s text', () => {
  const hello = (id: unknown) => Buffer.from(JSON.stringify({ id, method: 'hello', params: { protocolVersion: PROTOCOL_VERSION, token: 'secret' } }));

  it('reads ASCII frames, UTF-8 frames and escapes alike; refuses bytes that are not UTF-8', () => {
    for (const id of ['plain', 'zählen-€-🂡', '\u0000\u007f', 'ÿ']) {
      const { ws, sent } = fakeSocket();
      const connection = new Connection(ws, context());
      connection.receive(hello(id));
      expect(JSON.parse(String(sent[0])).id).toBe(id);
      connection.dispose();
    }
    // Latin-1 bytes of "ÿ" (0xff) are no UTF-8: read as Latin-1 they would have passed as "ÿ".
    const { ws, sent } = fakeSocket();
    const connection = new Connection(ws, context());
    connection.receive(Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xff]), Buffer.from('","method":"ping"}')]));
    expect(JSON.parse(String(sent[0]))).toMatchObject({ id: null, error: { code: 'parse_error' } });
    connection.dispose();
  });
});

describe('Connection: objects with more keys than any request has [hostile input]', () => {
  async function replies(requests: unknown[]): Promise<{ id: unknown; error?: { code: string; field?: string; message: string } }[]> {
    const { ws, sent } = fakeSocket();
    const connection = new Connection(ws, context());
    connection.receive(Buffer.from(JSON.stringify({ id: 0, method: 'hello', params: { protocolVersion: PROTOCOL_VERSION, token: 'secret' } })));
    for (const request of requests) connection.receive(Buffer.from(typeof request === 'string' ? request : JSON.stringify(request)));
    await connection.idle();
    connection.dispose();
    return sent.slice(1).map((text) => JSON.parse(String(text)));
  }
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

  it('refuses an object of more than 64 keys anywhere, unread, by its path', async () => {
    const [params, rules, inRecord, root, justUnder] = await replies([
      { id: 1, method: 'env.view', params: { session: 's1', ...keys(30_000) } },
      { id: 2, method: 'env.create', params: { config: { rules: keys(30_000) } } },
      // A record's unknown fields are ignored, but not parsed at any size.
      { id: 3, method: 'policy.act', params: { policy: 'p9', record: { rules: {}, hands: [{ actions: [] }, { actions: [], notes: keys(65) }] } } },
      { id: 4, method: 'env.reset', ...keys(65) },
      { id: 5, method: 'env.view', params: { session: 's1', ...keys(63) } },
    ]);
    expect(params).toMatchObject({ id: null, error: { code: 'invalid_params', field: 'params' } });
    expect(params!.error!.message).toBe('params: not read: more than 64 fields; no object in a request has as many');
    expect(rules!.error).toMatchObject({ code: 'invalid_params', field: 'params.config.rules' });
    expect(inRecord!.error).toMatchObject({ code: 'invalid_params', field: 'params.record.hands[1].notes' });
    expect(root).toMatchObject({ id: null, error: { code: 'invalid_request', field: '' } });
    expect(root!.error!.message).toMatch(/^\(root\): not read/);
    // 63 keys are read, and the schema names the unknown ones.
    expect(justUnder!.error).toMatchObject({ code: 'invalid_params', field: 'params.k0', message: expect.stringContaining('unknown fields k0, k1') });
    // Keys inside strings are no keys; escaped quotes do not end a string.
    const quoted = `{"id":6,"method":"ping","params":{"s":"${Array.from({ length: 100 }, (_, i) => `\\"k${i}\\":1,`).join('')}"}}`;
    const [strings] = await replies([quoted]);
    expect(strings).toMatchObject({ id: 6, error: { code: 'invalid_params', field: 'params.s' } });
  });

  it('refuses a frame of more arrays and objects than one per 16 bytes of the message limit, unread', async () => {
    // The fake server's limit is 1 MiB: 65,536 of them.
    const junk = (n: number) => `{"id":8,"method":"ping","junk":[${Array(n).fill('[]').join(',')}]}`;
    const [over, under] = await replies([junk(70_000), junk(65_000)]);
    expect(over).toMatchObject({ id: null, error: { code: 'limit_exceeded', details: { limit: 'maxContainers' } } });
    expect(over!.error!.message).toContain('more than 65536 arrays and objects');
    // Under the bound the request is read, and refused for what it is.
    expect(under).toMatchObject({ id: 8, error: { code: 'invalid_request', field: 'junk' } });
  });

  it('reads a request nested 60,000 deep without overflowing the stack', async () => {
    const deep = `{"id":6,"method":"env.create","params":{"config":${'['.repeat(60_000)}${']'.repeat(60_000)}}}`;
    const [reply] = await replies([deep]);
    expect(reply).toMatchObject({ id: 6, error: { code: 'invalid_params', field: 'params.config' } });
  });
});
