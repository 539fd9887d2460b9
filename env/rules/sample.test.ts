// Hidden-card sampling: a sampled state shows the seat exactly what the real one does — the same
// observation vector, bit for bit, and the same legal actions — in every position of random
// sessions of every profile, player count and variant (the seat's view decoded from its
// observation, as a search agent has it).
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS, createGame, sampleState, seatView, type KratzenGame, type KratzenState } from './index.js';
import { OBS_SIZE, encodeObservation, observationSpec } from '../observation.js';
import { decodeSeatView } from '../observation-view.js';
import { internals } from './internal.js';

const CONFIGS = [
  { profile: 'didactic4', players: 3 },
  { profile: 'didactic4', players: 4 },
  { profile: 'didactic4', players: 6 },
  { profile: 'tavern5', players: 3 },
  { profile: 'tavern5', players: 4 },
  { profile: 'tavern5', players: 5, exchange: {}, bettler: {}, weliRank: 'highest', dealerMinTricks: 3 },
  { profile: 'tavern5', players: 6, exchange: { maxCards: 4, feePerCard: 0.2 }, failPenalty: 'pot', hands: 2 },
];

describe.each(CONFIGS)('sampleState %j', (rules) => {
  it('reproduces the seat\'s observation bit for bit and its legal actions, every time', () => {
    const game = createGame(rules);
    const random = seedrandom('sample');
    const trueObs = new Float32Array(OBS_SIZE);
    const sampledObs = new Float32Array(OBS_SIZE);
    const trueMask = new Uint8Array(NUM_ACTIONS);
    const sampledMask = new Uint8Array(NUM_ACTIONS);
    let tried = 0;
    const kinds = new Set<string>();
    for (let seed = 0; seed < 8; seed++) {
      const state = game.newState({ seed });
      while (!state.isTerminal) {
        const seat = state.currentSeat;
        encodeObservation(state, seat, trueObs);
        for (const view of [decodeSeatView(trueObs), seatView(state, seat)]) {
          const copy = sampleState(view, random);
          expect(copy, `seed ${seed}, hand ${state.handIndex}, phase ${state.phase}`).not.toBeNull();
          encodeObservation(copy!, seat, sampledObs);
          expect(Array.from(sampledObs)).toEqual(Array.from(trueObs));
          expect(Array.from(copy!.legalActionMask(sampledMask))).toEqual(Array.from(state.legalActionMask(trueMask)));
          tried++;
        }
        kinds.add(state.kind);
        state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      }
    }
    expect(tried).toBeGreaterThan(100);
  });

  it('deals the hidden cards at random: the samples differ', () => {
    const game = createGame(rules);
    const random = seedrandom('spread');
    const state = game.newState({ seed: 'spread' });
    while (state.phase !== 'play' && !state.isTerminal) state.apply(state.legalActionAt(0));
    if (state.isTerminal) return;
    const seat = state.currentSeat;
    const other = Array.from({ length: state.numPlayers }, (_, s) => s).find((s) => s !== seat && state.playing[s])!;
    const hands = new Set<string>();
    for (let k = 0; k < 20; k++) hands.add(JSON.stringify(sampleState(seatView(state, seat), random)!.handOf(other).sort()));
    expect(hands.size).toBeGreaterThan(5);
  });
});

describe('sampleState, didactic4: the face-up card the dealer took into hand (docs/rules.md §3 Deal)', () => {
  it('is in its sampled hand as often as a random discard leaves it there (4 times in 5), not 92% of the time [rules probe, session 39]', () => {
    const game = createGame({ profile: 'didactic4', players: 4 });
    const random = seedrandom('face-up');
    let kept = 0;
    let samples = 0;
    for (let seed = 0; seed < 300; seed++) {
      const state = game.newState({ seed: `face-up ${seed}` });
      if (state.phase !== 'discard' || state.numFaceUp !== 1) continue;
      const faceUp = state.faceUp[0]!;
      const dealer = state.dealer;
      // The dealer discards one of its five cards at random; a seat after it samples the deal.
      state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      const view = seatView(state, (dealer + 1) % 4);
      for (let k = 0; k < 10; k++) {
        samples++;
        if (sampleState(view, random)!.handOf(dealer).includes(faceUp)) kept++;
      }
    }
    expect(samples).toBeGreaterThan(1000);
    expect(kept / samples).toBeGreaterThan(0.76);
    expect(kept / samples).toBeLessThan(0.84);
  });
});

describe('sampleState on views no deal fits [hostile input: a client\'s row]', () => {
  it('gives null for a play phase in which no seat plays (it looped for good)', () => {
    const game = createGame({ profile: 'tavern5', players: 4 });
    const random = seedrandom('none-playing');
    const obs = new Float32Array(OBS_SIZE);
    let tried = 0;
    for (let seed = 0; seed < 6; seed++) {
      const state = game.newState({ seed });
      while (!state.isTerminal && state.phase !== 'play') state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      if (state.isTerminal) continue;
      encodeObservation(state, state.currentSeat, obs);
      const declarations = observationSpec().slices.find((s) => s.name === 'declarations')!;
      obs.fill(0, declarations.offset, declarations.offset + declarations.size);
      const view = decodeSeatView(obs);
      expect(view.phase).toBe('play');
      expect(view.numPlaying).toBe(0);
      expect(sampleState(view, random)).toBeNull();
      tried++;
    }
    expect(tried).toBeGreaterThan(2);
  });
});

describe('sampleState on a view whose seat to act the decisions it shows have passed [review]', () => {
  it('gives null: the replay stopped at the seat and dropped the declarations after it', () => {
    const game = createGame({ profile: 'didactic4', players: 4 });
    const random = seedrandom('passed');
    let tried = 0;
    for (let seed = 0; seed < 30 && tried < 5; seed++) {
      const state = game.newState({ seed });
      while (!state.isTerminal && state.phase !== 'declare') state.apply(state.legalActionAt(0));
      if (state.phase !== 'declare') continue;
      // Two seats declare; the view then names the first of them as the seat to act.
      const first = state.currentSeat;
      state.apply(state.legalActionAt(0));
      if (state.phase !== 'declare') continue;
      state.apply(state.legalActionAt(0));
      if (state.phase !== 'declare') continue;
      const view = seatView(state, first);
      expect(sampleState(view, random)).not.toBeNull();
      view.toAct = first;
      expect(sampleState(view, random)).toBeNull();
      tried++;
    }
    expect(tried).toBeGreaterThan(0);
  });
});

/** Checks stackDeck against the deal of `state`'s hand in progress, at its first decision (every seat still holds its cards as dealt). */
function expectStackedAsDealt(game: KratzenGame, state: KratzenState): void {
  const n = state.numPlayers;
  const order = Array.from({ length: n }, (_, k) => (state.dealer + 1 + k) % n).filter((s) => state.dealtIn[s]);
  const faceUp = Array.from({ length: state.numFaceUp }, (_, i) => state.faceUp[i]!);
  const dealt = Array.from({ length: n }, (_, s) => state.handOf(s).filter((c) => !(game.profile.dealerTakesFaceUp && s === state.dealer && faceUp.includes(c))));
  const deck = state.handLogs()[state.handIndex]!.deck;
  const used = order.length * game.handSize + faceUp.length;
  expect(game.profile.stackDeck(order, dealt, faceUp, deck.slice(used))).toEqual(Array.from(deck));
}

describe.each(CONFIGS)('stackDeck %j', (rules) => {
  it('stacks the deck its profile\'s deal deals: every hand of random sessions (a tie-break deal of fewer seats [D-11] among them)', () => {
    const game = createGame(rules);
    const random = seedrandom('stack');
    let checked = 0;
    for (let seed = 0; seed < 6; seed++) {
      const state = game.newState({ seed });
      let hand = -1;
      while (!state.isTerminal) {
        if (state.handIndex !== hand && state.phase !== 'deal') {
          hand = state.handIndex;
          expectStackedAsDealt(game, state);
          checked++;
        }
        state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
      }
    }
    expect(checked).toBeGreaterThan(10);
  });
});

describe('stackDeck, didactic4 with a turned Weli [D-1]', () => {
  it('puts the card turned after the Weli between the packets too', () => {
    const game = createGame({ profile: 'didactic4', players: 4 });
    let turned = 0;
    for (let seed = 0; seed < 400 && turned < 3; seed++) {
      const state = game.newState({ seed });
      if (state.numFaceUp !== 2) continue;
      expectStackedAsDealt(game, state);
      turned++;
    }
    expect(turned).toBe(3);
  });
});

describe('sampleState with a generator that is not one [probe round 3b]', () => {
  it('refuses draws outside [0, 1) and a random that is no function, naming random (a TypeError deep inside before)', () => {
    const state = createGame({ players: 4 }).newState({ seed: 3 });
    state.apply(state.legalActions()[0]!);
    const view = seatView(state, state.currentSeat);
    for (const random of [() => Number.NaN, () => 1, () => -0.5]) expect(() => sampleState(view, random)).toThrow(/^random must return numbers in \[0, 1\)/);
    expect(() => sampleState(view, 5 as unknown as () => number)).toThrow(/^random must be a function/);
    expect(sampleState(view, seedrandom('ok'))).not.toBeNull();
  });
});

describe('sampleState in a tie-break deal [D-11]', () => {
  it('ties the seats that tied, the next dealer among them when it tied (it was left out: only the others were candidates)', () => {
    const random = seedrandom('tie-break');
    const obs = new Float32Array(OBS_SIZE);
    let positions = 0;
    let dealerTied = 0;
    for (const rules of [{ profile: 'tavern5', players: 3, hands: 1 }, { profile: 'tavern5', players: 4, hands: 2 }]) {
      const game = createGame(rules);
      for (let seed = 0; seed < 300; seed++) {
        const state = game.newState({ seed });
        while (!state.isTerminal) {
          if (state.isTieBreak) {
            const tied = internals(state).tiedSeats;
            encodeObservation(state, state.currentSeat, obs);
            for (const view of [decodeSeatView(obs), seatView(state, state.currentSeat)]) {
              expect(internals(sampleState(view, random)!).tiedSeats).toBe(tied);
            }
            positions++;
            if (tied & (1 << state.dealer)) dealerTied++;
          }
          state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
        }
      }
    }
    expect(positions).toBeGreaterThan(50);
    expect(dealerTied).toBeGreaterThan(5);
  });
});
