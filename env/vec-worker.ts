// The worker side of WorkerVecEnv: one VecEnv over a block of envs in shared memory, driven by
// Atomics commands from the main thread.

import { workerData } from 'node:worker_threads';
import { VecEnv, sliceVecBuffers, viewVecBuffers, type VecBuffers } from './vec-env.js';
import {
  CMD_CLOSE,
  CMD_RESET,
  CMD_STEP,
  CTRL_COMMAND,
  CTRL_DONE,
  CTRL_ERROR,
  CTRL_SEQUENCE,
  TEXT_BYTES,
  type WorkerInit,
} from './worker-vec-env.js';

const init = workerData as WorkerInit;
const s = init.shared;
const all: VecBuffers = viewVecBuffers(s);
const env = new VecEnv({
  numEnvs: init.count,
  config: init.config,
  firstEnvIndex: init.start,
  buffers: sliceVecBuffers(all, init.start, init.count),
});
const actions = new Int32Array(s.actions).subarray(init.start, init.start + init.count);
const control = new Int32Array(s.control);
const text = new Uint8Array(s.text);
const spinMilliseconds = init.spinMicroseconds / 1000;

let seen = 0;
for (;;) {
  // Poll a little before sleeping: the next command usually comes within the caller's action
  // choice, and a polling worker starts at once where a sleeping one waits for the kernel.
  if (spinMilliseconds > 0 && Atomics.load(control, CTRL_SEQUENCE) === seen) {
    const until = performance.now() + spinMilliseconds;
    while (Atomics.load(control, CTRL_SEQUENCE) === seen && performance.now() < until);
  }
  // A timeout so that a missed wake-up (seen on this machine's main thread, see
  // WorkerVecEnv.command) delays a command by at most 20 ms instead of forever.
  Atomics.wait(control, CTRL_SEQUENCE, seen, 20);
  const sequence = Atomics.load(control, CTRL_SEQUENCE);
  if (sequence === seen) continue;
  seen = sequence;
  const command = Atomics.load(control, CTRL_COMMAND);
  if (command === CMD_CLOSE) break;
  try {
    if (command === CMD_RESET) {
      const length = new DataView(text.buffer).getInt32(TEXT_BYTES, true);
      env.reset(length < 0 ? undefined : new TextDecoder().decode(text.slice(0, length)));
    } else if (command === CMD_STEP) {
      env.step(actions);
    }
  } catch (e) {
    if (Atomics.compareExchange(control, CTRL_ERROR, 0, 1) === 0) {
      const bytes = new TextEncoder().encode(`worker ${init.workerIndex}: ${(e as Error).message}`).subarray(0, TEXT_BYTES);
      text.set(bytes);
      new DataView(text.buffer).setInt32(TEXT_BYTES, bytes.length, true);
    }
  }
  // The last worker to finish wakes the caller.
  if (Atomics.add(control, CTRL_DONE, 1) + 1 === init.numWorkers) Atomics.notify(control, CTRL_DONE);
}
