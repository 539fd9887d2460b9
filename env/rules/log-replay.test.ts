// Replays of a state's own log (record.ts: logReplayStart, stateAtHandEndSteps) and the pages of
// a long session (stateToRecord and replayResult from .. to): the same hands as the whole.
import { describe, expect, it } from 'vitest';
import { actionRng, createGame, drain, playRandomly, replayRecord, replayResult, stateAtHandEndSteps, stateToRecord, type KratzenState } from './index.js';

const RULES = [
  { profile: 'didactic4', players: 4, hands: 6 },
  { profile: 'tavern5', players: 5, hands: 6, exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {} },
] as const;

/** Every finished hand's end, replayed, against the state's own record and results up to it. */
function expectHandEndsReplayed(state: KratzenState): void {
  for (let hands = 1; hands <= state.numResults; hands++) {
    const replay = drain(stateAtHandEndSteps(state, hands));
    expect(replay.numResults).toBe(hands);
    expect(replay.phase === 'deal' || replay.complete).toBe(true);
    expect(stateToRecord(replay)).toEqual(stateToRecord(state, 0, hands));
    expect(replayResult(replay).hands).toEqual(replayResult(state).hands.slice(0, hands));
  }
}

describe('replaying a state from its own log', () => {
  it.each(RULES)('$profile: a state dealt from its seed alone replays to the end of each hand', (rules) => {
    const game = createGame(rules);
    for (const seed of ['log-1', 'log-2', 7]) {
      const state = playRandomly(game.newState({ seed }), actionRng(seed));
      expect(state.dealtFromSeedAlone).toBe(true);
      expectHandEndsReplayed(state);
    }
  });

  // A state given its decks or its start (a replayed record) is replayed from the logged decks:
  // its seed alone would deal other hands.
  it.each(RULES)('$profile: a state given decks and a start replays from them, seeded or not', (rules) => {
    const game = createGame(rules);
    const played = playRandomly(game.newState({ seed: 'given' }), actionRng('given'));
    const record = stateToRecord(played);
    const start = { ...record.start!, dealer: (played.startInfo.dealer + 1) % game.numPlayers };
    // Its first dealer given, the seed deals it other cards than the seed alone would.
    const withStart = playRandomly(replayRecord({ ...record, hands: [], start }).state, actionRng('start'));
    const unseeded = replayRecord({ ...record, seed: undefined }).state;
    const seeded = replayRecord(record).state;
    for (const state of [withStart, seeded, unseeded]) {
      expect(state.dealtFromSeedAlone).toBe(false);
      expectHandEndsReplayed(state);
    }
    expect(game.newState({ seed: 1, start: {} }).dealtFromSeedAlone).toBe(false);
  });

  it('restart deals from the seed alone again; a clone keeps how its state was dealt', () => {
    const game = createGame({ profile: 'didactic4' });
    const given = game.newState({ seed: 3, start: { dealer: 1 } });
    expect(given.clone().dealtFromSeedAlone).toBe(false);
    given.restart('again');
    expect(given.dealtFromSeedAlone).toBe(true);
    expect(given.clone().dealtFromSeedAlone).toBe(true);
  });

  it('names a hand count outside the hands finished', () => {
    const state = playRandomly(createGame({ profile: 'didactic4', hands: 2 }).newState({ seed: 1 }), actionRng(1));
    for (const hands of [0, 3, 1.5, Number.NaN]) expect(() => drain(stateAtHandEndSteps(state, hands))).toThrow(/hands must be 1\.\.2/);
  });
});

describe('pages of a session', () => {
  it('stateToRecord and replayResult from .. to are slices of the whole', () => {
    const state = playRandomly(createGame({ profile: 'tavern5', hands: 9 }).newState({ seed: 'pages' }), actionRng('pages'));
    const whole = stateToRecord(state);
    const result = replayResult(state);
    for (const [from, to] of [[0, 0], [0, 3], [2, 5], [7, 100], [20, 30], [0, Infinity]] as const) {
      const page = stateToRecord(state, from, to);
      expect({ ...page, hands: undefined }).toEqual({ ...whole, hands: undefined });
      expect(page.hands).toEqual(whole.hands!.slice(from, to));
      expect(replayResult(state, from, to)).toEqual({ hands: result.hands.slice(from, to), final: result.final });
    }
  });
});
