import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { selectBackend, tf } from './tfjs.js';

const random = seedrandom('wasm-matmul');
const matrix = (shape: number[]) => tf.tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random() * 2 - 1), shape);

/** The product by definition, in float64 from the host arrays: rows of a (after its transpose flag) times columns of b. */
function reference(a: tf.Tensor, b: tf.Tensor, transposeA: boolean, transposeB: boolean): Float64Array {
  const [batch, ar, ac] = a.shape.length === 3 ? a.shape : [1, ...a.shape];
  const [, br, bc] = b.shape.length === 3 ? b.shape : [1, ...b.shape];
  const av = a.dataSync();
  const bv = b.dataSync();
  const rows = transposeA ? ac! : ar!;
  const inner = transposeA ? ar! : ac!;
  const cols = transposeB ? br! : bc!;
  const out = new Float64Array(batch! * rows * cols);
  for (let n = 0; n < batch!; n++)
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        let sum = 0;
        for (let k = 0; k < inner; k++) {
          const x = transposeA ? av[n * ar! * ac! + k * ac! + i]! : av[n * ar! * ac! + i * ac! + k]!;
          const y = transposeB ? bv[n * br! * bc! + j * bc! + k]! : bv[n * br! * bc! + k * bc! + j]!;
          sum += x * y;
        }
        out[(n * rows + i) * cols + j] = sum;
      }
  return out;
}

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  expect(worst).toBeLessThan(1e-4);
}

describe('wasm matmul with transposed operands', () => {
  it('computes the same products for every transpose flag, 2-D and batched', async () => {
    expect((await selectBackend('wasm')).backend).toBe('wasm');
    for (const [transposeA, transposeB] of [[false, false], [true, false], [false, true], [true, true]] as const) {
      for (const batched of [false, true]) {
        const lead = batched ? [3] : [];
        const a = matrix([...lead, ...(transposeA ? [37, 19] : [19, 37])]);
        const b = matrix([...lead, ...(transposeB ? [23, 37] : [37, 23])]);
        const product = tf.matMul(a, b, transposeA, transposeB);
        expect(product.shape).toEqual([...lead, 19, 23]);
        expectClose(product.dataSync(), reference(a, b, transposeA, transposeB));
        tf.dispose([a, b, product]);
      }
    }
  });

  it('keeps bias and activation of the fused kernel, and leaks no tensor memory', async () => {
    await selectBackend('wasm');
    const a = matrix([29, 11]);
    const b = matrix([17, 29]);
    const bias = matrix([17]);
    const before = tf.memory().numBytes;
    const fused = tf.fused.matMul({ a, b, transposeA: true, transposeB: true, bias, activation: 'relu' });
    const expected = reference(a, b, true, true).map((v, i) => Math.max(0, v + bias.dataSync()[i % 17]!));
    expectClose(fused.dataSync(), expected);
    fused.dispose();
    expect(tf.memory().numBytes).toBe(before);
    tf.dispose([a, b, bias]);
  });

  it('gives the gradients of a dense layer that the untransposed algebra gives', async () => {
    await selectBackend('wasm');
    const x = matrix([64, 31]);
    const w = matrix([31, 9]);
    const variable = tf.variable(w, true, 'w-grad-check');
    const { grads } = tf.variableGrads(() => tf.sum(tf.square(tf.matMul(x, variable))), [variable]);
    // d/dw sum((xw)^2) = x^T (2 x w)
    const expected = reference(x, tf.mul(tf.matMul(x, w), 2), true, false);
    expectClose(grads['w-grad-check']!.dataSync(), expected);
    tf.dispose([x, w, variable, grads['w-grad-check']!]);
  });
});
