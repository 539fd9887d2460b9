// The oracle critic's privileged inputs: the other seats' hands, by the observation's relative seats.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { MAX_SEATS, NUM_CARDS, OBS_SIZE, ORACLE_SIZE, VecEnv, createGame, encodeObservation, encodeOtherHands, observationSpec } from '../index.js';

const HAND = observationSpec().slices.find((s) => s.name === 'hand')!.offset;
const PLAYED_BY = observationSpec().slices.find((s) => s.name === 'playedBy')!.offset;

const CONFIGS = [
  { profile: 'didactic4', players: 3 },
  { profile: 'didactic4', players: 4 },
  { profile: 'tavern5', players: 5, exchange: {} },
  { profile: 'tavern5', players: 6 },
];

describe('encodeOtherHands', () => {
  for (const rules of CONFIGS) {
    it(`holds every card of the other hands once, by relative seat (${rules.profile}, ${rules.players} players)`, () => {
      const n = rules.players;
      let plays = 0;
      const wrong: string[] = [];
      for (let seed = 0; seed < 3; seed++) {
        const state = createGame(rules).newState({ seed });
        const random = seedrandom(`oracle-${seed}`);
        const oracle = new Float32Array(ORACLE_SIZE);
        const obs = new Float32Array(OBS_SIZE);
        // The first hands of each session: enough deals, exchanges and tricks.
        for (let step = 0; step < 250 && !state.isTerminal; step++) {
          const seat = state.currentSeat;
          encodeOtherHands(state, seat, oracle);
          encodeObservation(state, seat, obs);
          const own = new Set(Array.from({ length: NUM_CARDS }, (_, c) => c).filter((c) => obs[HAND + c] === 1));
          // Each card at most once, never one of the observer's, no seat past the table.
          const seen = new Set<number>();
          for (let r = 1; r < MAX_SEATS; r++) {
            for (let c = 0; c < NUM_CARDS; c++) {
              const v = oracle[(r - 1) * NUM_CARDS + c]!;
              if (v !== 0 && v !== 1) wrong.push(`value ${v}`);
              if (!v) continue;
              if (r >= n) wrong.push(`card ${c} at relative seat ${r} of ${n}`);
              if (own.has(c) || seen.has(c)) wrong.push(`card ${c} twice`);
              seen.add(c);
            }
          }
          let held = 0;
          for (let s = 0; s < n; s++) if (s !== seat) held += state.handOf(s).length;
          if (seen.size !== held) wrong.push(`${seen.size} cards for ${held} held`);
          // Before a card is played: every other observer holds it in the row of the player's
          // relative seat (the slot the observation's playedBy gives that player).
          const before = state.phase === 'play' ? Array.from({ length: n }, (_, o) => {
            const rows = new Float32Array(ORACLE_SIZE);
            encodeOtherHands(state, o, rows);
            return rows;
          }) : null;
          const trick = state.trickNumber;
          const hand = state.handIndex;
          state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
          if (before && state.handIndex === hand && state.phase === 'play') {
            const card = state.playedCards[trick * MAX_SEATS + seat]!;
            expect(card).toBeGreaterThanOrEqual(0);
            for (let o = 0; o < n; o++) {
              if (o === seat) continue;
              const r = (seat - o + n) % n;
              for (let q = 1; q < n; q++) if (before[o]![(q - 1) * NUM_CARDS + card] !== (q === r ? 1 : 0)) wrong.push(`observer ${o}: card ${card} of seat ${seat} in row ${q}`);
              encodeObservation(state, o, obs);
              if (obs[PLAYED_BY + r * NUM_CARDS + card] !== 1) wrong.push(`observer ${o}: playedBy slot ${r} lacks card ${card}`);
            }
            plays++;
          }
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(plays).toBeGreaterThan(0);
    });
  }

  it('refuses a seat off the table, a short buffer or a bad offset before writing, as encodeObservation does [probe]', () => {
    // Seat 9 of four wrote the hands around seat 1, and a short buffer lost the rest of the row.
    const state = createGame({ profile: 'didactic4', players: 4 }).newState({ seed: 1 });
    const out = new Float32Array(ORACLE_SIZE + 1).fill(0.5);
    for (const seat of [9, 4, -1, 1.5]) expect(() => encodeOtherHands(state, seat, out)).toThrow(RangeError);
    expect(() => encodeOtherHands(state, 0, new Float32Array(4))).toThrow(/needs 165 floats of a Float32Array from offset 0; it holds 4/);
    expect(() => encodeOtherHands(state, 0, out, 2)).toThrow(/from offset 2; it holds 166/);
    expect(() => encodeOtherHands(state, 0, out, -50)).toThrow(RangeError);
    expect(() => encodeOtherHands(state, 0, [] as never)).toThrow(/not Array/);
    expect(Array.from(new Set(out))).toEqual([0.5]);
    const vec = new VecEnv({ numEnvs: 1, config: {} }).reset(1);
    expect(() => vec.writeOtherHands(0, 7, new Float32Array(ORACLE_SIZE))).toThrow(RangeError);
    encodeOtherHands(state, 0, out, 1);
    expect(out[0]).toBe(0.5);
  });
});
