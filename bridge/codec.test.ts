// The binary batch codec (protocol.ts): observations travel as CSR, taken from the rows' own
// entry lists when the vector env keeps them and scanned from the dense rows otherwise.

import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS, VecEnv, randomLegalActions } from '../index.js';
import seedrandom from 'seedrandom';
import { BinaryEncoderState, decodeBinaryFrame, denseFromCsr, encodeBinary, type BatchView } from './codec.js';

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
