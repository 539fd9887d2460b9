// The binary batch codec (protocol.ts): observations travel as CSR, taken from the rows' own
// entry lists when the vector env keeps them and scanned from the dense rows otherwise.

import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS, OBS_SIZE, VecEnv, randomLegalActions } from '../index.js';
import seedrandom from 'seedrandom';
import { BinaryEncoderState, decodeBinaryFrame, denseFromCsr, encodeBinary, encodeJsonSteps, type BatchView } from './codec.js';
import { drain } from '../env/rules/index.js';

function view(vec: VecEnv): BatchView {
  return {
    session: 's',
    numEnvs: vec.numEnvs,
    observations: vec.observations,
    masks: vec.masks,
    seats: vec.seats,
    rewards: vec.rewards,
    rewardWidth: vec.numPlayers,
    terminated: vec.terminated,
    truncated: vec.truncated,
    finalObservations: vec.finalObservations,
    final: [],
    observationRows: vec.rows,
  };
}

describe('encodeBinary', () => {
  it('sends each observation row exactly, whether or not the rows list their entries', () => {
    for (const listObservationEntries of [true, false]) {
      const config = { rules: { profile: 'tavern5', players: 5, exchange: {} } };
      const vec = new VecEnv({ numEnvs: 6, config, listObservationEntries }).reset(4);
      expect(vec.rows.listsEntries).toBe(listObservationEntries);
      const random = seedrandom('codec');
      const actions = new Int32Array(vec.numEnvs);
      const state = new BinaryEncoderState();
      for (let step = 0; step < 40; step++) {
        const { arrays } = decodeBinaryFrame(encodeBinary(step, view(vec), state));
        const dense = denseFromCsr(arrays['observations.indptr'] as Uint32Array, arrays['observations.indices'] as Uint16Array, arrays['observations.values'] as Float32Array);
        expect(dense).toEqual(vec.observations);
        vec.step(randomLegalActions(vec.masks, vec.numEnvs, NUM_ACTIONS, random, actions));
      }
    }
  });
});

describe('encodeBinary header', () => {
  it('is the JSON text of {id, result} for ids of every kind, its length counted in UTF-8 bytes', () => {
    const vec = new VecEnv({ numEnvs: 3, config: {} }).reset(1);
    for (const session of ['s', 'sé😀']) {
      const state = new BinaryEncoderState();
      for (const id of [0, 7, 1234567890, 2 ** 53 - 1, 2 ** 53, -3, 1.5, 1e21, '', 'abc', 'x"1', 'ü€😀']) {
        for (const final of [[], [{ env: 1, info: { note: 'ö' } }]]) {
          const frame = encodeBinary(id, { ...view(vec), session, final }, state);
          const headerLength = frame.readUInt32LE(0);
          const text = frame.toString('utf8', 4, 4 + headerLength);
          const { header, arrays } = decodeBinaryFrame(frame);
          expect(header).toEqual({ id, result: { session, numEnvs: 3, rewardWidth: vec.numPlayers, final, lengths: expect.any(Array) } });
          expect(text).toBe(JSON.stringify(header));
          expect(Buffer.byteLength(text)).toBe(headerLength);
          expect(Array.from(arrays.masks)).toEqual(Array.from(vec.masks));
        }
      }
    }
  });
});

describe('encodeJsonSteps', () => {
  it('writes in slices (giving way between them) the text JSON.stringify gives for the whole reply [probe round 2]', () => {
    const vec = new VecEnv({ numEnvs: 150, config: { rules: { players: 3 } } }).reset(2);
    const random = seedrandom('json');
    const actions = new Int32Array(vec.numEnvs);
    for (let step = 0; step < 30; step++) vec.step(randomLegalActions(vec.masks, vec.numEnvs, NUM_ACTIONS, random, actions));
    for (const rewardWidth of [1, vec.numPlayers]) {
      const v = { ...view(vec), rewardWidth, rewards: rewardWidth === 1 ? vec.rewards.subarray(0, vec.numEnvs) : vec.rewards, final: [0, 7, 149].map((env) => ({ env, info: { hands: env } })) };
      const rows = <T extends Float32Array | Uint8Array>(a: T, width: number, i: number) => Array.from(a.subarray(i * width, (i + 1) * width));
      const whole = JSON.stringify({
        id: 'x"1',
        result: {
          session: v.session,
          numEnvs: v.numEnvs,
          observations: Array.from({ length: v.numEnvs }, (_, i) => rows(v.observations, OBS_SIZE, i)),
          masks: Array.from({ length: v.numEnvs }, (_, i) => rows(v.masks, NUM_ACTIONS, i)),
          seats: Array.from(v.seats),
          rewards: rewardWidth === 1 ? Array.from(v.rewards) : Array.from({ length: v.numEnvs }, (_, i) => rows(v.rewards, rewardWidth, i)),
          terminated: Array.from(v.terminated, Boolean),
          truncated: Array.from(v.truncated, Boolean),
          final: v.final.map((f) => ({ env: f.env, observation: rows(v.finalObservations, OBS_SIZE, f.env), info: f.info })),
        },
      });
      const steps = encodeJsonSteps('x"1', v);
      let slices = 1;
      while (steps.next().done === false) slices++;
      expect(slices).toBeGreaterThan(4); // 150 rows of observations and of masks, 64 a slice
      expect(drain(encodeJsonSteps('x"1', v))).toBe(whole);
    }
  });
});
