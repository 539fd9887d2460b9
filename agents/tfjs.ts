// The one place the project imports TF.js from (wasm-matmul.ts patches two of its kernels), and the choice of its backend: tfjs-node
// ('tensorflow') when installed, else WebAssembly, else plain JS ('cpu'). Code elsewhere uses
// only the shared `@tensorflow/tfjs` API, so every backend runs it.

import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { untransposeWasmMatMul } from './wasm-matmul.js';

export { tf };

/**
 * The data of the float32 tensors `build` returns, computed inside a tidy (everything else it
 * makes is released). Reading outside the tidy matters: `tf.tidy` walks whatever its function
 * returns, looking for tensors, and a typed array it walks element by element (about 70 ns each:
 * 10 ms for a gradient's 130k floats, ~1.5 ms for a 128-row policy evaluation).
 */
export function tidyData(build: () => tf.Tensor[]): Float32Array[] {
  const tensors = tf.tidy(build);
  try {
    return tensors.map((t) => t.dataSync() as Float32Array);
  } finally {
    tf.dispose(tensors);
  }
}

export type BackendChoice = 'auto' | 'tensorflow' | 'wasm' | 'cpu';
export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'tensorflow', 'wasm', 'cpu'];

export interface SelectedBackend {
  /** The backend now active (`tf.getBackend()`): 'tensorflow', 'wasm' or 'cpu'. */
  backend: string;
  tf: typeof tf;
}

// A variable, not a literal: tfjs-node is an optional dependency, and TypeScript must not
// require its types when it is absent.
const TFJS_NODE = '@tensorflow/tfjs-node';
let wasmPathsSet = false;
/** Calls run one after another: backend switches must not interleave. */
let queue: Promise<unknown> = Promise.resolve();

/** Why the last attempt at each backend failed, for the error of an explicit choice. */
const failures = new Map<string, string>();
/** What `auto` chose last, so a repeated `auto` does not probe tfjs-node again. */
let autoChoice: string | null = null;

async function loadTensorflow(): Promise<boolean> {
  if (!tf.findBackendFactory('tensorflow')) {
    try {
      // Importing tfjs-node registers the 'tensorflow' backend with the shared tfjs-core engine.
      await import(TFJS_NODE);
    } catch (e) {
      failures.set('tensorflow', `${TFJS_NODE} could not be loaded (${(e as Error).message.split('\n')[0]})`);
      return false;
    }
  }
  return activate('tensorflow');
}

async function loadWasm(): Promise<boolean> {
  if (!wasmPathsSet) {
    // In Node the wasm backend must be told where its .wasm binaries lie; the path is resolved
    // through the package so it works from source, from dist/ and from an installed package.
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
    try {
      setWasmPaths(dir + path.sep);
    } catch {
      // Someone initialized wasm before us (with their own paths): nothing to set any more.
    }
    wasmPathsSet = true;
    untransposeWasmMatMul();
  }
  return activate('wasm');
}

async function activate(name: string): Promise<boolean> {
  if (tf.getBackend() === name) return true;
  // setBackend reports an initialization failure as `false` (with a console warning), not a throw.
  const ok = await tf.setBackend(name).catch((e: Error) => {
    failures.set(name, e.message);
    return false;
  });
  if (ok) await tf.ready();
  else if (!failures.has(name)) failures.set(name, `backend ${name} failed to initialize`);
  return ok;
}

const LOADERS: Record<Exclude<BackendChoice, 'auto'>, () => Promise<boolean>> = {
  tensorflow: loadTensorflow,
  wasm: loadWasm,
  cpu: () => activate('cpu'),
};

async function select(choice: BackendChoice): Promise<SelectedBackend> {
  if (!BACKEND_CHOICES.includes(choice)) {
    throw new Error(`unknown backend '${String(choice)}' (expected one of ${BACKEND_CHOICES.join(', ')})`);
  }
  if (choice === 'auto' && autoChoice !== null && autoChoice === tf.getBackend()) return { backend: autoChoice, tf };
  const order: Exclude<BackendChoice, 'auto'>[] = choice === 'auto' ? ['tensorflow', 'wasm', 'cpu'] : [choice];
  for (const name of order) {
    if (await LOADERS[name]()) {
      if (choice === 'auto') autoChoice = name;
      return { backend: tf.getBackend(), tf };
    }
  }
  const name = order[order.length - 1]!;
  throw new Error(`TF.js backend '${choice}' is not available: ${failures.get(name) ?? 'unknown failure'}`);
}

/**
 * Selects the `auto` backend unless one is active already (by selectBackend or tf.setBackend):
 * a model loaded before any was chosen failed with "backend 'wasm' has not yet been
 * initialized", reported as a bad checkpoint.
 */
export async function ensureBackend(): Promise<void> {
  if (tf.engine().backendName == null) await selectBackend('auto');
}

/**
 * Makes `choice` the active TF.js backend and returns its name. `auto` tries tfjs-node, then
 * wasm, then cpu; an explicit choice that cannot load throws. Safe to call more than once.
 */
export function selectBackend(choice: BackendChoice = 'auto'): Promise<SelectedBackend> {
  const next = queue.then(() => select(choice));
  queue = next.catch(() => undefined);
  return next;
}
