// Bridge throughput over loopback: the server runs in a worker thread (as it would in its own
// process), the client here. didactic4, 4 players, multi-agent sessions, a random legal action
// per env chosen from the returned masks. `bridge.roundTripsPerSec`: one env per env.step;
// `bridge.batched.n256.stepsPerSec`: env steps per second with 256 envs per env.step;
// `bridge.pipelined.n256.stepsPerSec`: the same 256 envs as two sessions of 128, each with one
// request in flight, so client and server work at once. All use
// the binary encoding (CSR observations); the `.json` figures are the same with JSON arrays.
// `bridge.loopback.tcpRoundTripsPerSec` is the machine's own ceiling for comparison: a bare TCP
// echo (100-byte messages, no WebSocket, no JSON) between the same two threads;
// `bridge.loopback.wsRoundTripsPerSec` the ceiling of any protocol over `ws`: a bare ws server in
// the same worker answering each text frame of an env.step request's size with a binary frame of
// the size of that env.step's reply, nothing parsed or computed (the echo runs in its own
// worker, like the server). `bridge.localVec.n256.stepsPerSec` is the same 256-env work on a
// VecEnv in this thread, measured between the others: `bridge.ratio.*` are ratios of figures
// taken seconds apart. The server polls for the next request for 200 µs after each reply while
// cores are idle (`spinMicroseconds`, bridge/busy-poll.ts); `bridge.noSpin.roundTripsPerSec` is
// a second server with that off, its thread sleeping between requests as the echo's does.

import { connect } from 'node:net';
import WebSocket from 'ws';
import { Worker } from 'node:worker_threads';
import { NUM_ACTIONS, VecEnv, randomLegalActions } from '../index.js';
import { BridgeClient } from '../bridge/client.js';
import { fastRng, measure } from './timing.js';

const SERVER_MODULE = new URL('../bridge/server.js', import.meta.url).href;


/** A measurement that can be run again and again: `run(seconds)` gives a rate. */
interface Runner {
  run(seconds: number): Promise<number>;
  close(): Promise<void>;
}

/** A ping-pong over `send`, where `onReply(listener)` calls back per reply: round trips per second. */
function pingPong(send: () => void, listen: (onReply: () => void) => () => void): (seconds: number) => Promise<number> {
  return (seconds) =>
    new Promise<number>((resolve) => {
      let trips = 0;
      const start = performance.now();
      const stop = listen(() => {
        trips++;
        if (performance.now() - start < seconds * 1000) send();
        else {
          stop();
          resolve(trips / ((performance.now() - start) / 1000));
        }
      });
      send();
    });
}

function startWorker(source: string, workerData: unknown = {}): Promise<{ worker: Worker; port: number }> {
  const worker = new Worker(source, { eval: true, workerData });
  return new Promise((resolve, reject) => {
    worker.once('message', (port: number) => resolve({ worker, port }));
    worker.once('error', reject);
  });
}

/** A bare TCP echo (100-byte messages) in a worker thread. */
async function tcpEcho(): Promise<Runner> {
  const { worker, port } = await startWorker(
    `const { parentPort } = require('node:worker_threads');
     const server = require('node:net').createServer((c) => { c.setNoDelay(true); c.on('data', (d) => c.write(d)); });
     server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
  );
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  const message = Buffer.alloc(100, 1);
  let received = 0;
  const run = pingPong(
    () => socket.write(message),
    (onReply) => {
      const onData = (data: Buffer) => {
        received += data.length;
        if (received < message.length) return;
        received = 0;
        onReply();
      };
      socket.on('data', onData);
      return () => socket.off('data', onData);
    },
  );
  return { run, close: async () => (socket.destroy(), void (await worker.terminate())) };
}

/** A bare ws server in a worker answering each text frame of `requestBytes` with `replyBytes` of binary. */
async function wsEcho(requestBytes: number, replyBytes: number): Promise<Runner> {
  const { worker, port } = await startWorker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(${JSON.stringify(import.meta.resolve('ws'))}).then(({ WebSocketServer }) => {
       const reply = Buffer.alloc(workerData.replyBytes, 7);
       const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, clientTracking: false });
       wss.on('connection', (ws) => ws.on('message', () => ws.send(reply)));
       wss.on('listening', () => parentPort.postMessage(wss.address().port));
     });`,
    { replyBytes },
  );
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  await new Promise((resolve) => ws.once('open', resolve));
  const request = 'x'.repeat(requestBytes);
  const run = pingPong(
    () => ws.send(request),
    (onReply) => {
      ws.on('message', onReply);
      return () => ws.off('message', onReply);
    },
  );
  return { run, close: async () => (ws.close(), void (await worker.terminate())) };
}

/** The bridge server in a worker thread (as it would be in its own process). */
async function bridgeServer(spinMicroseconds?: number): Promise<{ port: number; stop: () => Promise<void> }> {
  const { worker, port } = await startWorker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(${JSON.stringify(SERVER_MODULE)}).then(async ({ BridgeServer }) => {
       const server = await new BridgeServer({ port: 0, maxEnvsPerConnection: 4096, maxMessageBytes: 4 << 20, spinMicroseconds: workerData.spinMicroseconds }).start();
       parentPort.on('message', async () => { await server.close(); parentPort.postMessage('closed'); });
       parentPort.postMessage(server.port);
     });`,
    { spinMicroseconds },
  );
  return {
    port,
    stop: async () => {
      worker.postMessage('close');
      await new Promise((resolve) => worker.once('message', resolve));
      await worker.terminate();
    },
  };
}

/**
 * Env steps per second of `numEnvs` envs in `sessions` sessions of equal size, random legal
 * actions from each reply's masks. With one session the client waits for each reply; with two,
 * each session keeps one request in flight, so the server steps one while the client chooses the
 * other's actions (as an async vector env does).
 */
async function steps(client: BridgeClient, numEnvs: number, encoding: 'json' | 'binary', sessions = 1): Promise<Runner> {
  const size = numEnvs / sessions;
  type Reply = Awaited<ReturnType<BridgeClient['call']>>;
  const masksOf = (r: Reply): Uint8Array =>
    encoding === 'binary' ? (r.arrays!.masks as Uint8Array) : Uint8Array.from((r.result.masks as number[][]).flat());
  const parts: { session: unknown; reply: Reply; random: () => number; actions: number[]; chosen: Int32Array }[] = [];
  for (let k = 0; k < sessions; k++) {
    const session = (await client.call('env.create', { numEnvs: size, encoding })).result.session;
    const reply = await client.call('env.reset', { session, seed: 1 + k });
    parts.push({ session, reply, random: fastRng(7 + k), actions: new Array<number>(size), chosen: new Int32Array(size) });
  }
  return {
    async run(seconds: number) {
      let requests = 0;
      const start = performance.now();
      await Promise.all(
        parts.map(async (part) => {
          while (performance.now() - start < seconds * 1000) {
            randomLegalActions(masksOf(part.reply), size, NUM_ACTIONS, part.random, part.chosen);
            for (let i = 0; i < size; i++) part.actions[i] = part.chosen[i]!;
            part.reply = await client.call('env.step', { session: part.session, actions: part.actions });
            requests++;
          }
        }),
      );
      return (requests * size) / ((performance.now() - start) / 1000);
    },
    close: async () => {
      for (const part of parts) await client.call('env.close', { session: part.session });
    },
  };
}

/** A local VecEnv of `numEnvs` in this thread, the same work as a batched session minus the bridge. */
function localVec(numEnvs: number): Runner {
  const vec = new VecEnv({ numEnvs, config: { rules: { profile: 'didactic4', players: 4 } } }).reset(1);
  const random = fastRng(7);
  const chosen = new Int32Array(numEnvs);
  return {
    run: async (seconds) => {
      const rate = measure(() => {
        vec.step(randomLegalActions(vec.masks, numEnvs, NUM_ACTIONS, random, chosen));
        return numEnvs;
      }, seconds, 0);
      return rate.count / rate.seconds;
    },
    close: async () => undefined,
  };
}

/** Byte sizes of one env.step request and reply for a 1-env binary session (what the round-trip figure carries). */
async function stepMessageSizes(client: BridgeClient): Promise<{ request: number; reply: number }> {
  const session = (await client.call('env.create', { numEnvs: 1, encoding: 'binary' })).result.session as string;
  const reset = await client.call('env.reset', { session, seed: 1 });
  const masks = reset.arrays!.masks as Uint8Array;
  const params = { session, actions: [masks.indexOf(1)] };
  const request = JSON.stringify({ id: 1_000_000, method: 'env.step', params }).length;
  let replyBytes = 0;
  client.ws.once('message', (data: Buffer) => (replyBytes = data.length));
  await client.call('env.step', params);
  await client.call('env.close', { session });
  return { request, reply: replyBytes };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Every figure is measured in ROUNDS short turns, interleaved, and reported as its median: a
 * neighbour's burst then hits every figure alike, and the ratios (medians of each round's
 * ratio) compare figures taken seconds apart.
 */
const ROUNDS = 5;

export async function benchBridge(seconds: number): Promise<Record<string, number>> {
  const server = await bridgeServer();
  const client = await BridgeClient.open(`ws://127.0.0.1:${server.port}`);
  const quietServer = await bridgeServer(0);
  const quietClient = await BridgeClient.open(`ws://127.0.0.1:${quietServer.port}`);
  const sizes = await stepMessageSizes(client);
  const runners: Record<string, Runner> = {
    'bridge.roundTripsPerSec': await steps(client, 1, 'binary'),
    'bridge.noSpin.roundTripsPerSec': await steps(quietClient, 1, 'binary'),
    'bridge.json.roundTripsPerSec': await steps(client, 1, 'json'),
    'bridge.batched.n256.stepsPerSec': await steps(client, 256, 'binary'),
    'bridge.pipelined.n256.stepsPerSec': await steps(client, 256, 'binary', 2),
    'bridge.batched.n256.json.stepsPerSec': await steps(client, 256, 'json'),
    'bridge.loopback.wsRoundTripsPerSec': await wsEcho(sizes.request, sizes.reply),
    'bridge.loopback.tcpRoundTripsPerSec': await tcpEcho(),
    'bridge.localVec.n256.stepsPerSec': localVec(256),
  };
  const rates: Record<string, number[]> = {};
  try {
    for (const runner of Object.values(runners)) await runner.run(0.3); // warm-up: JIT of both ends
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, runner] of Object.entries(runners)) (rates[name] ??= []).push(await runner.run(seconds / ROUNDS));
    }
  } finally {
    for (const runner of Object.values(runners)) await runner.close();
    await client.close();
    await quietClient.close();
    await server.stop();
    await quietServer.stop();
  }
  const metrics: Record<string, number> = {};
  for (const [name, values] of Object.entries(rates)) metrics[name] = Math.round(median(values));
  const roundRatio = (over: string, under: string) => Math.round(median(rates[over]!.map((v, r) => v / rates[under]![r]!)) * 1000) / 1000;
  metrics['bridge.ratio.roundTripsOverWsEcho'] = roundRatio('bridge.roundTripsPerSec', 'bridge.loopback.wsRoundTripsPerSec');
  metrics['bridge.ratio.noSpinRoundTripsOverWsEcho'] = roundRatio('bridge.noSpin.roundTripsPerSec', 'bridge.loopback.wsRoundTripsPerSec');
  metrics['bridge.ratio.batchedOverLocalVecN256'] = roundRatio('bridge.batched.n256.stepsPerSec', 'bridge.localVec.n256.stepsPerSec');
  metrics['bridge.ratio.pipelinedOverLocalVecN256'] = roundRatio('bridge.pipelined.n256.stepsPerSec', 'bridge.localVec.n256.stepsPerSec');
  return metrics;
}

/**
 * Batched steps/s of this package's TypeScript client against a running server at `url`, in
 * `rounds` turns of `seconds / rounds` (median): the yardstick of other clients' benches.
 */
export async function clientBatchedRate(url: string, numEnvs: number, seconds: number, rounds = ROUNDS, token?: string): Promise<number[]> {
  const client = await BridgeClient.open(url, token);
  const runner = await steps(client, numEnvs, 'binary');
  try {
    await runner.run(0.3);
    const rates: number[] = [];
    for (let r = 0; r < rounds; r++) rates.push(await runner.run(seconds / rounds));
    return rates;
  } finally {
    await runner.close();
    await client.close();
  }
}

// `node dist/bench/bridge.js [seconds]` runs this suite alone.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  console.log(JSON.stringify(await benchBridge(Number(process.argv[2] ?? 1))));
}
