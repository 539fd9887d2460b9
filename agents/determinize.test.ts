// Determinization: a sampled state agrees with everything the seat has seen.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS, createGame } from '../env/rules/index.js';
import { OBS_SIZE, decodeObservation, encodeObservation } from '../env/observation.js';
import { sampleState } from './determinize.js';

const CONFIGS = [
  { profile: 'didactic4', players: 3 },
  { profile: 'didactic4', players: 4 },
  { profile: 'didactic4', players: 6 },
  { profile: 'tavern5', players: 4 },
  { profile: 'tavern5', players: 5, exchange: {}, bettler: {}, weliRank: 'highest' },
];

describe.each(CONFIGS)('sampleState %j', (rules) => {
  it('reproduces the seat\'s observation (up to the ledger and session progress) and its legal actions', () => {
    const game = createGame(rules);
    const random = seedrandom('det');
    const trueObs = new Float32Array(OBS_SIZE);
    const sampledObs = new Float32Array(OBS_SIZE);
    const trueMask = new Uint8Array(NUM_ACTIONS);
    const sampledMask = new Uint8Array(NUM_ACTIONS);
    let tried = 0;
    let sampled = 0;
    for (let seed = 0; seed < 6; seed++) {
      const state = game.newState({ seed });
      while (!state.isTerminal) {
        const seat = state.currentSeat;
        if (state.kind !== 'tie-break') {
          encodeObservation(state, seat, trueObs);
          const view = decodeObservation(trueObs);
          const copy = sampleState(game, view, random);
          tried++;
          if (copy) {
            sampled++;
            encodeObservation(copy, seat, sampledObs);
            const { balances: _b, pot: _p, potBeforePlay: _pb, handsPlayedFraction: _h, handsLeft: _l, ...a } = decodeObservation(sampledObs);
            const { balances: _b2, pot: _p2, potBeforePlay: _pb2, handsPlayedFraction: _h2, handsLeft: _l2, ...b } = view;
            expect(a).toEqual(b);
            expect(Array.from(copy.legalActionMask(sampledMask))).toEqual(Array.from(state.legalActionMask(trueMask)));
          }
        }
        state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      }
    }
    expect(sampled / tried).toBeGreaterThan(0.95);
  });
});
