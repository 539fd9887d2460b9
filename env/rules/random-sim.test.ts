// Random-simulation suite (OpenSpiel's RandomSimTest): every profile and player count, many seeded
// sessions, checking masks, legality, conservation of cards and chips, determinism and replay.
import { internals } from './internal.js';
import { Mem } from './state-data.js';
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import {
  IllegalActionError,
  NUM_ACTIONS,
  NUM_CARDS,
  actionRng,
  createGame,
  playRandomly,
  randomSession,
  replayRecord,
  replayResult,
  stateToRecord,
  type KratzenState,
} from './index.js';

const PROFILES: [string, Record<string, unknown>][] = [
  ['didactic4', { profile: 'didactic4' }],
  ['tavern5', { profile: 'tavern5' }],
  [
    'tavern5 with every variant',
    { profile: 'tavern5', exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {}, weliRank: 'highest', dealerMinTricks: 3, failPenalty: 'pot', startingChips: 30, targetChips: 45 },
  ],
];
const SESSIONS = 12;

/** Each card is exactly once in a hand, a trick, a discard pile, face up out of play, or undealt. */
function cardsConserved(state: KratzenState): boolean {
  const seen = new Uint8Array(NUM_CARDS);
  const mark = (card: number) => seen[card]!++;
  for (let s = 0; s < state.numPlayers; s++) state.handOf(s).forEach(mark);
  for (const card of Array.from(state.playedCards)) if (card >= 0) mark(card);
  const d = internals(state);
  for (let card = 0; card < NUM_CARDS; card++) if (d.i8[Mem.discardedBy + card]! >= 0) mark(card);
  let undealt: number;
  if (state.rules.profile === 'tavern5') {
    mark(state.faceUp[0]!); // the turned card stays face up, out of play
    undealt = d.talonPosition;
  } else {
    let dealtIn = 0;
    for (let s = 0; s < state.numPlayers; s++) dealtIn += state.dealtIn[s]!;
    undealt = 4 * dealtIn + state.numFaceUp;
  }
  for (let i = undealt; i < NUM_CARDS; i++) mark(d.i8[Mem.deck + i]!);
  return seen.every((count) => count === 1);
}

function chipTotal(state: KratzenState): number {
  return Array.from(state.balances).reduce((a, b) => a + b, 0) + state.pot;
}

describe.each(PROFILES)('random simulation: %s', (_name, profileRules) => {
  describe.each([3, 4, 5, 6])('%i players', (players) => {
    const rules = { ...profileRules, players };

    it('masks are never empty before the end; legal actions are accepted, others rejected and change nothing', () => {
      const mask = new Uint8Array(NUM_ACTIONS);
      for (let seed = 0; seed < SESSIONS; seed++) {
        const state = createGame(rules).newState({ seed });
        const random = actionRng(seed);
        let steps = 0;
        while (!state.isTerminal) {
          state.legalActionMask(mask);
          const legal = state.legalActions();
          expect(legal.length).toBeGreaterThan(0);
          expect(mask.reduce((a, b) => a + b, 0)).toBe(legal.length);
          for (let action = 0; action < NUM_ACTIONS; action++) {
            if (mask[action]) {
              state.clone().apply(action); // must not throw
            } else if (steps % 7 === 0) {
              const before = JSON.stringify(stateToRecord(state));
              expect(() => state.apply(action)).toThrow(IllegalActionError);
              expect(JSON.stringify(stateToRecord(state))).toBe(before);
              expect(state.legalActions()).toEqual(legal);
            }
          }
          expect(cardsConserved(state)).toBe(true);
          state.apply(legal[Math.floor(random() * legal.length)]!);
          expect(chipTotal(state)).toBe(0);
          steps++;
        }
        expect(state.complete).toBe(true);
        expect(state.results.length).toBeGreaterThanOrEqual(1);
        expect(state.legalActions()).toEqual([]);
      }
    });

    it('same seed, same record; replaying each record reproduces its result', () => {
      for (let seed = 0; seed < SESSIONS; seed++) {
        const a = randomSession(rules, seed);
        const b = randomSession(rules, seed);
        const record = stateToRecord(a);
        expect(stateToRecord(b)).toEqual(record);
        const replayed = replayRecord(JSON.parse(JSON.stringify(record)));
        expect(replayed.result).toEqual(replayResult(a));
        expect(replayed.result.final.complete).toBe(true);
        // Balances and pot add up to zero in every reported hand (chips are conserved).
        for (const hand of replayed.result.hands) {
          const total = hand.balances.reduce((x, y) => x + y, 0) + hand.potAfter;
          expect(Math.abs(total)).toBeLessThan(1e-9);
        }
      }
    });

    it('a clone taken mid-session plays on exactly like the original', () => {
      for (let seed = 0; seed < 4; seed++) {
        const state = createGame(rules).newState({ seed });
        const random = seedrandom(`clone-${seed}`);
        for (let i = 0; i < 30 && !state.isTerminal; i++) state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
        const copy = state.clone();
        expect(stateToRecord(copy)).toEqual(stateToRecord(state));
        const r1 = seedrandom('same');
        const r2 = seedrandom('same');
        while (!state.isTerminal) state.apply(state.legalActionAt(Math.floor(r1() * state.numLegalActions())));
        while (!copy.isTerminal) copy.apply(copy.legalActionAt(Math.floor(r2() * copy.numLegalActions())));
        expect(stateToRecord(copy)).toEqual(stateToRecord(state));
        expect(replayResult(copy)).toEqual(replayResult(state));
      }
    });

    it('restart(seed) in a used state plays the session a fresh state of that seed plays', () => {
      const reused = createGame(rules).newState({ seed: 'first' });
      playRandomly(reused, actionRng('first'));
      for (let seed = 0; seed < 4; seed++) {
        const oldResults = reused.results;
        reused.restart(seed);
        expect(oldResults.length).toBeGreaterThan(0); // an old results array stays as it was
        playRandomly(reused, actionRng(seed));
        const fresh = randomSession(rules, seed);
        expect(stateToRecord(reused)).toEqual(stateToRecord(fresh));
        expect(replayResult(reused)).toEqual(replayResult(fresh));
      }
    });
  });
});

describe('the random simulation reaches every rule path', () => {
  it('tie-breaks, walkovers, Muss deals, named trumps, bettlers and exchanges all occur', () => {
    const seen = new Map<string, number>();
    const bump = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    for (let seed = 0; seed < 300; seed++) {
      const rules = { profile: 'tavern5', players: 3 + (seed % 4), exchange: {}, bettler: {}, hands: 3 };
      const state = randomSession(rules, seed);
      for (const r of state.results) {
        bump(r.kind);
        if (r.walkover) bump('walkover');
        if (r.indicator < 0) bump('named trump');
        if (r.fees?.some((f) => f > 0)) bump('exchange fee');
      }
      const record = stateToRecord(state);
      for (const hand of record.hands ?? []) for (const a of hand.actions ?? []) if (a.action === 'bettler') bump('bettler');
    }
    for (const key of ['normal', 'muss', 'tie-break', 'walkover', 'named trump', 'exchange fee', 'bettler']) {
      expect(seen.get(key) ?? 0, key).toBeGreaterThan(0);
    }
  });
});
