// The utilisation arithmetic of bench/train.ts: the definition of work per step.
import { describe, expect, it } from 'vitest';
import { selectBackend } from '../agents/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { NUM_ACTIONS } from '../env/rules/actions.js';
import { flopsPerStep, layerShapes, matmulGflops } from './train.js';

describe('train bench arithmetic', () => {
  it('the layers are the trunk, then both heads as one matrix', () => {
    expect(layerShapes([128, 64])).toEqual([
      [OBS_SIZE, 128],
      [128, 64],
      [64, NUM_ACTIONS + 1],
    ]);
  });
  it('flops per step = 2 x multiply-adds x (1 inference + 3 x epochs)', () => {
    const macs = OBS_SIZE * 128 + 128 * 128 + 128 * (NUM_ACTIONS + 1);
    expect(flopsPerStep([128, 128], 4)).toBe(2 * macs * 13);
  });
  it('measures a positive matmul rate on the active backend', async () => {
    await selectBackend('wasm');
    expect(matmulGflops([16], 0.05)).toBeGreaterThan(0);
  });
});
