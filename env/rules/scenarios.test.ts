// Scripted scenarios with card tokens, each citing the rule or decision it checks.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { buildDeck, type DeckPlan } from '../../test/helpers/decks.js';
import {
  ACTION_BETTLER,
  ACTION_DONE,
  ACTION_IN,
  ACTION_OUT,
  AmountOverflowError,
  IllegalActionError,
  ReplayIllegalActionError,
  ReplayOverflowError,
  createGame,
  discardAction,
  parseAction,
  parseCard,
  parseRecord,
  playRandomly,
  replayRecord,
  replayResult,
  replayToJson,
  replayToText,
  settleDidactic4,
  settleTavern5,
  stateToRecord,
  type KratzenState,
} from './index.js';

type Script = [seat: number, action: string][];
const actions = (script: Script) => script.map(([seat, action]) => ({ seat, action }));

function stateFor(rules: Record<string, unknown>, plan: Omit<DeckPlan, 'profile' | 'players'>, start: Record<string, unknown> = {}) {
  const game = createGame(rules);
  const deck = buildDeck({ ...plan, profile: game.rules.profile, players: game.numPlayers }).map(parseCard);
  // `start` amounts are given in chips here, as in records; the state keeps units.
  const units = {
    ...start,
    pot: game.toUnits((start.pot as number | undefined) ?? 0),
    balances: (start.balances as number[] | undefined)?.map((b) => game.toUnits(b)),
  };
  return game.newState({ seed: 1, decks: [deck], start: { dealer: plan.dealer, ...units } });
}

function run(state: KratzenState, script: Script) {
  for (const [seat, action] of script) state.applyAs(seat, parseAction(action));
  return state;
}

/** The settlement example of seed 001 section 08, dealt so that P = 12 and tricks are 1, 2, 1, 0. */
const SETTLEMENT_PLAN = {
  dealer: 0,
  hands: { 0: ['Ac', '7s', '8h', '7h'], 1: ['Qc', 'Ks', 'Ad', 'Kc'], 2: ['7d', 'As', 'Td', 'Ah'], 3: ['8d', '8s', '9d', 'Js'] },
  faceUp: ['9c'],
};
const SETTLEMENT_SCRIPT: Script = [
  [0, 'discard 9c'], [1, 'in'], [2, 'in'], [3, 'in'],
  [0, 'play Ac'], [1, 'play Qc'], [2, 'play 7d'], [3, 'play 8d'],
  [0, 'play 7s'], [1, 'play Ks'], [2, 'play As'], [3, 'play 8s'],
  [2, 'play Td'], [3, 'play 9d'], [0, 'play 8h'], [1, 'play Ad'],
  [1, 'play Kc'], [2, 'play Ah'], [3, 'play Js'], [0, 'play 7h'],
];

describe('didactic4 settlement (docs/rules.md §3, seed example)', () => {
  it('P = 12: pays P/4 per trick, then 2P for the declarer and P for a player without a trick; next pot 36', () => {
    const deck = buildDeck({ profile: 'didactic4', players: 4, ...SETTLEMENT_PLAN });
    const { result } = replayRecord({
      rules: { profile: 'didactic4', players: 4 },
      start: { dealer: 0, pot: 11 },
      hands: [{ deck, actions: actions(SETTLEMENT_SCRIPT) }],
    });
    expect(result.hands).toEqual([
      {
        dealer: 0, trump: 'c', indicator: '9c', kind: 'normal', walkover: false, potBeforePlay: 12,
        in: [true, true, true, true], tricks: [1, 2, 1, 0], payouts: [3, 6, 3, 0], penalties: [24, 0, 0, 12],
        potAfter: 36, balances: [-22, 6, 3, -12],
      },
    ]);
    expect(result.final).toEqual({ balances: [-22, 6, 3, -12], pot: 36, complete: false });
  });

  it('the ledger computes penalties from the same P, never from the changed pot', () => {
    const s = settleDidactic4(
      { numPlayers: 4, dealer: 0, potBeforePlay: 48, playing: [1, 1, 1, 1], tricks: [1, 2, 1, 0], quotas: [2, 1, 1, 1] },
      false,
    );
    expect(s.payouts).toEqual([12, 24, 12, 0]);
    expect(s.penalties).toEqual([96, 0, 0, 48]);
    expect(s.potAfter).toBe(144);
  });

  it('the worked trick example is enforced in live play: D must play the Ace over the Weli', () => {
    const state = stateFor({}, {
      dealer: 0,
      hands: { 0: ['Kc', '7h', '8h', '9h'], 1: ['W', '7s', '8s', '9s'], 2: ['8c', 'Th', 'Ts', 'Jh'], 3: ['Ac', 'Qc', 'Js', 'Qs'] },
      faceUp: ['9c'],
    }, { pot: 4 });
    run(state, [[0, 'discard 9c'], [1, 'in'], [2, 'in'], [3, 'in'], [0, 'play Kc'], [1, 'play W'], [2, 'play 8c']]);
    expect(state.legalActions()).toEqual([parseAction('play Ac')]);
    expect(() => state.apply(parseAction('play Qc'))).toThrow(IllegalActionError);
    state.apply(parseAction('play Ac'));
    expect(state.tricksWon[3]).toBe(1);
    expect(state.currentSeat).toBe(3);
  });
});

describe('didactic4 hands', () => {
  it('funding Muss on an empty pot: everybody pays 1, the dealer 2; no payout; dealer leads', () => {
    const state = stateFor({}, SETTLEMENT_PLAN);
    expect(state.kind).toBe('funding-muss');
    expect(Array.from(state.balances)).toEqual([-8, -4, -4, -4]);
    expect(state.pot).toBe(20);
    run(state, [[0, 'discard 9c']]);
    expect(state.phase).toBe('play'); // Muss hands have no declarations
    expect(state.currentSeat).toBe(0);
    expect(state.isLegal(ACTION_IN)).toBe(false);
    run(state, SETTLEMENT_SCRIPT.slice(4));
    const [hand] = replayResult(state).hands;
    expect(hand).toMatchObject({ kind: 'funding-muss', potBeforePlay: 5, payouts: [0, 0, 0, 0], penalties: [10, 0, 0, 5], potAfter: 20 });
  });

  it('[D-1] a Weli indicator turns the next card too, which sets trump and counts for the 7 rule', () => {
    const state = stateFor({}, {
      dealer: 1,
      hands: { 0: ['Ac', 'Kc', 'Qc', 'Jc'], 1: ['As', 'Ks', 'Qs', 'Js'], 2: ['Ah', 'Kh', 'Qh', 'Jh'], 3: ['Ad', 'Kd', 'Qd', 'Jd'] },
      faceUp: ['W', '7h'],
    }, { pot: 6 });
    expect(state.trump).toBe(2);
    expect(state.indicator).toBe(parseCard('7h'));
    expect(state.kind).toBe('forced-muss');
    expect(state.handOf(1).length).toBe(6); // the dealer takes both face-up cards
    expect(Array.from(state.quotas).slice(0, 4)).toEqual([1, 1, 1, 1]);
    run(state, [[1, 'discard W'], [1, 'discard Js']]);
    expect(state.phase).toBe('play');
    expect(state.handOf(1)).toEqual(['As', 'Ks', 'Qs', '7h'].map(parseCard));
    // The contributions are those of a non-empty pot: only the dealer's chip.
    expect(state.pot).toBe(28); // units: 6 chips + 1
  });

  it('[D-2] a 7 indicator in a funding Muss lowers the declarer quota to 1 as well', () => {
    const state = stateFor({}, { ...SETTLEMENT_PLAN, faceUp: ['7c'] });
    expect(state.kind).toBe('funding-muss');
    expect(Array.from(state.quotas).slice(0, 4)).toEqual([1, 1, 1, 1]);
    run(state, [[0, 'discard 7c'], ...SETTLEMENT_SCRIPT.slice(4)]);
    // The declarer made 1 trick: no penalty; only the player without a trick pays P.
    expect(replayResult(state).hands[0]).toMatchObject({ tricks: [1, 2, 1, 0], penalties: [0, 0, 0, 5] });
  });

  it('a walkover: everybody else out, the declarer takes the pot unplayed; the next hand is a funding Muss', () => {
    const state = stateFor({}, SETTLEMENT_PLAN, { pot: 11 });
    run(state, [[0, 'discard 9c'], [1, 'out'], [2, 'out'], [3, 'out']]);
    expect(replayResult(state).hands[0]).toEqual({
      dealer: 0, trump: 'c', indicator: '9c', kind: 'normal', walkover: true, potBeforePlay: 12,
      in: [true, false, false, false], tricks: [0, 0, 0, 0], payouts: [12, 0, 0, 0], penalties: [0, 0, 0, 0],
      potAfter: 0, balances: [11, 0, 0, 0],
    });
    expect(state.dealer).toBe(1);
    expect(state.kind).toBe('funding-muss');
  });

  it('out costs nothing; only players in take tricks; the dealer always leads the first trick', () => {
    const state = stateFor({}, SETTLEMENT_PLAN, { pot: 12 });
    run(state, [[0, 'discard 9c'], [1, 'in'], [2, 'out'], [3, 'in']]);
    expect(state.currentSeat).toBe(0);
    run(state, [[0, 'play Ac'], [1, 'play Qc'], [3, 'play 8d']]);
    expect(state.tricksWon[0]).toBe(1);
    playRandomly(state, seedrandom('rest'));
    const hand = replayResult(state).hands[0]!;
    expect(hand.in).toEqual([true, true, false, true]);
    expect(hand.penalties[2]).toBe(0);
    expect(hand.payouts[2]).toBe(0);
  });

  it('an illegal action throws a typed error with a reason and changes nothing', () => {
    const state = stateFor({}, SETTLEMENT_PLAN, { pot: 12 });
    const before = JSON.stringify(stateToRecord(state));
    expect(() => state.apply(parseAction('in'))).toThrow(/discard/);
    expect(() => state.applyAs(2, discardAction(parseCard('9c')))).toThrow(/turn/);
    try {
      state.apply(discardAction(parseCard('As')));
    } catch (e) {
      expect(e).toBeInstanceOf(IllegalActionError);
      expect((e as IllegalActionError).reason).toMatch(/does not hold/);
    }
    expect(JSON.stringify(stateToRecord(state))).toBe(before);
  });

  it('an amount past 2^53 - 1 units stops the session with amount overflow, never a rounded amount', () => {
    const deck = buildDeck({ profile: 'didactic4', players: 4, ...SETTLEMENT_PLAN });
    const record = { rules: {}, start: { dealer: 0, pot: 2 ** 50 - 1 }, hands: [{ deck, actions: actions(SETTLEMENT_SCRIPT) }] };
    expect(() => replayRecord(record)).toThrow(ReplayOverflowError);
    const state = stateFor({}, SETTLEMENT_PLAN, { pot: 2 ** 50 - 1 });
    expect(() => run(state, SETTLEMENT_SCRIPT)).toThrow(AmountOverflowError);
    expect(state.overflowed).toBe(true);
    expect(state.isTerminal).toBe(true);
  });

  it('settlements near 2^53 units are exact in both profiles: the pot takes every payout before any penalty (docs/rules.md §3, Ledger)', () => {
    // P = 4 x 900000000000001 units; in seat order the dealer's 2P would lift the pot past 2^53
    // (2.75 P, odd, so rounded) before the other seats' payouts brought it back to 2P.
    const P = 4 * 900000000000001;
    const s = settleDidactic4({ numPlayers: 4, dealer: 0, potBeforePlay: P, playing: [1, 1, 1, 1], tricks: [1, 1, 1, 1], quotas: [2, 1, 1, 1] }, false);
    expect(s.payouts).toEqual([P / 4, P / 4, P / 4, P / 4]);
    expect(s.penalties).toEqual([2 * P, 0, 0, 0]);
    expect(s.potAfter).toBe(2 * P);
    // tavern5, a Muss deal with failPenalty "pot": everybody collects [D-9]; 2P - share (odd) is past 2^53.
    const share = 1080863910568919;
    const t = settleTavern5({
      numPlayers: 4, dealer: 3, potBeforePlay: 5 * share, playing: [1, 1, 1, 1], tricks: [0, 1, 2, 2], quotas: [1, 1, 1, 2],
      isMuss: true, anteUnits: 5, failPenalty: 'pot', bettler: [0, 0, 0, 0], bettlerBonusUnits: 0,
    });
    expect(t.payouts).toEqual([0, share, 2 * share, 2 * share]);
    expect(t.penalties).toEqual([5 * share, 0, 0, 0]);
    expect(t.potAfter).toBe(5 * share);
  });

  it('a replayed hand with amounts near 2^53 units settles exactly and conserves chips (docs/rules.md §3, Ledger)', () => {
    const deck = ['9c', 'W', 'Jd', 'Td', '9s', 'Qd', '7s', '9d', 'Jh', 'Js', 'Jc', '7c', '9h', 'Ah', '8d', 'Qc', 'Th', 'Qs', '8h', 'Ac', '7d', 'As', 'Qh', 'Kh', '7h', '8s', 'Ad', 'Kd', 'Tc', 'Kc', 'Ts', 'Ks', '8c'];
    const script: Script = [
      [0, 'discard Qc'], [1, 'in'], [2, 'in'], [3, 'in'],
      [0, 'play Jh'], [1, 'play W'], [2, 'play 9h'], [3, 'play Ah'],
      [3, 'play 9s'], [0, 'play 7s'], [1, 'play Js'], [2, 'play Td'],
      [1, 'play 9c'], [2, 'play 7c'], [3, 'play Qd'], [0, 'play Th'],
      [0, 'play 9d'], [1, 'play Jc'], [2, 'play Jd'], [3, 'play 8d'],
    ];
    const record = { rules: { hands: 1 }, start: { dealer: 0, pot: 900000000000000 }, hands: [{ deck, actions: actions(script) }] };
    const hand = replayRecord(record).result.hands[0]!;
    // P = the pot and the dealer's chip; one trick each, so the dealer missed the quota of 2: 2P.
    const P = 900000000000001;
    expect(hand.tricks).toEqual([1, 1, 1, 1]);
    expect(hand.potBeforePlay).toBe(P);
    expect(hand.payouts).toEqual([P / 4, P / 4, P / 4, P / 4]);
    expect(hand.penalties).toEqual([2 * P, 0, 0, 0]);
    expect(hand.potAfter).toBe(2 * P);
    expect(hand.balances).toEqual([-1 + P / 4 - 2 * P, P / 4, P / 4, P / 4]);
    // Printed exactly (docs/rules.md §6): JSON.stringify alone writes -1575000000000002.8.
    const { exitCode, text } = replayToText(record, 0);
    expect(exitCode).toBe(0);
    expect(text).toContain('"balances":[-1575000000000002.75,225000000000000.25,225000000000000.25,225000000000000.25]');
    expect(JSON.parse(text)).toEqual(replayToJson(record).output);
  });

  it('replay text prints fifths exactly past 2^50 chips, where a double holds only quarters (docs/rules.md §6)', () => {
    // k.4 and k.6 chips are one double there: each balance is printed from its units. Whole
    // start balances (read exactly) and one hand's shares of 4/5 chip make such amounts.
    const k = 2 ** 50 + 7;
    const state = createGame({ ...T5, hands: 1 }).newState({ seed: 4, start: { dealer: 0, balances: [k, k, k, k].map((c) => c * 5), muss: false } });
    playRandomly(state, seedrandom('fifths'));
    const units = state.results[0]!.balances;
    expect(units.some((u) => u % 5 !== 0)).toBe(true);
    const { exitCode, text } = replayToText(stateToRecord(state), 0);
    expect(exitCode).toBe(0);
    const printed = /"final":\{"balances":\[([^\]]*)\]/.exec(text)![1]!.split(',');
    // Read back as exact fifths: whole chips x 5 + tenths / 2.
    const fifths = printed.map((t) => {
      const [whole, tenths = '0'] = t.replace('-', '').split('.');
      return (t.startsWith('-') ? -1n : 1n) * (BigInt(whole!) * 5n + BigInt(tenths) / 2n);
    });
    expect(fifths).toEqual(units.map((u) => BigInt(u)));
  });

  it('newState takes start amounts only as whole units, a didactic4 pot only as whole chips (docs/rules.md §3, Ledger)', () => {
    const game = createGame({});
    const field = (start: Record<string, unknown>) => {
      try {
        game.newState({ seed: 3, start: { dealer: 0, ...start } });
        return null;
      } catch (e) {
        return (e as { field?: string }).field;
      }
    };
    expect(field({ pot: 1 })).toBe('start.pot');
    expect(field({ pot: 0.5 })).toBe('start.pot');
    expect(field({ pot: -4 })).toBe('start.pot');
    expect(field({ pot: 2 ** 53 })).toBe('start.pot');
    expect(field({ balances: [0, 0.5, 0, 0] })).toBe('start.balances[1]');
    expect(field({ pot: 8, balances: [1, -3, 0, 2] })).toBeNull();
    expect(createGame(T5).newState({ seed: 3, start: { dealer: 0, pot: 1 } }).pot).toBeGreaterThan(1);
  });

  it('a session is one rotation of dealers by default, then complete with the leaders as winners', () => {
    const state = playRandomly(createGame({ players: 5 }).newState({ seed: 9 }), seedrandom('x'));
    expect(state.results.map((r) => r.dealer)).toEqual([0, 1, 2, 3, 4].map((k) => (state.startInfo.dealer + k) % 5));
    const final = replayResult(state).final;
    const best = Math.max(...final.balances);
    expect(final.winners).toEqual(final.balances.flatMap((b, s) => (b === best ? [s] : [])));
  });
});

const T5 = { profile: 'tavern5', players: 4 };
/** A record's start for a Normal first deal: a session opens with a Muss otherwise [D-10]. */
const NORMAL = { muss: false };
const T5_PLAN = {
  dealer: 0,
  hands: {
    0: ['Ac', 'Kc', 'Qc', 'As', 'Ks'],
    1: ['Jc', 'Tc', 'Ah', 'Kh', 'Qh'],
    2: ['9c', '8c', 'Ad', 'Kd', 'Qd'],
    3: ['Qs', 'Js', 'Ts', '9s', '8s'],
  },
  faceUp: ['9h'],
  talon: ['W', '7c', '7s', '7h', '7d'],
};

describe('tavern5 deals', () => {
  it('[D-3] every player dealt in pays the ante, the dealer too and no more', () => {
    const state = stateFor({ ...T5, ante: 2 }, T5_PLAN, NORMAL);
    expect(Array.from(state.balances)).toEqual([-10, -10, -10, -10]);
    expect(state.pot).toBe(40);
    expect(state.kind).toBe('normal');
    expect(state.phase).toBe('declare');
    expect(state.currentSeat).toBe(1);
    expect(Array.from(state.quotas).slice(0, 4)).toEqual([2, 1, 1, 1]);
  });

  it('deals 3 then 2 to each from the dealer\'s left; the turned card stays face up, out of play', () => {
    const state = stateFor(T5, T5_PLAN, NORMAL);
    expect(state.handOf(0)).toEqual(T5_PLAN.hands[0].map(parseCard));
    expect(state.handOf(3)).toEqual(T5_PLAN.hands[3].map(parseCard));
    expect(state.trump).toBe(2);
    expect(state.indicator).toBe(parseCard('9h'));
  });

  it('[D-4] everybody else out: the dealer takes the pot without play, reported as in didactic4', () => {
    const state = stateFor(T5, T5_PLAN, NORMAL);
    run(state, [[1, 'out'], [2, 'out'], [3, 'out']]);
    expect(replayResult(state).hands[0]).toMatchObject({
      walkover: true, kind: 'normal', potBeforePlay: 4, payouts: [4, 0, 0, 0], tricks: [0, 0, 0, 0], potAfter: 0,
      in: [true, false, false, false], balances: [3, -1, -1, -1],
    });
    expect(state.kind).toBe('normal'); // no failure: the next deal is Normal unless a 7 turns
  });

  it('forehand leads; shares are floor(P/5) units to those who met the quota, remainder stays [D-5]', () => {
    const state = stateFor(T5, T5_PLAN, { pot: 0.6, ...NORMAL });
    run(state, [[1, 'in'], [2, 'out'], [3, 'in']]);
    expect(state.currentSeat).toBe(1); // forehand: the first player in, left of the dealer
    playRandomly(state, seedrandom('d5'));
    const hand = replayResult(state).hands[0]!;
    expect(hand.potBeforePlay).toBe(4.6); // 23 units: one share is 4 units (0.8 chip)
    let paid = 0;
    for (const s of [0, 1, 3]) {
      const quota = s === 0 ? 2 : 1;
      if (hand.tricks[s]! >= quota) {
        expect(hand.payouts[s]).toBeCloseTo(hand.tricks[s]! * 0.8, 9);
        expect(hand.penalties[s]).toBe(0);
      } else {
        expect(hand.payouts[s]).toBe(0);
        expect(hand.penalties[s]).toBe(2); // 2 x ante
      }
      paid += hand.payouts[s]!;
    }
    expect(hand.potAfter).toBeCloseTo(4.6 - paid + hand.penalties.reduce((a, b) => a + b, 0), 9);
  });

  it('[D-5] the ledger keeps the remainder of floor(P/5) in the pot', () => {
    const s = settleTavern5({
      numPlayers: 3, dealer: 0, potBeforePlay: 23, playing: [1, 1, 1], tricks: [2, 2, 1], quotas: [2, 1, 1],
      isMuss: false, anteUnits: 5, failPenalty: 'double-ante', bettler: [0, 0, 0], bettlerBonusUnits: 0,
    });
    expect(s.payouts).toEqual([8, 8, 4]);
    expect(s.potAfter).toBe(3);
  });

  it('a failure makes the next deal a Muss; a 7 turned makes a Muss; start.muss starts in one', () => {
    expect(stateFor(T5, { ...T5_PLAN, faceUp: ['7h'], talon: ['W', '7c', '7s', '9h', '7d'] }).kind).toBe('muss');
    const muss = stateFor(T5, T5_PLAN, { muss: true });
    expect(muss.kind).toBe('muss');
    expect(muss.phase).toBe('play');
    expect(muss.currentSeat).toBe(1);
    const s = settleTavern5({
      numPlayers: 3, dealer: 0, potBeforePlay: 15, playing: [1, 1, 1], tricks: [1, 4, 0], quotas: [2, 1, 1],
      isMuss: false, anteUnits: 5, failPenalty: 'double-ante', bettler: [0, 0, 0], bettlerBonusUnits: 0,
    });
    expect(s.anyMissedQuota).toBe(true);
    expect(s.penalties).toEqual([10, 0, 10]);
  });

  it('[D-10] a session opens with a Muss deal: no declarations, everybody plays, forehand leads', () => {
    const state = stateFor(T5, T5_PLAN);
    expect(state.kind).toBe('muss');
    expect(state.phase).toBe('play');
    expect(state.currentSeat).toBe(1);
    expect(stateToRecord(state).start).toMatchObject({ muss: true });
    const seeded = createGame(T5).newState({ seed: 'opening' });
    expect(seeded.kind === 'muss' || seeded.phase === 'trump').toBe(true);
    seeded.restart('again');
    expect(seeded.kind).toBe('muss');
  });

  it('[D-10] illegal twin: a declaration in the opening deal', () => {
    const state = stateFor(T5, T5_PLAN);
    expect(() => state.applyAs(1, ACTION_IN)).toThrow(IllegalActionError);
    expect(() => state.applyAs(1, ACTION_OUT)).toThrow(IllegalActionError);
    expect(state.currentSeat).toBe(1);
    expect(state.phase).toBe('play');
  });

  it('[D-9] in a Muss deal a player who missed the quota still collects for the tricks taken, and pays', () => {
    const input = {
      numPlayers: 3, dealer: 0, potBeforePlay: 15, playing: [1, 1, 1], tricks: [1, 4, 0], quotas: [2, 1, 1],
      anteUnits: 5, failPenalty: 'double-ante' as const, bettler: [0, 0, 0], bettlerBonusUnits: 0,
    };
    const muss = settleTavern5({ ...input, isMuss: true });
    expect(muss.payouts).toEqual([3, 12, 0]);
    expect(muss.penalties).toEqual([10, 0, 10]);
    expect(muss.potAfter).toBe(15 - 15 + 20);
    const normal = settleTavern5({ ...input, isMuss: false });
    expect(normal.payouts).toEqual([0, 12, 0]);
  });

  it('[D-9] a 7-forced Muss in live play: the dealer who missed collects its shares', () => {
    // 7h turned; the dealer (seat 0) takes 1 trick, the Ah lead of seat 1 and so on below.
    const plan = {
      dealer: 0,
      hands: {
        1: ['Ah', 'Kh', 'Ac', 'Kc', 'Qc'],
        2: ['Jh', 'Th', 'As', 'Ks', 'Qs'],
        3: ['9h', '8h', 'Ad', 'Kd', 'Qd'],
        0: ['Qh', 'Js', 'Jd', 'Jc', 'Tc'],
      },
      faceUp: ['7h'],
    };
    const state = stateFor(T5, plan, NORMAL);
    expect(state.kind).toBe('muss');
    run(state, [
      [1, 'play Ah'], [2, 'play Th'], [3, 'play 8h'], [0, 'play Qh'],
      [1, 'play Kh'], [2, 'play Jh'], [3, 'play 9h'], [0, 'play Js'],
      [1, 'play Ac'], [2, 'play As'], [3, 'play Ad'], [0, 'play Jc'],
      [1, 'play Kc'], [2, 'play Ks'], [3, 'play Kd'], [0, 'play Tc'],
      [1, 'play Qc'], [2, 'play Qs'], [3, 'play Qd'], [0, 'play Jd'],
    ]);
    const hand = replayResult(state).hands[0]!;
    // P = 4 = 20 units, share 4 units = 0.8: seat 1 takes all five tricks.
    expect(hand.tricks).toEqual([0, 5, 0, 0]);
    expect(hand.payouts).toEqual([0, 4, 0, 0]);
    expect(hand.penalties).toEqual([2, 0, 2, 2]);
  });

  it('a Muss deal still pays shares (only didactic4 Muss hands pay nothing)', () => {
    const state = stateFor(T5, T5_PLAN, { muss: true });
    playRandomly(state, seedrandom('m'));
    const hand = replayResult(state).hands[0]!;
    expect(hand.kind).toBe('muss');
    expect(hand.payouts.some((p) => p > 0)).toBe(true);
  });

  it('failPenalty pot: a player who missed the quota pays P', () => {
    const s = settleTavern5({
      numPlayers: 3, dealer: 0, potBeforePlay: 15, playing: [1, 1, 1], tricks: [1, 4, 0], quotas: [2, 1, 1],
      isMuss: false, anteUnits: 5, failPenalty: 'pot', bettler: [0, 0, 0], bettlerBonusUnits: 0,
    });
    expect(s.penalties).toEqual([15, 0, 15]);
    expect(s.payouts).toEqual([0, 12, 0]);
  });

  it('dealerMinTricks 3 raises the dealer quota', () => {
    expect(stateFor({ ...T5, dealerMinTricks: 3 }, T5_PLAN, NORMAL).quotas[0]).toBe(3);
  });

  it('a turned Weli: the dealer names trump first, the indicator is null', () => {
    const state = stateFor(T5, { ...T5_PLAN, faceUp: ['W'], talon: ['9h'] }, NORMAL);
    expect(state.phase).toBe('trump');
    expect(state.currentSeat).toBe(0);
    expect(state.legalActions().map((a) => a - parseAction('trump c'))).toEqual([0, 1, 2, 3]);
    run(state, [[0, 'trump d'], [1, 'out'], [2, 'out'], [3, 'out']]);
    expect(replayResult(state).hands[0]).toMatchObject({ trump: 'd', indicator: null });
  });

  it('weliRank highest: the Weli beats the trump Ace in play', () => {
    const plan = { ...T5_PLAN, hands: { ...T5_PLAN.hands, 1: ['W', 'Tc', 'Ah', 'Kh', 'Qh'] }, faceUp: ['9d'], talon: ['Jc'] };
    const script: Script = [[1, 'in'], [2, 'in'], [3, 'in'], [1, 'play W'], [2, 'play Ad'], [3, 'play Qs'], [0, 'play As']];
    expect(run(stateFor({ ...T5, weliRank: 'highest' }, plan, NORMAL), script).tricksWon[1]).toBe(1);
    expect(run(stateFor(T5, plan, NORMAL), script).tricksWon[2]).toBe(1);
  });

  const TRUMP_LEAD_PLAN = {
    dealer: 0,
    hands: { 0: ['Ac', 'Tc', '9c', 'As', 'Ks'], 1: ['Qc', 'Jc', 'Ah', 'Kh', 'Qh'], 2: ['Kc', 'Jh', 'Ad', 'Kd', 'Qd'], 3: ['Qs', 'Js', 'Ts', '9s', '8s'] },
    faceUp: ['8c'],
  };
  const TRUMP_LEAD_SCRIPT: Script = [[1, 'in'], [2, 'in'], [3, 'in'], [1, 'play Jc'], [2, 'play Kc'], [3, 'play 8s']];

  it('[D-7] following a trump lead, a player who can beat the highest trump must', () => {
    const state = run(stateFor(T5, TRUMP_LEAD_PLAN, NORMAL), TRUMP_LEAD_SCRIPT);
    // Jc led, Kc over it: of the dealer's Ac, Tc, 9c only the Ace beats the King.
    expect(state.legalActions()).toEqual([parseAction('play Ac')]);
    state.apply(parseAction('play Ac'));
    expect(state.tricksWon[0]).toBe(1);
  });

  it('[D-7] illegal twin: a lower trump on a trump lead by a player who could beat the highest trump', () => {
    const state = run(stateFor(T5, TRUMP_LEAD_PLAN, NORMAL), TRUMP_LEAD_SCRIPT);
    const before = JSON.stringify(stateToRecord(state));
    expect(() => state.applyAs(0, parseAction('play Tc'))).toThrow(IllegalActionError);
    expect(() => state.applyAs(0, parseAction('play 9c'))).toThrow(IllegalActionError);
    expect(JSON.stringify(stateToRecord(state))).toBe(before);
  });

  it('[D-7] a player who cannot beat the highest trump on a trump lead may play any trump', () => {
    // Seat 1 leads Qc, seat 2 overtrumps with Kc; seat 3 has no trump; the dealer holds Tc and
    // 9c only (Ac moved to seat 2), neither beats the King: both are legal.
    const plan = {
      ...TRUMP_LEAD_PLAN,
      hands: { ...TRUMP_LEAD_PLAN.hands, 0: ['7d', 'Tc', '9c', 'As', 'Ks'], 2: ['Kc', 'Ac', 'Ad', 'Kd', 'Qd'] },
    };
    const state = run(stateFor(T5, plan, NORMAL), [[1, 'in'], [2, 'in'], [3, 'in'], [1, 'play Qc'], [2, 'play Kc'], [3, 'play 8s']]);
    expect(state.legalActions()).toEqual(['Tc', '9c'].map((c) => parseAction(`play ${c}`)).sort((a, b) => a - b));
  });
});

describe('tavern5 variants', () => {
  it('exchange: in players from the dealer\'s left, dealer last, replace from the talon at done and pay the fee', () => {
    const state = stateFor({ ...T5, exchange: { maxCards: 2, feePerCard: 0.4 } }, T5_PLAN, NORMAL);
    run(state, [[1, 'in'], [2, 'out'], [3, 'in']]);
    expect(state.phase).toBe('exchange');
    expect(state.currentSeat).toBe(1);
    run(state, [[1, 'discard Qh'], [1, 'discard Kh']]);
    expect(state.isLegal(discardAction(parseCard('Ah')))).toBe(false); // maxCards reached
    run(state, [[1, 'done'], [3, 'done'], [0, 'discard Ks']]);
    expect(state.handOf(1)).toEqual(['Jc', 'Tc', 'Ah', 'W', '7c'].map(parseCard));
    run(state, [[0, 'done']]);
    expect(state.handOf(0)).toEqual(['Ac', 'Kc', 'Qc', 'As', '7s'].map(parseCard));
    expect(state.phase).toBe('play');
    playRandomly(state, seedrandom('x'));
    const hand = replayResult(state).hands[0]!;
    expect(hand.fees).toEqual([0.4, 0.8, 0, 0]);
    expect(hand.potBeforePlay).toBe(5.2);
    expect(Object.keys(hand)).toEqual([
      'dealer', 'trump', 'indicator', 'kind', 'walkover', 'potBeforePlay', 'in', 'tricks', 'payouts', 'penalties', 'fees', 'potAfter', 'balances',
    ]);
  });

  it('exchange: nobody may discard more cards than the talon still holds', () => {
    const rules = { profile: 'tavern5', players: 6, exchange: { maxCards: 5, feePerCard: 0 } };
    let seed = 0;
    const start = { dealer: 0, ...NORMAL };
    let state = createGame(rules).newState({ seed, start });
    while (state.kind !== 'normal' || state.phase !== 'declare') state = createGame(rules).newState({ seed: ++seed, start });
    for (let s = 1; s < 6; s++) state.apply(ACTION_IN);
    let discards = 0;
    while (state.numLegalActions() > 1) {
      state.apply(state.legalActions()[0]!);
      discards++;
    }
    expect(discards).toBe(2); // 6 x 5 dealt + 1 turned leaves a talon of 2
    expect(state.legalActions()).toEqual([ACTION_DONE]);
  });

  it('[D-8] no exchange in a Muss deal', () => {
    const state = stateFor({ ...T5, exchange: {} }, T5_PLAN, { muss: true });
    expect(state.phase).toBe('play');
  });

  it('[D-6] bettler: only in Normal deals, never the dealer; a won Bettler is paid the bonus by every other player in', () => {
    const rules = { ...T5, bettler: { bonus: 2 } };
    expect(stateFor(rules, T5_PLAN, { muss: true }).isLegal(ACTION_BETTLER)).toBe(false);
    const state = stateFor(rules, T5_PLAN, NORMAL);
    expect(state.isLegal(ACTION_BETTLER)).toBe(true);
    expect(stateFor(T5, T5_PLAN, NORMAL).isLegal(ACTION_BETTLER)).toBe(false);
    // Seat 3 holds only spades below the dealer's As/Ks and plays them under the others.
    run(state, [[1, 'in'], [2, 'out'], [3, 'bettler']]);
    expect(state.phase).toBe('play');
    const s = settleTavern5({
      numPlayers: 4, dealer: 0, potBeforePlay: 20, playing: [1, 1, 0, 1], tricks: [3, 2, 0, 0], quotas: [2, 1, 1, 0],
      isMuss: false, anteUnits: 5, failPenalty: 'double-ante', bettler: [0, 0, 0, 1], bettlerBonusUnits: 10,
    });
    expect(s.payouts).toEqual([12, 8, 0, 20]);
    expect(s.penalties).toEqual([10, 10, 0, 0]);
    expect(s.potAfter).toBe(0);
    expect(s.anyMissedQuota).toBe(false);
  });

  it('[D-6] a failed Bettler pays P into the pot, takes no shares, and does not make the next deal a Muss', () => {
    const s = settleTavern5({
      numPlayers: 3, dealer: 0, potBeforePlay: 15, playing: [1, 1, 1], tricks: [2, 2, 1], quotas: [2, 1, 0],
      isMuss: false, anteUnits: 5, failPenalty: 'double-ante', bettler: [0, 0, 1], bettlerBonusUnits: 10,
    });
    expect(s.payouts).toEqual([6, 6, 0]);
    expect(s.penalties).toEqual([0, 0, 15]);
    expect(s.potAfter).toBe(15 - 12 + 15);
    expect(s.anyMissedQuota).toBe(false);
  });
});

describe('tavern5 sessions', () => {
  it('a tie for the lead brings one tie-break deal: the tied players and the next dealer, who alone ante', () => {
    const rules = { ...T5, hands: 1 };
    const state = stateFor(rules, { ...T5_PLAN, dealer: 2 }, { balances: [5, 5, 0, 0], ...NORMAL });
    run(state, [[3, 'out'], [0, 'out'], [1, 'out']]);
    // Walkover: [4, 4, 3, -1] - seats 0 and 1 tie; seat 3 deals next and is dealt in.
    expect(state.complete).toBe(false);
    expect(state.kind).toBe('tie-break');
    expect(state.dealer).toBe(3);
    expect(Array.from(state.dealtIn).slice(0, 4)).toEqual([1, 1, 0, 1]);
    expect(Array.from(state.balances)).toEqual([15, 15, 15, -10]);
    expect(state.handOf(2)).toEqual([]);
    expect(state.phase).not.toBe('declare');
    playRandomly(state, seedrandom('tb'));
    const result = replayResult(state);
    expect(result.hands[1]).toMatchObject({ kind: 'tie-break', dealer: 3, in: [true, true, false, true] });
    expect(result.final.complete).toBe(true);
    const best = Math.max(...result.final.balances);
    expect(result.final.winners).toEqual(result.final.balances.flatMap((b, s) => (b === best ? [s] : [])));
  });

  it('[D-11] after a tie-break deal only the tied players can win, even if the dealer dealt in finishes higher', () => {
    // Deal 1 is a walkover for dealer 3 that leaves seats 1 and 2 tied on 2; seat 0 deals the
    // tie-break, takes all five tricks and finishes on 1, above the tied players' -1.
    const rules = { ...T5, hands: 1 };
    const state = stateFor(rules, { ...T5_PLAN, dealer: 3 }, { balances: [0, 3, 3, -5], ...NORMAL });
    run(state, [[0, 'out'], [1, 'out'], [2, 'out']]);
    expect(state.kind).toBe('tie-break');
    expect(state.dealer).toBe(0);
    const deck = buildDeck({
      profile: 'tavern5', players: 4, dealer: 0, dealtIn: [0, 1, 2], faceUp: ['9c'],
      hands: { 1: ['As', 'Ks', 'Qs', 'Js', 'Ts'], 2: ['Ah', 'Kh', 'Qh', 'Jh', 'Th'], 0: ['Ac', 'W', 'Kc', 'Qc', 'Jc'] },
    });
    const replayed = replayRecord({
      ...stateToRecord(state),
      hands: [stateToRecord(state).hands![0]!, {
        deck,
        actions: actions([
          [1, 'play As'], [2, 'play Ah'], [0, 'play Jc'], [0, 'play Qc'], [1, 'play Ks'], [2, 'play Kh'],
          [0, 'play Kc'], [1, 'play Qs'], [2, 'play Qh'], [0, 'play W'], [1, 'play Js'], [2, 'play Jh'],
          [0, 'play Ac'], [1, 'play Ts'], [2, 'play Th'],
        ]),
      }],
    }).result;
    expect(replayed.final).toEqual({ balances: [1, -1, -1, -2], pot: 4, complete: true, winners: [1, 2] });
  });

  it('startingChips: a stack at 0 or less ends the session after that deal', () => {
    const state = playRandomly(createGame({ ...T5, hands: 20, startingChips: 1 }).newState({ seed: 4 }), seedrandom('s'));
    const regular = state.results.filter((r) => r.kind !== 'tie-break');
    expect(regular.length).toBeLessThan(20);
    const last = regular[regular.length - 1]!;
    expect(last.balances.some((b) => 5 + b <= 0)).toBe(true);
    for (const r of regular.slice(0, -1)) expect(r.balances.every((b) => 5 + b > 0)).toBe(true);
  });

  it('targetChips: a stack reaching the target ends the session; without startingChips the stack is the balance', () => {
    const state = playRandomly(createGame({ ...T5, hands: 50, targetChips: 2 }).newState({ seed: 5 }), seedrandom('t'));
    const regular = state.results.filter((r) => r.kind !== 'tie-break');
    const last = regular[regular.length - 1]!;
    expect(regular.length < 50 ? last.balances.some((b) => b >= 10) : true).toBe(true);
    for (const r of regular.slice(0, -1)) expect(r.balances.every((b) => b < 10)).toBe(true);
  });
});

describe('replay errors', () => {
  it('refuses a supplied deck that is not the 33 cards once, naming it, before any deal (§5: a deck lists all 33 cards)', () => {
    const game = createGame({});
    const good = Array.from({ length: 33 }, (_, c) => c);
    for (const deck of [[...good, 0], good.slice(1), [...good.slice(1), 1], [...good.slice(1), 99]]) {
      expect(() => game.newState({ seed: 1, decks: [good, deck] })).toThrow(expect.objectContaining({ error: 'invalid deck', field: 'decks[1]' }));
    }
    expect(game.newState({ seed: 1, decks: [good, null, good] }).handIndex).toBe(0);
  });
  it('refuses start amounts that are not whole units instead of rounding them to 0 (§5)', () => {
    for (const balance of [1e-300, 1e-17, 0.250000000000001]) {
      expect(() => replayRecord({ rules: {}, start: { dealer: 0, pot: 0, balances: [balance, 0, 0, 0] }, hands: [] })).toThrow(
        expect.objectContaining({ field: 'start.balances[0]' }),
      );
    }
  });
  it('names amounts past 2^53 - 1 units as too large, and integer seeds past 2^53 (§3, §5)', () => {
    for (const [start, field] of [[{ pot: 1e308 }, 'start.pot'], [{ balances: [1e308, 0, 0, 0] }, 'start.balances[0]'], [{ balances: [-1e300, 0, 0, 0] }, 'start.balances[0]']] as const) {
      expect(() => replayRecord({ rules: {}, start: { dealer: 0, ...start }, hands: [] })).toThrow(expect.objectContaining({ field, reason: expect.stringMatching(/at most .* chips/) }));
    }
    expect(() => replayRecord({ rules: {}, seed: 1e30, hands: [] })).toThrow(expect.objectContaining({ field: 'seed' }));
    expect(replayRecord({ rules: {}, seed: '1000000000000000000000000000000', hands: [] }).result.hands).toEqual([]);
  });
  it('refuses a fraction of a chip past 2^50 chips in tavern5, where JSON numbers cannot tell fifths apart (§3, §5)', () => {
    const k = 2 ** 50 + 7;
    // k.4 and k.6 are one double: reading either as a fifth would round.
    expect(k + 0.4).toBe(k + 0.6);
    expect(() => replayRecord({ rules: T5, start: { dealer: 0, balances: [k + 0.4, 0, 0, 0] }, hands: [] })).toThrow(
      expect.objectContaining({ field: 'start.balances[0]', reason: expect.stringMatching(/whole chips/) }),
    );
    expect(replayRecord({ rules: T5, start: { dealer: 0, balances: [k, 2 ** 49 + 0.4, 0, 0] }, hands: [] }).result.final.balances).toEqual([k, 2 ** 49 + 0.4, 0, 0]);
    expect(() => createGame({ ...T5, startingChips: k + 0.4 })).toThrow(expect.objectContaining({ field: 'startingChips' }));
  });
  it('refuses a session start that its record could not write: a fraction of a chip past 2^50 chips in units (§5)', () => {
    // A start of k.2 chips given in units made a state whose record parseRecord refused.
    const game = createGame(T5);
    const k = 2 ** 50 + 7;
    expect(() => game.newState({ seed: 1, start: { balances: [5 * k + 1, 0, 0, 0] } })).toThrow(expect.objectContaining({ field: 'start.balances[0]', reason: expect.stringMatching(/whole chips/) }));
    expect(() => game.newState({ seed: 1, start: { pot: 5 * k + 2 } })).toThrow(expect.objectContaining({ field: 'start.pot' }));
    for (const balances of [[5 * k, 0, 0, 0], [5 * 2 ** 49 + 2, 0, 0, 0]]) {
      const record = stateToRecord(game.newState({ seed: 1, start: { balances } }));
      expect(parseRecord(record).start.balances).toEqual(balances);
    }
  });
  // A record built in code may hold holes: map skipped them, and they failed as TypeErrors, or a
  // deck of holes as the wrong field [probe, session 38].
  it('refuses arrays with holes as malformed, naming the field (§5: a malformed record is refused before anything is replayed)', () => {
    const deck = buildDeck({ profile: 'didactic4', players: 4, ...SETTLEMENT_PLAN }) as unknown[];
    const cases: [unknown, string][] = [
      [{ rules: {}, seed: 1, hands: sparse([{}, {}], 0) }, 'hands[0]'],
      [{ rules: {}, seed: 1, hands: [{ actions: sparse([{ seat: 0, action: 'in' }, { seat: 0, action: 'in' }], 0) }] }, 'hands[0].actions[0]'],
      [{ rules: {}, seed: 1, hands: [{ deck: sparse(deck, 5) }] }, 'hands[0].deck[5]'],
      [{ rules: {}, seed: 1, hands: [{ deck: new Array(33) }] }, 'hands[0].deck[0]'],
      [{ rules: {}, seed: 1, start: { balances: sparse([0, 0, 0, 0], 2) }, hands: [] }, 'start.balances[2]'],
    ];
    for (const [record, field] of cases) {
      expect(() => replayRecord(record), field).toThrow(expect.objectContaining({ field }));
      expect(() => parseRecord(record), field).toThrow(expect.objectContaining({ field }));
    }
  });

  it('takes any integer seed when the record does not deal from it: every deck and the dealer given (§5)', () => {
    const deck = buildDeck({ profile: 'didactic4', players: 4, ...SETTLEMENT_PLAN });
    const record = { rules: {}, seed: 18446744073709551615, start: { dealer: 0, pot: 11 }, hands: [{ deck, actions: actions(SETTLEMENT_SCRIPT) }] };
    expect(replayRecord(record).result).toEqual(replayRecord({ ...record, seed: 5 }).result);
    expect(() => replayRecord({ ...record, start: { pot: 11 } })).toThrow(expect.objectContaining({ field: 'seed' }));
    expect(() => replayRecord({ ...record, hands: [...record.hands, { actions: [] }] })).toThrow(expect.objectContaining({ field: 'seed' }));
    // Nor is anything dealt from it after the record: 2^64 - 1 and 2^64 - 615 are one double.
    for (const seed of [18446744073709551615, 18446744073709551001]) {
      const { state } = replayRecord({ rules: {}, seed, start: { dealer: 0 }, hands: [] });
      expect(state.phase).toBe('deal');
      expect(state.seed).toBeUndefined();
    }
  });

  it('the state after a replayed record plays on as live play would, without waiting between hands (§5)', () => {
    const live = createGame({ players: 5 }).newState({ seed: 21 });
    const random = seedrandom('cut');
    while (live.handIndex < 2) live.apply(live.legalActions()[Math.floor(random() * live.legalActions().length)]!);
    // Cut after hand 1: the replay deals hand 2 itself (from the seed: the record's decks did not
    // draw on the generator, so not live's hand 2), then every later hand as it comes.
    const { state } = replayRecord({ ...stateToRecord(live), hands: stateToRecord(live).hands!.slice(0, 2) });
    expect(state.handIndex).toBe(2);
    expect(state.phase).not.toBe('deal');
    const played = playRandomly(state, seedrandom('on'));
    expect(played.complete).toBe(true);
    expect(played.results.length).toBeGreaterThanOrEqual(5);
  });
  it('stakes of a deal past 2^53 - 1 units belong to that deal: a record that stops before it replays (§3, §5, §6)', () => {
    // Seat 2 has room for one more ante: the deal of hand 2 would pass the bound.
    const game = createGame({ ...T5, hands: 3 });
    const roomForOneAnte = -(Math.floor(Number.MAX_SAFE_INTEGER / 5) - 2);
    const state = game.newState({ seed: 1, start: { dealer: 0, balances: [0, 0, game.toUnits(roomForOneAnte), 0], muss: false } });
    let r = 8;
    const random = () => (r = (r * 1103515245 + 12345) % 2147483648) / 2147483648;
    expect(() => {
      for (;;) {
        const legal = state.legalActions();
        state.apply(state.currentSeat === 2 && legal.includes(ACTION_OUT) ? ACTION_OUT : legal[Math.floor(random() * legal.length)]!);
      }
    }).toThrow(AmountOverflowError);
    // The session stopped before hand 2: its ledger is as hand 1 left it, no ante of hand 2 taken.
    expect(state.overflowed).toBe(true);
    expect(state.results.length).toBe(2);
    expect(Array.from(state.balances).slice(0, 4)).toEqual(state.results[1]!.balances.slice(0, 4));
    expect(state.pot).toBe(state.results[1]!.potAfter);
    const record = stateToRecord(state);
    expect(record.hands!.length).toBe(3);
    const twoHands = replayToJson({ ...record, hands: record.hands!.slice(0, 2) });
    expect(twoHands.exitCode).toBe(0);
    expect(twoHands.output).toMatchObject({ hands: [{}, {}], final: { complete: false } });
    // The state it returns waits between the hands, its amounts those of the result.
    const replayed = replayRecord({ ...record, hands: record.hands!.slice(0, 2) });
    expect(replayed.state.phase).toBe('deal');
    expect(Array.from(replayed.state.balances, (u) => u / 5)).toEqual(replayed.result.final.balances);
    expect(replayToJson(stateToRecord(replayed.state)).exitCode).toBe(0);
    // An action after the one that finished the record's last hand is still refused.
    const lastActions = record.hands![1]!.actions!;
    const stray = { ...record, hands: [record.hands![0]!, { ...record.hands![1]!, actions: [...lastActions, lastActions[0]!] }] };
    expect(replayToJson(stray)).toMatchObject({ exitCode: 1, output: { error: 'illegal action', hand: 1, action: lastActions.length } });
    // With hand 2 in the record, the overflow is that hand's deal, not the last action of hand 1.
    expect(replayToJson(record)).toMatchObject({ exitCode: 1, output: { error: 'amount overflow', hand: 2 } });
    expect(replayToJson(record).output).not.toHaveProperty('action');
  });

  it('the first illegal action stops the replay with hand, action index, seat and reason', () => {
    const deck = buildDeck({ profile: 'didactic4', players: 4, ...SETTLEMENT_PLAN });
    const script = SETTLEMENT_SCRIPT.slice();
    script[5] = [1, 'play Ad']; // must follow the trump lead
    try {
      replayRecord({ rules: {}, start: { dealer: 0, pot: 11 }, hands: [{ deck, actions: actions(script) }] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ReplayIllegalActionError);
      expect(e).toMatchObject({ hand: 0, actionIndex: 5, seat: 1 });
    }
  });
});

/** A copy of `values` with a hole at `at` (what `[, x]` writes). */
function sparse<T>(values: T[], at: number): T[] {
  const copy = [...values];
  delete copy[at];
  return copy;
}
