// policy.act on a checkpoint's network in slices of rows, giving way between them (docs/bridge.md,
// Fair under load): a network near the checkpoint size limit ran a 351-row request as one piece
// of 0.4-0.7 s, twice (act, then evaluate), and held every other client that long [bridge probe].

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NUM_ACTIONS, OBS_SIZE, VecEnv, randomLegalActions } from '../index.js';
import { PolicyAgent } from '../agents/policy-agent.js';
import { selectBackend } from '../agents/tfjs.js';
import { actWithPolicy, rowsPerSlice, type ServedPolicy } from './policies.js';
import type { StepControl } from './session.js';

let big: PolicyAgent;
let pretrainedSize: PolicyAgent;

beforeAll(async () => {
  await selectBackend('wasm');
  big = new PolicyAgent({ architecture: { hiddenSizes: [1024, 1024, 1024] }, seed: 3, mode: 'sample' });
  pretrainedSize = new PolicyAgent({ architecture: { hiddenSizes: [128, 128] }, seed: 3, mode: 'sample' });
});

afterAll(() => {
  big.dispose();
  pretrainedSize.dispose();
});

/** `rows` observations and masks of a seeded didactic4 vector env, a few steps in. */
function rows(count: number): { policy: string; observations: number[][]; masks: number[][] } {
  const vec = new VecEnv({ numEnvs: count, config: { rules: { profile: 'didactic4', players: 4 } } }).reset(5);
  let s = 11;
  const random = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296);
  for (let k = 0; k < 7; k++) vec.step(randomLegalActions(vec.masks, count, NUM_ACTIONS, random, new Int32Array(count)));
  return {
    policy: 'p',
    observations: Array.from({ length: count }, (_, i) => Array.from(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE))),
    masks: Array.from({ length: count }, (_, i) => Array.from(vec.masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS))),
  };
}

function served(policy: PolicyAgent): ServedPolicy {
  return { id: 'p', agent: policy, policy, info: {} };
}

/** A control that asks for a pause after every piece, and counts them. */
function pausingControl(): StepControl & { pauses: number } {
  const control = {
    pauses: 0,
    due: () => true,
    pause: async () => {
      control.pauses++;
    },
  };
  return control;
}

describe('policy.act on a checkpoint network [issue: one request can freeze every client]', () => {
  it('runs a big network a slice of rows at a time, pausing between slices, with the answer of the batch at once', async () => {
    const size = rowsPerSlice(big);
    expect(size).toBeGreaterThanOrEqual(1);
    expect(size).toBeLessThan(32);
    const params = rows(64);
    big.reseed(1);
    const whole = await actWithPolicy(served(big), params);
    big.reseed(1);
    const control = pausingControl();
    const sliced = await actWithPolicy(served(big), params, control);
    const slices = Math.ceil(64 / size);
    // Between the act's slices, then before each of the evaluation's.
    expect(control.pauses).toBe(slices - 1 + slices);
    // Sampled actions draw from the policy's generator row by row, in order either way.
    expect(sliced.actions).toEqual(whole.actions);
    const probs = sliced.probabilities as number[][];
    (whole.probabilities as number[][]).forEach((row, i) => row.forEach((p, a) => expect(probs[i]![a]).toBeCloseTo(p, 6)));
    (whole.values as number[]).forEach((v, i) => expect((sliced.values as number[])[i]).toBeCloseTo(v, 6));
  });

  it('takes a whole request (351 rows at most) at once on a network of the pretrained size', async () => {
    expect(rowsPerSlice(pretrainedSize)).toBeGreaterThanOrEqual(351);
    const control = pausingControl();
    await actWithPolicy(served(pretrainedSize), rows(40), control);
    expect(control.pauses).toBe(0);
  });
});
