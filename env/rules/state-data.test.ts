// States share slabs of memory (state-data.ts): neighbours in a slab must never see each other.
import { describe, expect, it } from 'vitest';
import { actionRng, createGame, playRandomly, stateToRecord, type KratzenState } from './index.js';

/** Plays `state` one random action at a time, `count` actions at most. */
function advance(state: KratzenState, random: () => number, count: number): void {
  for (let k = 0; k < count && !state.isTerminal; k++) state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
}

describe('state memory from shared slabs', () => {
  it('states created together (one slab and the next) play interleaved exactly as each plays alone', () => {
    for (const rules of [{ profile: 'didactic4' }, { profile: 'tavern5', exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {} }]) {
      const game = createGame(rules);
      const seeds = Array.from({ length: 40 }, (_, i) => `slab-${i}`);
      const states = seeds.map((seed) => game.newState({ seed }));
      const randoms = seeds.map((seed) => actionRng(seed));
      // Clones land in slabs between the originals; they are played too.
      const clones = states.map((state) => state.clone());
      const cloneRandoms = seeds.map((seed) => actionRng(seed));
      for (let round = 0; states.some((s) => !s.isTerminal); round++) {
        states.forEach((state, i) => advance(state, randoms[i]!, 1 + (i % 3)));
        clones.forEach((state, i) => advance(state, cloneRandoms[i]!, 2 + (i % 2)));
      }
      clones.forEach((state, i) => advance(state, cloneRandoms[i]!, Infinity));
      seeds.forEach((seed, i) => {
        const alone = playRandomly(game.newState({ seed }), actionRng(seed));
        expect(stateToRecord(states[i]!)).toEqual(stateToRecord(alone));
        expect(stateToRecord(clones[i]!)).toEqual(stateToRecord(alone));
      });
    }
  });

  it('a new state starts from zeroed memory even after its slab neighbours played whole sessions', () => {
    const game = createGame({ profile: 'didactic4' });
    const played = Array.from({ length: 20 }, (_, i) => playRandomly(game.newState({ seed: i }), actionRng(i)));
    const fresh = game.newState({ seed: 'after' });
    const reference = createGame({ profile: 'didactic4' }).newState({ seed: 'after' });
    expect(stateToRecord(playRandomly(fresh, actionRng('after')))).toEqual(stateToRecord(playRandomly(reference, actionRng('after'))));
    expect(played.every((state) => state.isTerminal)).toBe(true);
  });
});
