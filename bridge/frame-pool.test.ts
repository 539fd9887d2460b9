// The pool of large reply frames: a frame is reused only after it was given back, never while
// lent, and a server that pipelines big binary replies to a client that reads late sends each
// reply intact (a frame reused before its socket took it would carry a later reply's bytes).

import { describe, expect, it } from 'vitest';
import { VecEnv } from '../index.js';
import { BridgeClient } from './client.js';
import { denseFromCsr } from './codec.js';
import { MAX_POOLED_BYTES, MIN_POOLED_BYTES, giveBackFrame, isLentFrame, takeFrame } from './frame-pool.js';
import { BridgeServer } from './server.js';

describe('frame pool', () => {
  it('reuses a frame given back, never one still lent', () => {
    const first = takeFrame(MIN_POOLED_BYTES + 100);
    const second = takeFrame(MIN_POOLED_BYTES + 100);
    expect(isLentFrame(first)).toBe(true);
    expect(second.buffer).not.toBe(first.buffer);
    giveBackFrame(first);
    giveBackFrame(first); // a second give-back changes nothing
    expect(isLentFrame(first)).toBe(false);
    const third = takeFrame(MIN_POOLED_BYTES);
    const fourth = takeFrame(MIN_POOLED_BYTES);
    expect(third.buffer).toBe(first.buffer);
    expect(fourth.buffer).not.toBe(first.buffer);
    expect(third.length).toBe(MIN_POOLED_BYTES);
    for (const frame of [second, third, fourth]) giveBackFrame(frame);
  });

  it('does not keep frames over MAX_POOLED_BYTES once given back', () => {
    const huge = takeFrame(MAX_POOLED_BYTES + 1);
    expect(isLentFrame(huge)).toBe(true);
    giveBackFrame(huge);
    expect(takeFrame(MAX_POOLED_BYTES + 1).buffer).not.toBe(huge.buffer);
  });

  it('leaves small frames to Node', () => {
    const small = takeFrame(MIN_POOLED_BYTES - 1);
    expect(small.length).toBe(MIN_POOLED_BYTES - 1);
    expect(isLentFrame(small)).toBe(false);
  });
});

describe('pooled frames on the wire', () => {
  it('pipelined 256-env binary resets read late arrive each intact', { timeout: 30_000 }, async () => {
    const server = await new BridgeServer({ port: 0 }).start();
    const client = await BridgeClient.open(server.url);
    try {
      const numEnvs = 256;
      const { session } = (await client.call('env.create', { numEnvs, encoding: 'binary' })).result as { session: string };
      const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      // 200 replies of ~80 KB pass what the kernel's socket buffers hold: the rest waits in the
      // server's write queue, which is where a frame given back too early would be overwritten.
      const seeds = Array.from({ length: 200 }, (_, k) => k + 1);
      const replies = seeds.map((seed) => client.call('env.reset', { session, seed }));
      let queued = 0;
      for (let wait = 0; wait < 50 && queued === 0; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        queued = server.bufferedBytes;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(queued).toBeGreaterThan(0);
      socket.resume();
      const received = await Promise.all(replies);
      for (const [k, reply] of received.entries()) {
        const local = new VecEnv({ numEnvs, config: {} }).reset(seeds[k]!);
        const arrays = reply.arrays!;
        const dense = denseFromCsr(arrays['observations.indptr'] as Uint32Array, arrays['observations.indices'] as Uint16Array, arrays['observations.values'] as Float32Array);
        expect(Buffer.from(dense.buffer).equals(Buffer.from(local.observations.buffer, 0, dense.byteLength)), `reply to seed ${seeds[k]}`).toBe(true);
        expect(Buffer.from(arrays.masks as Uint8Array).equals(Buffer.from(local.masks)), `masks of seed ${seeds[k]}`).toBe(true);
      }
    } finally {
      await client.close();
      await server.close();
    }
  });
});
