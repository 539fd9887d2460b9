// The pool of played networks (shared-models.ts): one build per key, kept idle within bounds.
import { expect, it } from 'vitest';
import type * as tf from '@tensorflow/tfjs';
import { SharedModels } from './shared-models.js';

function fakeModel(log: string[], name: string): tf.LayersModel {
  return { dispose: () => log.push(`dispose ${name}`) } as unknown as tf.LayersModel;
}

it('builds a key once, keeps at most maxIdle idle networks (least recently used go first), and forgets a failed build', async () => {
  const log: string[] = [];
  const pool = new SharedModels(2, 1000);
  const build = (name: string) => async () => (log.push(`build ${name}`), fakeModel(log, name));
  const a1 = await pool.acquire('a', 10, build('a'));
  const a2 = await pool.acquire('a', 10, build('a'));
  expect(a2.model).toBe(a1.model);
  a1.release();
  a1.release(); // once only
  a2.release();
  for (const key of ['b', 'c']) (await pool.acquire(key, 10, build(key))).release();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  await settle();
  // a, b, c idle with room for 2: a (least recently used) is disposed.
  expect(log).toEqual(['build a', 'build b', 'build c', 'dispose a']);
  expect(pool.size).toBe(2);
  await expect(pool.acquire('d', 10, async () => Promise.reject(new Error('bad model')))).rejects.toThrow('bad model');
  expect(pool.size).toBe(2);
  // Bytes bound too: idle networks of 2020 bytes do not fit 1000, so the oldest go until they do (all here).
  (await pool.acquire('big', 2000, build('big'))).release();
  await settle();
  expect(log.slice(-4)).toEqual(['build big', 'dispose b', 'dispose c', 'dispose big']);
  expect(pool.size).toBe(0);
});

it('gives a new key an idle network of its family with the key\'s weights loaded, never one in use, and disposes one whose load failed', async () => {
  const log: string[] = [];
  const pool = new SharedModels(8, 1 << 20);
  const build = (name: string) => async () => (log.push(`build ${name}`), fakeModel(log, name));
  const reuse = (family: string, name: string, fail = false) => ({
    family,
    load: (model: tf.LayersModel) => {
      log.push(`load ${name} into ${(model as unknown as { label: string }).label}`);
      if (fail) throw new Error(`bad weights in ${name}`);
    },
  });
  const labelled = (name: string) => async () => {
    const model = await build(name)();
    (model as unknown as { label: string }).label = name;
    return model;
  };
  const a = await pool.acquire('a', 10, labelled('a'), reuse('f', 'a'));
  // In use: b of the same family gets a network of its own.
  const b = await pool.acquire('b', 10, labelled('b'), reuse('f', 'b'));
  expect(b.model).not.toBe(a.model);
  a.release();
  // Idle: c takes a's network (the least recently used of the family); g's family takes nothing.
  const c = await pool.acquire('c', 10, labelled('c'), reuse('f', 'c'));
  expect(c.model).toBe(a.model);
  const g = await pool.acquire('g', 10, labelled('g'), reuse('other', 'g'));
  expect(log).toEqual(['build a', 'build b', 'load c into a', 'build g']);
  expect(pool.networksBuilt).toBe(3);
  c.release();
  g.release();
  b.release();
  await expect(pool.acquire('d', 10, labelled('d'), reuse('f', 'd', true))).rejects.toThrow('bad weights in d');
  await new Promise((resolve) => setImmediate(resolve));
  // The least recently acquired idle network of f (b's) took the failed load and is gone.
  expect(log.slice(-2)).toEqual(['load d into b', 'dispose b']);
  expect(pool.size).toBe(2); // c (a's network) and g
  const again = await pool.acquire('a', 10, labelled('a2'), reuse('f', 'a'));
  expect(log.at(-1)).toBe('load a into a');
  expect(again.model).toBe(a.model);
  expect(pool.networksBuilt).toBe(3);
});
