// The suit symmetry the canonical form relies on (docs/rules.md §1-§2: only trump sets a suit
// apart, the Weli belongs to none): a session dealt with the suits relabelled plays the same, and
// both canonicalise to the same rows.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { ACTION_DISCARD, ACTION_PLAY, ACTION_TRUMP, NUM_ACTIONS, NUM_CARDS, NUM_RANKS, WELI, createGame, type KratzenGame } from './rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec, sliceOffset } from './observation.js';
import { ORACLE_SIZE, encodeOtherHands } from './oracle.js';
import {
  TRUMP_OFFSET,
  canonicalAction,
  canonicalCard,
  canonicalCardRows,
  canonicalObservations,
  envAction,
  observedTrump,
  relabelActionRows,
  relabelActions,
  relabellings,
  rotationId,
  type SuitSymmetry,
} from './suit-symmetry.js';

const RULE_SETS = [
  { profile: 'didactic4', players: 4 },
  { profile: 'didactic4', players: 3 },
  { profile: 'tavern5', players: 4, exchange: {}, bettler: {} },
  { profile: 'tavern5', players: 3, weliRank: 'highest', dealerMinTricks: 3, failPenalty: 'pot', hands: 5, exchange: { maxCards: 3 } },
];

/** Suit s becomes (s + shift) mod 4; the Weli stays. */
function relabel(card: number, shift: number): number {
  return card === WELI ? WELI : (((Math.floor(card / NUM_RANKS) + shift) % 4) * NUM_RANKS) + (card % NUM_RANKS);
}

/** The same relabelling of an action: canonicalAction with trump -shift moves suits by +shift. */
function relabelAction(action: number, shift: number): number {
  return canonicalAction(action, (4 - shift) % 4);
}

/** A session of random play: its decks, first dealer and actions, to deal again beside a twin. */
function randomSession(game: KratzenGame, seed: number, label: string): { decks: number[][]; dealer: number; actions: number[] } {
  const random = seedrandom(label);
  const state = game.newState({ seed });
  const dealer = state.dealer;
  const actions: number[] = [];
  while (!state.isTerminal) {
    const action = state.legalActionAt(Math.floor(random() * state.numLegalActions()));
    actions.push(action);
    state.apply(action);
  }
  return { decks: state.handLogs().map((h) => h.deck), dealer, actions };
}

/** `action` with its card (play, discard) or its suit (naming trump) relabelled by `relabelCard`. */
function swapAction(action: number, relabelCard: (card: number) => number): number {
  if (action < ACTION_DISCARD) return ACTION_PLAY + relabelCard(action - ACTION_PLAY);
  if (action < ACTION_DISCARD + NUM_CARDS) return ACTION_DISCARD + relabelCard(action - ACTION_DISCARD);
  if (action >= ACTION_TRUMP && action < ACTION_TRUMP + 4) return ACTION_TRUMP + Math.floor(relabelCard((action - ACTION_TRUMP) * NUM_RANKS) / NUM_RANKS);
  return action;
}

function withoutTrumpSlice(row: Float32Array): number[] {
  return Array.from(row).filter((_, j) => j < TRUMP_OFFSET || j >= TRUMP_OFFSET + 4);
}

describe('suit symmetry', () => {
  it('relabels cards and actions by a rotation that puts trump at suit 0, the Weli fixed', () => {
    for (let trump = 0; trump < 4; trump++) {
      const cards = Array.from({ length: NUM_CARDS }, (_, c) => canonicalCard(c, trump));
      expect(new Set(cards).size).toBe(NUM_CARDS);
      expect(canonicalCard(WELI, trump)).toBe(WELI);
      expect(Math.floor(canonicalCard(trump * NUM_RANKS + 3, trump) / NUM_RANKS)).toBe(0);
      const actions = Array.from({ length: NUM_ACTIONS }, (_, a) => canonicalAction(a, trump));
      expect(new Set(actions).size).toBe(NUM_ACTIONS);
      actions.forEach((c, a) => expect(envAction(c, rotationId(trump))).toBe(a));
    }
    const trumps = Int8Array.from([-1, 0, 1, 2, 3].map(rotationId));
    expect(Array.from(trumps.subarray(0, 2))).toEqual([0, 0]); // no trump, or trump 0: the identity
    const rows = Float32Array.from({ length: 5 * NUM_ACTIONS }, (_, j) => j);
    const canonicalRows = relabelActionRows(rows, trumps, true);
    expect(relabelActionRows(canonicalRows, trumps, false)).toEqual(rows);
    expect(canonicalRows.subarray(0, 2 * NUM_ACTIONS)).toEqual(rows.subarray(0, 2 * NUM_ACTIONS));
    expect(canonicalRows[3 * NUM_ACTIONS + canonicalAction(10, 2)]).toBe(rows[3 * NUM_ACTIONS + 10]);
    const ids = Int32Array.from([5, 40, 70, 66, 31]);
    expect(relabelActions(relabelActions(ids, trumps, true), trumps, false)).toEqual(ids);
    trumps.forEach((id, i) => expect(envAction(canonicalAction(ids[i]!, Math.max(0, i - 1)), id)).toBe(ids[i]));
    expect(canonicalAction(66, 2)).toBe(66); // `in` has no suit
  });

  it('moves exactly the card-indexed slices', () => {
    const row = new Float32Array(OBS_SIZE).map((_, j) => j + 1);
    row.fill(0, TRUMP_OFFSET, TRUMP_OFFSET + 4);
    row[TRUMP_OFFSET + 2] = 1;
    const canonical = canonicalObservations(row, relabellings(row, true));
    const moved = new Set<string>();
    for (let j = 0; j < OBS_SIZE; j++) if (canonical[j] !== row[j]) moved.add(observationSpec().slices.find((s) => j >= s.offset && j < s.offset + s.size)!.name);
    expect([...moved].sort()).toEqual(['currentTrick', 'faceUp', 'hand', 'ownDiscards', 'playedBy', 'playedTrick']);
    expect(observedTrump(canonical)).toBe(2); // the trump slice stays, so the relabelling can be undone
  });

  it("'holding' maps a session dealt with two plain suits swapped to the same rows wherever the seat's plain suits differ in length", () => {
    const HAND = sliceOffset('hand');
    const swap = (card: number, a: number, b: number) => {
      const suit = Math.floor(card / NUM_RANKS);
      if (card === WELI || (suit !== a && suit !== b)) return card;
      return (suit === a ? b : a) * NUM_RANKS + (card % NUM_RANKS);
    };
    const suitLengths = (row: Float32Array, trump: number) =>
      [0, 1, 2, 3].filter((s) => s !== trump).map((s) => row.subarray(HAND + s * NUM_RANKS, HAND + (s + 1) * NUM_RANKS).reduce((x, y) => x + y, 0));
    let compared = 0;
    for (const rules of RULE_SETS) {
      const game = createGame(rules);
      for (let seed = 0; seed < 4; seed++) {
        const { decks, dealer, actions } = randomSession(game, seed, `holding-${seed}`);
        // Any relabelling of the suits plays the same; this one is not a rotation.
        const [a, b] = [1 + (seed % 2), 3];
        const original = game.newState({ seed, decks, start: { dealer } });
        const twin = game.newState({ seed, decks: decks.map((d) => d.map((c) => swap(c, a!, b!))), start: { dealer } });
        const rows = new Float32Array(2 * OBS_SIZE);
        for (const action of actions) {
          for (let seat = 0; seat < game.numPlayers; seat++) {
            encodeObservation(original, seat, rows, 0);
            encodeObservation(twin, seat, rows, OBS_SIZE);
            const t = observedTrump(rows, 0);
            if (t < 0 || new Set(suitLengths(rows, t)).size < 3) continue;
            const canonical = canonicalObservations(rows, relabellings(rows, 'holding'));
            expect(withoutTrumpSlice(canonical.subarray(OBS_SIZE))).toEqual(withoutTrumpSlice(canonical.subarray(0, OBS_SIZE)));
            compared++;
          }
          original.apply(action);
          twin.apply(swapAction(action, (card) => swap(card, a!, b!)));
        }
        for (let seat = 0; seat < game.numPlayers; seat++) expect(twin.balance(seat)).toBe(original.balance(seat));
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  for (const [rules, symmetry] of RULE_SETS.flatMap((rules) => [[rules, true], [rules, 'holding']] as [object, SuitSymmetry][])) {
    it(`a session dealt with the suits rotated has the same canonical observations, masks and hands (${symmetry}): ${JSON.stringify(rules)}`, () => {
      const game = createGame(rules);
      const n = game.numPlayers;
      for (let seed = 0; seed < 6; seed++) {
        // Play the session once to learn its decks, then again beside its relabelled twin.
        const { decks, dealer, actions } = randomSession(game, seed, `symmetry-${seed}`);
        const shift = 1 + (seed % 3);
        const original = game.newState({ seed, decks, start: { dealer } });
        const twin = game.newState({ seed, decks: decks.map((d) => d.map((c) => relabel(c, shift))), start: { dealer } });
        const rows = new Float32Array(2 * OBS_SIZE);
        const masks = new Uint8Array(2 * NUM_ACTIONS);
        const hands = new Float32Array(2 * ORACLE_SIZE);
        for (const action of actions) {
          for (let seat = 0; seat < n; seat++) {
            encodeObservation(original, seat, rows, 0);
            encodeObservation(twin, seat, rows, OBS_SIZE);
            const trump = observedTrump(rows, 0);
            expect(observedTrump(rows, OBS_SIZE)).toBe(trump < 0 ? -1 : (trump + shift) % 4);
            const ids = relabellings(rows, symmetry);
            const canonical = canonicalObservations(rows, ids);
            if (trump >= 0) expect(withoutTrumpSlice(canonical.subarray(OBS_SIZE))).toEqual(withoutTrumpSlice(canonical.subarray(0, OBS_SIZE)));
            encodeOtherHands(original, seat, hands, 0);
            encodeOtherHands(twin, seat, hands, ORACLE_SIZE);
            const canonicalHands = canonicalCardRows(hands, ORACLE_SIZE, ids);
            if (trump >= 0) expect(Array.from(canonicalHands.subarray(ORACLE_SIZE))).toEqual(Array.from(canonicalHands.subarray(0, ORACLE_SIZE)));
          }
          original.legalActionMask(masks, 0);
          twin.legalActionMask(masks, NUM_ACTIONS);
          for (let a = 0; a < NUM_ACTIONS; a++) expect(masks[NUM_ACTIONS + relabelAction(a, shift)]).toBe(masks[a]);
          original.apply(action);
          twin.apply(relabelAction(action, shift));
        }
        expect(twin.isTerminal).toBe(true);
        for (let seat = 0; seat < n; seat++) expect(twin.balance(seat)).toBe(original.balance(seat));
      }
    });
  }
});
