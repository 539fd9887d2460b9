// Bridge throughput over loopback: the server runs in a worker thread (as it would in its own
// process), the client here. didactic4, 4 players, multi-agent sessions, a random legal action
// per env chosen from the returned masks. `bridge.roundTripsPerSec`: one env per env.step;
// `bridge.batched.n256.stepsPerSec`: env steps per second with 256 envs per env.step. Both use
// the binary encoding (CSR observations); the `.json` figures are the same with JSON arrays.
// `bridge.loopback.tcpRoundTripsPerSec` is the machine's own ceiling for comparison: a bare TCP
// echo (100-byte messages, no WebSocket, no JSON) between the same two threads.

import { connect } from 'node:net';
import { Worker } from 'node:worker_threads';
import { NUM_ACTIONS, randomLegalAction } from '../index.js';
import { BridgeClient } from '../bridge/client.js';
import { fastRng } from './timing.js';

const SERVER_MODULE = new URL('../bridge/server.js', import.meta.url).href;

async function startServerWorker(): Promise<{ port: number; stop: () => Promise<void> }> {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     import(${JSON.stringify(SERVER_MODULE)}).then(async ({ BridgeServer }) => {
       const server = await new BridgeServer({ port: 0, maxEnvsPerConnection: 4096, maxMessageBytes: 4 << 20 }).start();
       parentPort.on('message', async () => { await server.close(); parentPort.postMessage('closed'); });
       parentPort.postMessage(server.port);
     });`,
    { eval: true },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    port,
    stop: async () => {
      worker.postMessage('close');
      await new Promise((resolve) => worker.once('message', resolve));
      await worker.terminate();
    },
  };
}

/** Round trips per second of a bare TCP echo between a worker thread and this one. */
async function loopbackRoundTrips(seconds: number): Promise<number> {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const server = require('node:net').createServer((c) => { c.setNoDelay(true); c.on('data', (d) => c.write(d)); });
     server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
    { eval: true },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once('connect', resolve));
    const message = Buffer.alloc(100, 1);
    const run = (limit: number) =>
      new Promise<number>((resolve) => {
        let trips = 0;
        let received = 0;
        const start = performance.now();
        const onData = (data: Buffer) => {
          received += data.length;
          if (received < message.length) return;
          received = 0;
          trips++;
          if (performance.now() - start < limit * 1000) socket.write(message);
          else {
            socket.off('data', onData);
            resolve(trips / ((performance.now() - start) / 1000));
          }
        };
        socket.on('data', onData);
        socket.write(message);
      });
    await run(Math.min(1, seconds / 2));
    const rate = await run(seconds);
    socket.destroy();
    return rate;
  } finally {
    await worker.terminate();
  }
}

/** Env steps per second of one session stepped for `seconds` (after a short warm-up). */
async function stepRate(client: BridgeClient, numEnvs: number, encoding: 'json' | 'binary', seconds: number): Promise<{ steps: number; requests: number }> {
  const session = (await client.call('env.create', { numEnvs, encoding })).result.session;
  const random = fastRng(7);
  const actions = new Array<number>(numEnvs);
  let reply = await client.call('env.reset', { session, seed: 1 });
  const masksOf = (r: typeof reply): Uint8Array =>
    encoding === 'binary' ? (r.arrays!.masks as Uint8Array) : Uint8Array.from((r.result.masks as number[][]).flat());
  const run = async (limit: number) => {
    let requests = 0;
    const start = performance.now();
    while (performance.now() - start < limit * 1000) {
      const masks = masksOf(reply);
      for (let i = 0; i < numEnvs; i++) actions[i] = randomLegalAction(masks, i, NUM_ACTIONS, random);
      reply = await client.call('env.step', { session, actions });
      requests++;
    }
    return { requests, elapsed: (performance.now() - start) / 1000 };
  };
  await run(Math.min(1, seconds / 2)); // warm-up: JIT of both ends
  const { requests, elapsed } = await run(seconds);
  await client.call('env.close', { session });
  return { steps: (requests * numEnvs) / elapsed, requests: requests / elapsed };
}

export async function benchBridge(seconds: number): Promise<Record<string, number>> {
  const server = await startServerWorker();
  const client = await BridgeClient.open(`ws://127.0.0.1:${server.port}`);
  const metrics: Record<string, number> = {};
  try {
    metrics['bridge.roundTripsPerSec'] = Math.round((await stepRate(client, 1, 'binary', seconds)).requests);
    metrics['bridge.json.roundTripsPerSec'] = Math.round((await stepRate(client, 1, 'json', seconds)).requests);
    metrics['bridge.batched.n256.stepsPerSec'] = Math.round((await stepRate(client, 256, 'binary', seconds)).steps);
    metrics['bridge.batched.n256.json.stepsPerSec'] = Math.round((await stepRate(client, 256, 'json', seconds)).steps);
  } finally {
    await client.close();
    await server.stop();
  }
  metrics['bridge.loopback.tcpRoundTripsPerSec'] = Math.round(await loopbackRoundTrips(seconds));
  return metrics;
}

// `node dist/bench/bridge.js [seconds]` runs this suite alone.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  console.log(JSON.stringify(await benchBridge(Number(process.argv[2] ?? 1))));
}
