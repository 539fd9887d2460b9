// The wasm backend multiplies through XNNPACK only when neither operand is transposed; with
// `transposeA` or `transposeB` it falls back to a plain loop, about 10x slower on the policy's
// layer shapes. Every matmul gradient asks for a transposed operand, so training spent most of
// an update there. This wraps the wasm kernels of BatchMatMul and _FusedMatMul: a transposed
// operand is first transposed into a copy (a small fraction of the multiply's cost) and the
// product taken untransposed. The result is the same product, summed in XNNPACK's order;
// untransposed calls (all of inference) pass straight through.

import * as tf from '@tensorflow/tfjs';

type TensorInfo = tf.TensorInfo;

const BACKEND = 'wasm';
const WRAPPED = ['BatchMatMul', '_FusedMatMul'] as const;
let wrapped = false;

/** Replaces the wasm matmul kernels with ones that never pass a transpose flag down. Idempotent. */
export function untransposeWasmMatMul(): void {
  if (wrapped) return;
  const transpose = tf.getKernel('Transpose', BACKEND);
  if (!transpose) return; // the wasm backend is not registered in this process
  for (const name of WRAPPED) {
    const original = tf.getKernel(name, BACKEND);
    if (!original) continue;
    tf.unregisterKernel(name, BACKEND);
    tf.registerKernel({
      ...original,
      kernelFunc: ({ inputs, backend, attrs }) => {
        const { transposeA, transposeB } = attrs as { transposeA?: boolean; transposeB?: boolean };
        if (!transposeA && !transposeB) return original.kernelFunc({ inputs, backend, attrs });
        const copies: TensorInfo[] = [];
        const untransposed = (x: TensorInfo): TensorInfo => {
          const rank = x.shape.length;
          const perm = [...Array(rank - 2).keys(), rank - 1, rank - 2];
          const copy = transpose.kernelFunc({ inputs: { x }, backend, attrs: { perm } }) as TensorInfo;
          copies.push(copy);
          return copy;
        };
        const a = inputs.a as TensorInfo;
        const b = inputs.b as TensorInfo;
        try {
          return original.kernelFunc({
            inputs: { ...inputs, a: transposeA ? untransposed(a) : a, b: transposeB ? untransposed(b) : b },
            backend,
            attrs: { ...attrs, transposeA: false, transposeB: false },
          });
        } finally {
          for (const copy of copies) (backend as tf.KernelBackend).disposeData(copy.dataId);
        }
      },
    });
  }
  wrapped = true;
}
