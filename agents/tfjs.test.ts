import { describe, expect, it } from 'vitest';
import { selectBackend, tf, tidyData } from './tfjs.js';

describe('tidyData', () => {
  it('returns the data of the tensors it builds and leaves no tensor behind', async () => {
    await selectBackend('auto');
    const before = tf.memory().numTensors;
    const [sum, doubled] = tidyData(() => {
      const x = tf.tensor1d([1, 2, 3]);
      return [tf.sum(x), tf.mul(x, 2)];
    });
    expect(Array.from(sum!)).toEqual([6]);
    expect(Array.from(doubled!)).toEqual([2, 4, 6]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('releases the tensors when building throws', async () => {
    await selectBackend('auto');
    const before = tf.memory().numTensors;
    expect(() =>
      tidyData(() => {
        tf.tensor1d([1, 2]);
        throw new Error('bad rows');
      }),
    ).toThrow('bad rows');
    expect(tf.memory().numTensors).toBe(before);
  });
});
