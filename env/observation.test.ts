// Observation layout, round trip through the decoder, and the no-leak property.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import {
  ACTION_DISCARD,
  ACTION_IN,
  NUM_CARDS,
  OBS_SIZE,
  createGame,
  decodeObservation,
  encodeObservation,
  observationSpec,
  observationView,
  seatView,
  KratzenEnv,
  VecEnv,
  NUM_ACTIONS,
  type KratzenState,
} from '../index.js';
import { ObservationRows, sliceOffset, symlog } from './observation.js';
import { observedSeat } from './observation-view.js';

const CONFIGS = [
  { profile: 'didactic4', players: 3 },
  { profile: 'didactic4', players: 4 },
  { profile: 'didactic4', players: 6 },
  { profile: 'tavern5', players: 4, exchange: {}, bettler: {} },
  { profile: 'tavern5', players: 5, startingChips: 20, targetChips: 30 },
  { profile: 'tavern5', players: 3, weliRank: 'highest', dealerMinTricks: 3, failPenalty: 'pot', ante: 0.4, hands: 7, exchange: { maxCards: 3, feePerCard: 0.2 }, bettler: { bonus: 1.6 } },
];

/** Random states along random sessions, with the actions that led to them. */
function* randomStates(rules: object, sessions: number, every = 3) {
  for (let seed = 0; seed < sessions; seed++) {
    const state = createGame(rules).newState({ seed });
    const random = seedrandom(`obs-${seed}`);
    const actions: number[] = [];
    let t = 0;
    while (!state.isTerminal) {
      if (t++ % every === 0) yield { state, actions: actions.slice(), seed };
      const action = state.legalActionAt(Math.floor(random() * state.numLegalActions()));
      actions.push(action);
      state.apply(action);
    }
    yield { state, actions, seed };
  }
}

describe('observation spec', () => {
  it('derives offsets from the named slices and ends exactly at OBS_SIZE', () => {
    const spec = observationSpec();
    let offset = 0;
    for (const slice of spec.slices) {
      expect(slice.offset).toBe(offset);
      offset += slice.size;
    }
    expect(offset).toBe(OBS_SIZE);
    expect(spec.size).toBe(OBS_SIZE);
    expect(spec.version).toBe(2);
  });
});

describe('observation v2 carries the rule set (docs/rules.md §0)', () => {
  const T5 = { profile: 'tavern5', players: 4 };
  const VARIANTS: Record<string, unknown>[] = [
    { weliRank: 'highest' },
    { failPenalty: 'pot' },
    { exchange: {} },
    { exchange: { maxCards: 3 } },
    { exchange: { feePerCard: 0.4 } },
    { bettler: {} },
    { bettler: { bonus: 3 } },
    { dealerMinTricks: 3 },
    { ante: 2 },
    { startingChips: 20 },
    { targetChips: 30 },
    { hands: 9 },
  ];

  it.each(VARIANTS)('tavern5 and tavern5 + %j differ in every phase of the same seeded session, Muss deals included', (variant) => {
    const base = createGame(T5).newState({ seed: 11 });
    const varied = createGame({ ...T5, ...variant }).newState({ seed: 11 });
    const a = new Float32Array(OBS_SIZE);
    const b = new Float32Array(OBS_SIZE);
    const phases = new Set<string>();
    const kinds = new Set<string>();
    for (let step = 0; step < 60 && !base.isTerminal && !varied.isTerminal; step++) {
      for (let seat = 0; seat < 4; seat++) {
        encodeObservation(base, seat, a);
        encodeObservation(varied, seat, b);
        expect(Array.from(a)).not.toEqual(Array.from(b));
        expect(decodeObservation(b).rules).toEqual({ ...T5, ...expectedJson(variant) });
      }
      phases.add(base.phase);
      kinds.add(base.kind);
      // Play the same action where both allow it, so both sessions keep going.
      const action = base.legalActions().find((x) => varied.isLegal(x));
      if (action === undefined) break;
      base.apply(action);
      varied.apply(action);
    }
    expect(kinds.has('muss')).toBe(true); // the opening deal [D-10]
    expect(phases.has('play')).toBe(true);
  });

  it('decodes rule amounts past 2^50 chips to whole chips, which the rule-set schema takes there', () => {
    const state = createGame({ ...T5, targetChips: 2 ** 50, startingChips: 2 ** 50 + 3 }).newState({ seed: 2 });
    const vector = new Float32Array(OBS_SIZE);
    encodeObservation(state, 0, vector);
    const { targetChips, startingChips } = decodeObservation(vector).rules as { targetChips: number; startingChips: number };
    expect(Number.isInteger(targetChips) && Number.isInteger(startingChips)).toBe(true);
    // float32 keeps about 7 digits of the symlog: the decoded amounts are near, not equal.
    expect(Math.abs(targetChips / 2 ** 50 - 1)).toBeLessThan(1e-4);
  });

  it('decodes a session of 2^53 - 1 hands to a count within the rule set [probe, session 41]', () => {
    // It came back one above 2^53 - 1: every agent decoding its observation refused it.
    const state = createGame({ players: 4, hands: Number.MAX_SAFE_INTEGER }).newState({ seed: 4 });
    const obs = new Float32Array(OBS_SIZE);
    encodeObservation(state, state.currentSeat, obs);
    const { hands } = decodeObservation(obs).rules as { hands: number };
    expect(hands).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(hands / Number.MAX_SAFE_INTEGER).toBeGreaterThan(0.9999);
    // Exact where float32 holds the count: sessions up to about a million hands.
    for (const exact of [1, 7, 1000, 65_537, 999_999]) {
      encodeObservation(createGame({ players: 3, hands: exact }).newState({ seed: 1 }), 0, obs);
      expect((decodeObservation(obs).rules as { hands: number }).hands).toBe(exact);
    }
  });

  it('didactic4 decodes to its profile, players and hands', () => {
    const state = createGame({ players: 5, hands: 2 }).newState({ seed: 1 });
    const obs = new Float32Array(OBS_SIZE);
    encodeObservation(state, 2, obs);
    expect(decodeObservation(obs).rules).toEqual({ profile: 'didactic4', players: 5, hands: 2 });
    expect(decodeObservation(obs).handsLeft).toBe(2);
  });

  it('the hands left count down over a session', () => {
    const state = createGame({ players: 3 }).newState({ seed: 3 });
    const obs = new Float32Array(OBS_SIZE);
    const seen: number[] = [];
    const random = seedrandom('left');
    while (!state.isTerminal) {
      encodeObservation(state, 0, obs);
      const left = decodeObservation(obs).handsLeft;
      if (seen[seen.length - 1] !== left) seen.push(left);
      state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
    }
    encodeObservation(state, 0, obs);
    seen.push(decodeObservation(obs).handsLeft);
    expect(seen).toEqual([3, 2, 1, 0]);
  });
});

/** A variant as a record writes it: defaults filled in for the nested objects. */
function expectedJson(variant: Record<string, unknown>): Record<string, unknown> {
  const out = { ...variant };
  if (out.exchange) out.exchange = { maxCards: 2, feePerCard: 1, ...(out.exchange as object) };
  if (out.bettler) out.bettler = { bonus: 2, ...(out.bettler as object) };
  return out;
}

describe.each(CONFIGS)('observation of %j', (rules) => {
  it('decodes back to the structured view, for every seat', () => {
    const obs = new Float32Array(OBS_SIZE + 7);
    for (const { state } of randomStates(rules, 3)) {
      for (let seat = 0; seat < state.numPlayers; seat++) {
        encodeObservation(state, seat, obs, 7);
        const decoded = decodeObservation(obs, 7);
        const view = observationView(state, seat);
        const { pot, potBeforePlay, balances, handsPlayedFraction, ...exact } = decoded;
        expect(decoded.rules).toEqual(view.rules);
        const { pot: p, potBeforePlay: pb, balances: b, handsPlayedFraction: h, ...viewExact } = view;
        expect(exact).toEqual(viewExact);
        expect(pot).toBeCloseTo(p, 3);
        expect(potBeforePlay).toBeCloseTo(pb, 3);
        expect(handsPlayedFraction).toBeCloseTo(h, 6);
        balances.forEach((x, s) => expect(x).toBeCloseTo(b[s]!, 2));
      }
    }
  });

  it('does not leak: permuting the cards the seat cannot see leaves its observation unchanged', () => {
    const game = createGame(rules);
    let compared = 0;
    for (const { state, actions, seed } of randomStates(rules, 4, 5)) {
      if (state.phase === 'over' || state.handIndex !== state.results.length) continue;
      const handStart = actionsOfCurrentHand(state, actions);
      for (let seat = 0; seat < state.numPlayers; seat++) {
        const hidden = hiddenCards(state, seat);
        const random = seedrandom(`perm-${seed}-${seat}-${actions.length}`);
        for (let attempt = 0; attempt < 3; attempt++) {
          const shuffled = hidden.slice();
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = Math.floor(random() * (i + 1));
            [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
          }
          const pi = new Map(hidden.map((c, i) => [c, shuffled[i]!]));
          const map = (c: number) => pi.get(c) ?? c;
          const twin = replayWithPermutation(game, state, actions, handStart, map);
          if (!twin) continue; // the permutation contradicts what play revealed (voids): not consistent
          const a = new Float32Array(OBS_SIZE);
          const b = new Float32Array(OBS_SIZE);
          encodeObservation(state, seat, a);
          encodeObservation(twin, seat, b);
          expect(Array.from(b)).toEqual(Array.from(a));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(50);
  });
});

/** Cards `seat` cannot see: not in its hand, not its discards, not face up, not played. */
function hiddenCards(state: KratzenState, seat: number): number[] {
  const visible = new Set<number>(state.handOf(seat));
  for (const card of state.discardsOf(seat)) visible.add(card);
  for (let i = 0; i < state.numFaceUp; i++) visible.add(state.faceUp[i]!);
  for (const card of Array.from(state.playedCards)) if (card >= 0) visible.add(card);
  return Array.from({ length: NUM_CARDS }, (_, c) => c).filter((c) => !visible.has(c));
}

function actionsOfCurrentHand(state: KratzenState, actions: number[]): number {
  const logs = state.handLogs();
  const before = logs.slice(0, -1).reduce((n, h) => n + h.actions.length, 0);
  return before;
}

/** The same session with the current hand's deck and hidden discards relabelled by `map`. */
function replayWithPermutation(game: ReturnType<typeof createGame>, state: KratzenState, actions: number[], handStart: number, map: (c: number) => number) {
  const logs = state.handLogs();
  const decks = logs.map((h, k) => (k === logs.length - 1 ? h.deck.map(map) : h.deck));
  const twin = game.newState({ seed: state.seed, decks, start: { dealer: state.startInfo.dealer } });
  try {
    actions.forEach((action, i) => {
      const isDiscard = action >= ACTION_DISCARD && action < ACTION_IN;
      twin.apply(i >= handStart && isDiscard ? ACTION_DISCARD + map(action - ACTION_DISCARD) : action);
    });
  } catch {
    return null;
  }
  return twin;
}

describe('amounts', () => {
  it('are symlog(chips) rounded to float32, below and above the look-up table, in games encoded in turn', () => {
    // A large ante takes tavern5 pots and balances past the table (1024 units); didactic4 stays under it.
    const games = [{ profile: 'didactic4', players: 4 }, { profile: 'tavern5', players: 4, ante: 300 }, { profile: 'tavern5', players: 3, ante: 0.2 }].map((rules) => createGame(rules));
    const states = games.map((game, i) => game.newState({ seed: i }));
    const vector = new Float32Array(OBS_SIZE);
    const random = seedrandom('amounts');
    const sizes = new Set<string>();
    for (let step = 0; step < 3000; step++) {
      const k = step % states.length;
      const state = states[k]!;
      if (state.isTerminal) continue;
      const seat = step % state.numPlayers;
      encodeObservation(state, seat, vector);
      const view = observationView(state, seat);
      const amounts: [number, number][] = [[vector[sliceOffset('pot')]!, view.pot], [vector[sliceOffset('potBeforePlay')]!, view.potBeforePlay]];
      for (let r = 0; r < state.numPlayers; r++) amounts.push([vector[sliceOffset('balances') + r]!, view.balances[(seat + r) % state.numPlayers]!]);
      for (const [encoded, chips] of amounts) {
        expect(encoded).toBe(Math.fround(symlog(chips)));
        if (chips !== 0) sizes.add(`${k}:${Math.abs(chips * games[k]!.unitsPerChip) < 1024 ? 'small' : 'large'}`);
      }
      state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions())));
    }
    expect([...sizes].sort()).toEqual(['0:small', '1:large', '1:small', '2:small']);
  });
});

describe('ObservationRows', () => {
  it('lists exactly the non-zero entries of each row, each once, after every write (sparse encodings rely on it)', () => {
    for (const [rules, clearWhole] of CONFIGS.flatMap((rules) => [[rules, false], [rules, true]] as const)) {
      const rows = new ObservationRows(new Float32Array(2 * OBS_SIZE), 2, clearWhole, true);
      let checked = 0;
      for (const { state } of randomStates(rules, 3, 1)) {
        for (let seat = 0; seat < state.numPlayers; seat++) {
          const row = (checked++ + seat) % 2;
          rows.write(state, seat, row);
          const listed = Array.from(rows.setIndices.subarray(row * rows.stride, row * rows.stride + rows.setCounts[row]!)).sort((a, b) => a - b);
          const nonZero = Array.from(rows.out.subarray(row * OBS_SIZE, (row + 1) * OBS_SIZE).keys()).filter((i) => rows.out[row * OBS_SIZE + i] !== 0);
          expect(listed).toEqual(nonZero);
        }
      }
      expect(checked).toBeGreaterThan(100);
    }
  });

  it('rows cleared whole list nothing unless asked, and write the same rows as encodeObservation either way', () => {
    for (const rules of CONFIGS) {
      const quiet = new ObservationRows(new Float32Array(2 * OBS_SIZE), 2, true);
      const listing = new ObservationRows(new Float32Array(2 * OBS_SIZE), 2, true, true);
      expect(quiet.listsEntries).toBe(false);
      expect(quiet.setIndices.length).toBe(0);
      expect(listing.listsEntries).toBe(true);
      expect(new ObservationRows(new Float32Array(OBS_SIZE), 1, false).listsEntries).toBe(true);
      const expected = new Float32Array(OBS_SIZE);
      let row = 0;
      for (const { state } of randomStates(rules, 2, 3)) {
        for (let seat = 0; seat < state.numPlayers; seat++, row = 1 - row) {
          quiet.write(state, seat, row);
          listing.write(state, seat, row);
          encodeObservation(state, seat, expected);
          expect(quiet.out.subarray(row * OBS_SIZE, (row + 1) * OBS_SIZE)).toEqual(expected);
          expect(listing.out.subarray(row * OBS_SIZE, (row + 1) * OBS_SIZE)).toEqual(expected);
          expect(quiet.setCounts[row]).toBe(listing.setCounts[row]);
        }
      }
    }
  });
});

describe('seats off the table', () => {
  it('every view of a seat refuses a seat that is not at the table (seat -4 read the deck: other hands and undealt cards) [probe round 3b]', () => {
    // 6-player didactic4: the deck lies just before the hands in the state's memory.
    const env = new KratzenEnv({ rules: { profile: 'didactic4', players: 6 } });
    env.reset({ seed: 10 });
    const vec = new VecEnv({ numEnvs: 1, config: { rules: { profile: 'didactic4', players: 6 } } }).reset(10);
    const state = vec.stateOf(0);
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    for (const seat of [-4, -1, 6, 100, 1.5, Number.NaN, '1' as unknown as number]) {
      const calls: [string, () => unknown][] = [
        ['env.observe', () => env.observe(seat)],
        ['env.view', () => env.view(seat)],
        ['vec.observe', () => vec.observe(0, seat, obs, mask)],
        ['vec.tableView', () => vec.tableView(0, seat)],
        ['vec.seatRecord', () => vec.seatRecord(0, seat)],
        ['encodeObservation', () => encodeObservation(state, seat, obs)],
        ['observationView', () => observationView(state, seat)],
        ['seatView', () => seatView(state, seat)],
        ['handOf', () => state.handOf(seat)],
      ];
      for (const [name, call] of calls) expect(call, `${name}(${String(seat)})`).toThrow(/^seat must be a seat 0\.\.5, got /);
    }
    // The seats at the table still work.
    for (let seat = 0; seat < 6; seat++) expect(observationView(state, seat).hand.length).toBeGreaterThan(0);
  });
});

describe('decodeObservation of vectors no encoder writes [probe round 8]', () => {
  it('names the length, the offset or the one-hot slice (all ones decoded to an 8-card hand, null failed inside)', () => {
    const game = createGame({ profile: 'didactic4', players: 4 });
    const state = game.newState({ seed: 2 });
    const real = new Float32Array(OBS_SIZE);
    encodeObservation(state, state.currentSeat, real);
    expect(decodeObservation(real).seat).toBe(state.currentSeat);
    expect(() => decodeObservation(real.subarray(0, OBS_SIZE - 1))).toThrow(/an observation needs 490 floats of a Float32Array from offset 0; it holds 489/);
    expect(() => decodeObservation(real, 1)).toThrow(/from offset 1; it holds 490/);
    expect(() => decodeObservation(null as never)).toThrow(/not null/);
    expect(() => decodeObservation(new Float32Array(OBS_SIZE).fill(1))).toThrow(/slice seat is not one-hot/);
    expect(() => decodeObservation(new Float32Array(OBS_SIZE))).toThrow(/slice seat is not one-hot/);
    const allCards = real.slice();
    allCards.fill(1, sliceOffset('hand'), sliceOffset('hand') + NUM_CARDS);
    expect(() => decodeObservation(allCards)).toThrow(/a hand of 33 cards/);
  });

  it('observedSeat reads the seat of every row an env writes and refuses the rows whose one-hot slices no encoder writes', () => {
    for (const players of [3, 6]) {
      const state = createGame({ profile: 'tavern5', players }).newState({ seed: 4 });
      const rows = new Float32Array(players * OBS_SIZE);
      for (let seat = 0; seat < players; seat++) encodeObservation(state, seat, rows, seat * OBS_SIZE);
      for (let seat = 0; seat < players; seat++) expect(observedSeat(rows, seat * OBS_SIZE)).toBe(seat);
    }
    const real = new Float32Array(OBS_SIZE);
    encodeObservation(createGame({ profile: 'didactic4', players: 4 }).newState({ seed: 2 }), 1, real);
    const changed = (slice: 'seat' | 'numPlayers' | 'phase', at: number, value: number) => {
      const row = real.slice();
      row[sliceOffset(slice) + at] = value;
      return row;
    };
    expect(() => observedSeat(new Float32Array(OBS_SIZE))).toThrow(/slice seat is not one-hot/);
    expect(() => observedSeat(changed('seat', 3, 1))).toThrow(/slice seat is not one-hot/);
    expect(() => observedSeat(changed('seat', 1, 0.5))).toThrow(/slice seat is not one-hot/);
    expect(() => observedSeat(changed('phase', 0, 1))).toThrow(/slice phase is not one-hot/);
    // numPlayers one-hot at 3 players: seat 1 sits there, seat 4 does not.
    const three = changed('numPlayers', 1, 0);
    three[sliceOffset('numPlayers')] = 1;
    expect(observedSeat(three)).toBe(1);
    three.fill(0, sliceOffset('seat'), sliceOffset('seat') + 6);
    three[sliceOffset('seat') + 4] = 1;
    expect(() => observedSeat(three)).toThrow(/seat 4 at a table of 3/);
  });
});
