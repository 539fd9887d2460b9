// The game's suit symmetry, for policies that want to learn it once instead of four times.
//
// The four plain suits play alike: only which one is trump matters, and the Weli belongs to none
// of them (docs/rules.md §1, §2). Relabelling the suits so that trump is always suit 0 (`c`)
// therefore maps every state to one that plays the same, with the actions relabelled alike. A
// policy that sees the relabelled ("canonical") cards and has its action outputs mapped back
// learns what it learns about, say, the trump Ace once for all four trump suits.
//
// `true` relabels by a rotation: suit s becomes (s - trump) mod 4. `'holding'` also orders the
// three plain suits by what the observer holds of each, so that, say, its longest plain suit is
// always suit 1. While no trump is set (a tavern5 named trump still pending) nothing moves. Each
// row's relabelling is one of the 24 permutations of the suits, named by an id (`relabellings`).
// It moves the card-indexed slices of the observation (env/observation.ts) and the card and trump
// actions (env/rules/actions.ts); the `trump` slice itself stays.
//
// Everything is relabelled on the JS side, rows at a time: the network itself only ever sees
// canonical observations, masks and actions, so neither its graph nor its gradients change.

import { ACTION_TRUMP, NUM_ACTIONS, NUM_CARDS, NUM_RANKS, NUM_SUITS, WELI, discardAction, discardedCard, playAction, playedCard } from './rules/index.js';
import { CARD_INDEXED_SLICES, OBS_SIZE, observationSpec, sliceOffset } from './observation.js';

/**
 * How a policy relabels the suits: not at all (`false`); trump first (`true`: a rotation); or
 * trump first and the three plain suits ordered by the observer's holding (`'holding'`).
 */
export type SuitSymmetry = boolean | 'holding';

function rotatedSuit(suit: number, trump: number): number {
  return (suit - trump + NUM_SUITS) % NUM_SUITS;
}

/** The canonical label of card `card` when `trump` is trump: its suit rotated so trump is suit 0. */
export function canonicalCard(card: number, trump: number): number {
  return permutedCard(card, rotation(trump));
}

/** The canonical label of action `action` when `trump` is trump. */
export function canonicalAction(action: number, trump: number): number {
  return permutedAction(action, rotation(trump));
}

/** Card `card` with suit s relabelled `labels[s]`. */
function permutedCard(card: number, labels: readonly number[]): number {
  if (card === WELI) return WELI;
  return labels[Math.floor(card / NUM_RANKS)]! * NUM_RANKS + (card % NUM_RANKS);
}

function permutedAction(action: number, labels: readonly number[]): number {
  if (playedCard(action) >= 0) return playAction(permutedCard(playedCard(action), labels));
  if (discardedCard(action) >= 0) return discardAction(permutedCard(discardedCard(action), labels));
  if (action >= ACTION_TRUMP && action < ACTION_TRUMP + NUM_SUITS) return ACTION_TRUMP + labels[action - ACTION_TRUMP]!;
  return action;
}

function rotation(trump: number): number[] {
  return Array.from({ length: NUM_SUITS }, (_, s) => (trump < 0 ? s : rotatedSuit(s, trump)));
}

// Every relabelling of the four suits, by id (the identity is id 0): labels[s] is suit s's new label.
const RELABELLINGS: number[][] = [];
(function permute(prefix: number[]): void {
  if (prefix.length === NUM_SUITS) RELABELLINGS.push(prefix);
  for (let s = 0; s < NUM_SUITS; s++) if (!prefix.includes(s)) permute([...prefix, s]);
})([]);
/** Relabelling ids by `labels[0] * 64 + labels[1] * 16 + labels[2] * 4 + labels[3]`. */
const ID_BY_CODE = new Int8Array(256);
const codeOf = (labels: readonly number[]) => labels[0]! * 64 + labels[1]! * 16 + labels[2]! * 4 + labels[3]!;
RELABELLINGS.forEach((labels, id) => (ID_BY_CODE[codeOf(labels)] = id));
/** rotationId(trump) at trump + 1. */
const ROTATION_IDS = Int8Array.from({ length: NUM_SUITS + 1 }, (_, i) => ID_BY_CODE[codeOf(rotation(i - 1))]!);

/** The relabelling id of the rotation that puts `trump` at suit 0 (0, the identity, while no trump is set). */
export function rotationId(trump: number): number {
  return ROTATION_IDS[trump + 1]!;
}

const spec = observationSpec();
const cardSlices = spec.slices.filter((s) => CARD_INDEXED_SLICES.includes(s.name));
/** Where the observation says which suit is trump (one-hot, all 0 while none is set). */
export const TRUMP_OFFSET = sliceOffset('trump');
const HAND_OFFSET = sliceOffset('hand');

/**
 * For relabelling `labels`: column j of the canonical observation is column `result[j]` of the
 * observation (a permutation of 0..OBS_SIZE-1; the identity for id 0).
 */
function canonicalObservationSources(labels: readonly number[]): Int32Array {
  const sources = new Int32Array(OBS_SIZE);
  for (let j = 0; j < OBS_SIZE; j++) sources[j] = j;
  for (const slice of cardSlices) {
    for (let block = 0; block < slice.size; block += NUM_CARDS) {
      for (let card = 0; card < NUM_CARDS; card++) sources[slice.offset + block + permutedCard(card, labels)] = slice.offset + block + card;
    }
  }
  return sources;
}

/** The trump suit an observation row shows (0..3), or -1 while none is set. */
export function observedTrump(observation: Float32Array, offset = 0): number {
  for (let suit = 0; suit < NUM_SUITS; suit++) if (observation[offset + TRUMP_OFFSET + suit] === 1) return suit;
  return -1;
}

// Per relabelling id: observation columns (canonicalObservationSources), card and action labels, and back.
const SOURCES = RELABELLINGS.map(canonicalObservationSources);
const CANONICAL_CARDS = RELABELLINGS.map((labels) => Int32Array.from({ length: NUM_CARDS }, (_, c) => permutedCard(c, labels)));
const CANONICAL_ACTIONS = RELABELLINGS.map((labels) => Int32Array.from({ length: NUM_ACTIONS }, (_, a) => permutedAction(a, labels)));
const ENV_ACTIONS = CANONICAL_ACTIONS.map((labels) => {
  const back = new Int32Array(NUM_ACTIONS);
  labels.forEach((canonical, action) => (back[canonical] = action));
  return back;
});

/**
 * The relabelling of `'holding'` for one observation row: trump becomes suit 0, and the plain
 * suits follow by how many of their cards the observer holds (most first), then by which ranks
 * it holds (the set of rank indices read as a binary number, larger first: a fixed tie-break),
 * then in rotated order (so that it stays a function of what the seat sees that a rotation of
 * the suits does not change). Nothing moves while no trump is set.
 */
function holdingId(observation: Float32Array, offset: number): number {
  const trump = observedTrump(observation, offset);
  if (trump < 0) return 0;
  // The plain suits in rotated order, each with its key; then a stable insertion sort on the key.
  const suits = [0, 0, 0];
  const keys = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    const suit = (trump + 1 + k) % NUM_SUITS;
    let count = 0;
    let ranks = 0;
    for (let rank = 0; rank < NUM_RANKS; rank++) {
      if (observation[offset + HAND_OFFSET + suit * NUM_RANKS + rank] !== 1) continue;
      count++;
      ranks += 1 << rank;
    }
    let at = k;
    const key = count * 256 + ranks;
    while (at > 0 && keys[at - 1]! < key) {
      keys[at] = keys[at - 1]!;
      suits[at] = suits[at - 1]!;
      at--;
    }
    keys[at] = key;
    suits[at] = suit;
  }
  const labels = [0, 0, 0, 0];
  for (let k = 0; k < 3; k++) labels[suits[k]!] = k + 1;
  return ID_BY_CODE[codeOf(labels)]!;
}

/** Each row's relabelling id under `symmetry` (N x OBS_SIZE observations; all 0 without symmetry). */
export function relabellings(observations: Float32Array, symmetry: SuitSymmetry): Int8Array {
  const ids = new Int8Array(observations.length / OBS_SIZE);
  if (symmetry === false) return ids;
  for (let i = 0; i < ids.length; i++) {
    const offset = i * OBS_SIZE;
    ids[i] = symmetry === 'holding' ? holdingId(observations, offset) : rotationId(observedTrump(observations, offset));
  }
  return ids;
}

/** The canonical form of `rows` observation rows (N x OBS_SIZE) as a new array, row i relabelled by `ids[i]`. */
export function canonicalObservations(rows: Float32Array, ids: Int8Array): Float32Array {
  const out = new Float32Array(rows.length);
  for (let i = 0, offset = 0; offset < rows.length; i++, offset += OBS_SIZE) {
    const id = ids[i]!;
    if (id === 0) {
      out.set(rows.subarray(offset, offset + OBS_SIZE), offset);
      continue;
    }
    const sources = SOURCES[id]!;
    for (let j = 0; j < OBS_SIZE; j++) out[offset + j] = rows[offset + sources[j]!]!;
  }
  return out;
}

/**
 * The canonical form of rows made of whole card blocks (N x rowSize, rowSize a multiple of
 * NUM_CARDS: the other seats' hands of env/oracle.ts), row i relabelled by `ids[i]` (the
 * `relabellings` of the observations they go with).
 */
export function canonicalCardRows(rows: Float32Array, rowSize: number, ids: Int8Array): Float32Array {
  const n = ids.length;
  if (rowSize % NUM_CARDS !== 0 || rows.length !== n * rowSize) throw new RangeError(`card rows of ${rows.length} floats do not fit ${n} rows of ${rowSize} whole card blocks`);
  const out = new Float32Array(rows.length);
  for (let i = 0; i < n; i++) {
    const labels = CANONICAL_CARDS[ids[i]!]!;
    for (let block = i * rowSize; block < (i + 1) * rowSize; block += NUM_CARDS) {
      for (let card = 0; card < NUM_CARDS; card++) out[block + labels[card]!] = rows[block + card]!;
    }
  }
  return out;
}

/** The env action whose canonical label under relabelling `id` is `canonical` (the inverse relabelling). */
export function envAction(canonical: number, id: number): number {
  return ENV_ACTIONS[id]![canonical]!;
}

/**
 * Action-indexed rows (masks, probabilities, logits: N x NUM_ACTIONS) relabelled per row:
 * `toCanonical` moves entry a to its canonical label under `ids[i]`, else back (the inverse).
 */
export function relabelActionRows<T extends Uint8Array | Float32Array>(rows: T, ids: Int8Array, toCanonical: boolean): T {
  const out = rows.slice() as T;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id === 0) continue;
    const base = i * NUM_ACTIONS;
    const labels = CANONICAL_ACTIONS[id]!;
    for (let a = 0; a < NUM_ACTIONS; a++) {
      const c = base + labels[a]!;
      if (toCanonical) out[c] = rows[base + a]!;
      else out[base + a] = rows[c]!;
    }
  }
  return out;
}

/** Action ids relabelled per row (`toCanonical`, or back). */
export function relabelActions(actions: Int32Array, ids: Int8Array, toCanonical: boolean): Int32Array {
  return actions.map((a, i) => (toCanonical ? CANONICAL_ACTIONS[ids[i]!]![a]! : ENV_ACTIONS[ids[i]!]![a]!));
}
