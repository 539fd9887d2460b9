// States share slabs of memory (state-data.ts): neighbours in a slab must never see each other.
import { describe, expect, it } from 'vitest';
import { TableAt, actionRng, createGame, playRandomly, seatView, stateToRecord, type KratzenState } from './index.js';
import { LiveSeatView, liveSeatView } from './seat-view.js';
import { Mem } from './state-data.js';
import { NUM_CARDS } from './cards.js';
import { NUM_ACTIONS } from './actions.js';
import { RESULT_STRIDE } from './results.js';
import { HAND_CAPACITY, MAX_SEATS, MAX_TRICKS } from './sizes.js';

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

describe('the block layout (Mem)', () => {
  // [name, first byte, bytes]: every array of the block, by the element size of its view.
  const f64 = (at: number, length: number) => [at * 8, length * 8] as const;
  const i16 = (at: number, length: number) => [at * 2, length * 2] as const;
  const bytes = (at: number, length: number) => [at, length] as const;
  const ARRAYS: [string, readonly [number, number]][] = [
    ['rng', f64(Mem.rng, 4)],
    ['balances', f64(Mem.balances, MAX_SEATS)],
    ['startBalances', f64(Mem.startBalances, MAX_SEATS)],
    ['fees', f64(Mem.fees, MAX_SEATS)],
    ['legal', i16(Mem.legal, NUM_ACTIONS)],
    ['firstActions', i16(Mem.firstActions, 128)],
    ['faceUp', bytes(Mem.faceUp, 2)],
    ['trickCards', bytes(Mem.trickCards, MAX_SEATS)],
    ['trickSeats', bytes(Mem.trickSeats, MAX_SEATS)],
    ['playedCards', bytes(Mem.playedCards, MAX_TRICKS * MAX_SEATS)],
    ['trickWinners', bytes(Mem.trickWinners, MAX_TRICKS)],
    ['declaration', bytes(Mem.declaration, MAX_SEATS)],
    ['exchanged', bytes(Mem.exchanged, MAX_SEATS)],
    ['tricksWon', bytes(Mem.tricksWon, MAX_SEATS)],
    ['quotas', bytes(Mem.quotas, MAX_SEATS)],
    ['dealtIn', bytes(Mem.dealtIn, MAX_SEATS)],
    ['playing', bytes(Mem.playing, MAX_SEATS)],
    ['deck', bytes(Mem.deck, NUM_CARDS)],
    ['bettler', bytes(Mem.bettler, MAX_SEATS)],
    ['hands', bytes(Mem.hands, MAX_SEATS * HAND_CAPACITY)],
    ['handLength', bytes(Mem.handLength, MAX_SEATS)],
    ['discardedBy', bytes(Mem.discardedBy, NUM_CARDS)],
    ['discards', bytes(Mem.discards, NUM_CARDS)],
    ['firstDecks', bytes(Mem.firstDecks, 4 * NUM_CARDS)],
    ['firstResults', f64(Mem.firstResults, 4 * RESULT_STRIDE)],
  ];

  it('gives every array its own bytes inside the block', () => {
    const owner = new Array<string | undefined>(Mem.blockBytes);
    for (const [name, [start, length]] of ARRAYS) {
      expect(start + length, name).toBeLessThanOrEqual(Mem.blockBytes);
      for (let b = start; b < start + length; b++) {
        expect(owner[b], `${name} overlaps ${owner[b]} at byte ${b}`).toBeUndefined();
        owner[b] = name;
      }
    }
    expect(Mem.blockBytes % 8).toBe(0);
  });

  it('keeps the public table in whole words, holding exactly the arrays SeatView copies', () => {
    expect(Mem.faceUp % 4).toBe(0);
    expect(Mem.publicBytes % 4).toBe(0);
    const publicArrays = ARRAYS.filter(([, [start]]) => start >= Mem.faceUp && start < Mem.faceUp + Mem.publicBytes).map(([name]) => name);
    expect(publicArrays).toEqual(['faceUp', 'trickCards', 'trickSeats', 'playedCards', 'trickWinners', 'declaration', 'exchanged', 'tricksWon', 'quotas', 'dealtIn', 'playing']);
  });

  it('a seat view is a copy of the public table: it keeps what it showed when the state moves on', () => {
    const game = createGame({ profile: 'tavern5', exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {} });
    const random = actionRng('copy');
    const state = game.newState({ seed: 'copy' });
    const table = (v: ReturnType<typeof seatView>) =>
      JSON.stringify([v.faceUp, v.trickCards, v.trickSeats, v.playedCards, v.trickWinners, v.declaration, v.exchanged, v.tricksWon, v.quotas, v.dealtIn, v.playing, v.balances].map((a) => Array.from(a)));
    for (let k = 0; k < 30 && !state.isTerminal; k++) {
      const view = seatView(state, 0);
      const before = table(view);
      expect(Array.from(view.playedCards)).toEqual(Array.from(state.playedCards));
      expect(Array.from(view.declaration)).toEqual(Array.from(state.declaration));
      expect(Array.from(view.balances).slice(0, state.numPlayers)).toEqual(Array.from(state.balances));
      state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      expect(table(view)).toBe(before);
    }
  });
  it('a live seat view (the encoder\'s) shows what a copied one does, reading only the public table, in place', () => {
    const live = new LiveSeatView();
    const arrays: [string, number, number, 'bytes' | 'ubytes' | 'units'][] = [
      ['faceUp', TableAt.faceUp, 2, 'bytes'],
      ['trickCards', TableAt.trickCards, MAX_SEATS, 'bytes'],
      ['playedCards', TableAt.playedCards, MAX_TRICKS * MAX_SEATS, 'bytes'],
      ['declaration', TableAt.declaration, MAX_SEATS, 'ubytes'],
      ['exchanged', TableAt.exchanged, MAX_SEATS, 'ubytes'],
      ['tricksWon', TableAt.tricksWon, MAX_SEATS, 'ubytes'],
      ['quotas', TableAt.quotas, MAX_SEATS, 'ubytes'],
      ['dealtIn', TableAt.dealtIn, MAX_SEATS, 'ubytes'],
      ['balances', TableAt.balances, MAX_SEATS, 'units'],
    ];
    for (const rules of [{ profile: 'didactic4' }, { profile: 'tavern5', players: 5, exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {} }]) {
      const game = createGame(rules);
      const random = actionRng('live');
      const state = game.newState({ seed: 'live' });
      let checked = 0;
      while (!state.isTerminal && checked < 400) {
        for (let seat = 0; seat < state.numPlayers; seat++) {
          const copy = seatView(state, seat) as unknown as Record<string, unknown>;
          const view = liveSeatView(state, seat, live) as unknown as Record<string, unknown>;
          // The seat's own cards count up to their lengths (the live view is reused, as the encoder's is).
          const used = { hand: view.handLength as number, ownDiscards: view.numOwnDiscards as number };
          const shown = (v: unknown, key: string) => (ArrayBuffer.isView(v) ? Array.from(v as Int8Array).slice(0, used[key as keyof typeof used]) : v);
          for (const [key, value] of Object.entries(view)) {
            if (key === 'bytes' || key === 'ubytes' || key === 'units') continue;
            expect(shown(value, key), key).toEqual(shown(copy[key], key));
          }
          for (const [name, at, length, source] of arrays) {
            const read = Array.from((view[source] as Int8Array).subarray(at, at + length));
            expect(read, name).toEqual(Array.from(copy[name] as ArrayLike<number>).slice(0, length));
          }
          // Its views cover the public table and the balances, nothing else of the block.
          expect([live.bytes.length, live.ubytes.length, live.units.length]).toEqual([Mem.publicBytes, Mem.publicBytes, MAX_SEATS]);
          checked++;
        }
        state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      }
      expect(checked).toBeGreaterThan(100);
    }
  });
});
