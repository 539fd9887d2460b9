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
