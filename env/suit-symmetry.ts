// The game's suit symmetry, for policies that want to learn it once instead of four times.
//
// The four plain suits play alike: only which one is trump matters, and the Weli belongs to none
// of them (docs/rules.md §1, §2). Relabelling the suits so that trump is always suit 0 (`c`)
// therefore maps every state to one that plays the same, with the actions relabelled alike. A
// policy that sees the relabelled ("canonical") cards and has its action outputs mapped back
// learns what it learns about, say, the trump Ace once for all four trump suits.
//
// The relabelling is a rotation: suit s becomes (s - trump) mod 4. While no trump is set (a
// tavern5 named trump still pending) nothing moves. It moves the card-indexed slices of the
// observation (env/observation.ts) and the card and trump actions (env/rules/actions.ts). The
// `trump` slice itself stays, so the canonical row still says which relabelling to undo.
//
// Everything is relabelled on the JS side, rows at a time: the network itself only ever sees
// canonical observations, masks and actions, so neither its graph nor its gradients change.

import { ACTION_DISCARD, ACTION_PLAY, ACTION_TRUMP, NUM_ACTIONS, NUM_CARDS, NUM_RANKS, NUM_SUITS, WELI } from './rules/index.js';
import { CARD_INDEXED_SLICES, OBS_SIZE, observationSpec } from './observation.js';

function rotatedSuit(suit: number, trump: number): number {
  return (suit - trump + NUM_SUITS) % NUM_SUITS;
}

/** The canonical label of card `card` when `trump` is trump: its suit rotated so trump is suit 0. */
export function canonicalCard(card: number, trump: number): number {
  if (card === WELI) return WELI;
  return rotatedSuit(Math.floor(card / NUM_RANKS), trump) * NUM_RANKS + (card % NUM_RANKS);
}

/** The canonical label of action `action` when `trump` is trump. */
export function canonicalAction(action: number, trump: number): number {
  if (action >= ACTION_PLAY && action < ACTION_PLAY + NUM_CARDS) return ACTION_PLAY + canonicalCard(action - ACTION_PLAY, trump);
  if (action >= ACTION_DISCARD && action < ACTION_DISCARD + NUM_CARDS) return ACTION_DISCARD + canonicalCard(action - ACTION_DISCARD, trump);
  if (action >= ACTION_TRUMP && action < ACTION_TRUMP + NUM_SUITS) return ACTION_TRUMP + rotatedSuit(action - ACTION_TRUMP, trump);
  return action;
}

const spec = observationSpec();
const cardSlices = spec.slices.filter((s) => CARD_INDEXED_SLICES.includes(s.name));
/** Where the observation says which suit is trump (one-hot, all 0 while none is set). */
export const TRUMP_OFFSET = spec.slices.find((s) => s.name === 'trump')!.offset;

/**
 * For trump `trump`: column j of the canonical observation is column `result[j]` of the
 * observation (a permutation of 0..OBS_SIZE-1; the identity for trump 0).
 */
function canonicalObservationSources(trump: number): Int32Array {
  const sources = new Int32Array(OBS_SIZE);
  for (let j = 0; j < OBS_SIZE; j++) sources[j] = j;
  for (const slice of cardSlices) {
    for (let block = 0; block < slice.size; block += NUM_CARDS) {
      for (let card = 0; card < NUM_CARDS; card++) sources[slice.offset + block + canonicalCard(card, trump)] = slice.offset + block + card;
    }
  }
  return sources;
}

/** The trump suit an observation row shows (0..3), or -1 while none is set. */
export function observedTrump(observation: Float32Array, offset = 0): number {
  for (let suit = 0; suit < NUM_SUITS; suit++) if (observation[offset + TRUMP_OFFSET + suit] === 1) return suit;
  return -1;
}

// Per trump suit: observation columns (canonicalObservationSources), card and action labels.
const SOURCES = Array.from({ length: NUM_SUITS }, (_, t) => canonicalObservationSources(t));
const CANONICAL_CARDS = Array.from({ length: NUM_SUITS }, (_, t) => Int32Array.from({ length: NUM_CARDS }, (_, c) => canonicalCard(c, t)));
const CANONICAL_ACTIONS = Array.from({ length: NUM_SUITS }, (_, t) => Int32Array.from({ length: NUM_ACTIONS }, (_, a) => canonicalAction(a, t)));

/**
 * The canonical form of `rows` observation rows (N x OBS_SIZE) as a new array; `trumps`, the
 * rows' `observedTrumps` when the caller has them already.
 */
export function canonicalObservations(rows: Float32Array, trumps: Int8Array = observedTrumps(rows)): Float32Array {
  const out = new Float32Array(rows.length);
  for (let i = 0, offset = 0; offset < rows.length; i++, offset += OBS_SIZE) {
    const trump = trumps[i]!;
    if (trump <= 0) {
      out.set(rows.subarray(offset, offset + OBS_SIZE), offset);
      continue;
    }
    const sources = SOURCES[trump]!;
    for (let j = 0; j < OBS_SIZE; j++) out[offset + j] = rows[offset + sources[j]!]!;
  }
  return out;
}

/**
 * The canonical form of rows made of whole card blocks (N x rowSize, rowSize a multiple of
 * NUM_CARDS: the other seats' hands of env/oracle.ts), row i relabelled by `trumps[i]` (the
 * `observedTrumps` of the observations they go with).
 */
export function canonicalCardRows(rows: Float32Array, rowSize: number, trumps: Int8Array): Float32Array {
  const n = trumps.length;
  if (rowSize % NUM_CARDS !== 0 || rows.length !== n * rowSize) throw new RangeError(`card rows of ${rows.length} floats do not fit ${n} rows of ${rowSize} whole card blocks`);
  const out = new Float32Array(rows.length);
  for (let i = 0; i < n; i++) {
    const labels = CANONICAL_CARDS[Math.max(0, trumps[i]!)]!;
    for (let block = i * rowSize; block < (i + 1) * rowSize; block += NUM_CARDS) {
      for (let card = 0; card < NUM_CARDS; card++) out[block + labels[card]!] = rows[block + card]!;
    }
  }
  return out;
}

/** The env action whose canonical label under trump `trump` is `canonical` (the inverse relabelling). */
export function envAction(canonical: number, trump: number): number {
  return trump <= 0 ? canonical : canonicalAction(canonical, NUM_SUITS - trump);
}

/** Each row's trump as `observedTrump` gives it (N x OBS_SIZE observations). */
export function observedTrumps(observations: Float32Array): Int8Array {
  const trumps = new Int8Array(observations.length / OBS_SIZE);
  for (let i = 0; i < trumps.length; i++) trumps[i] = observedTrump(observations, i * OBS_SIZE);
  return trumps;
}

/**
 * Action-indexed rows (masks, probabilities, logits: N x NUM_ACTIONS) relabelled per row:
 * `toCanonical` moves entry a to canonicalAction(a, trump), else back (the inverse).
 */
export function relabelActionRows<T extends Uint8Array | Float32Array>(rows: T, trumps: Int8Array, toCanonical: boolean): T {
  const out = rows.slice() as T;
  for (let i = 0; i < trumps.length; i++) {
    const trump = trumps[i]!;
    if (trump <= 0) continue;
    const base = i * NUM_ACTIONS;
    for (let a = 0; a < NUM_ACTIONS; a++) {
      const c = base + CANONICAL_ACTIONS[trump]![a]!;
      if (toCanonical) out[c] = rows[base + a]!;
      else out[base + a] = rows[c]!;
    }
  }
  return out;
}

/** Action ids relabelled per row (`toCanonical`, or back). */
export function relabelActions(actions: Int32Array, trumps: Int8Array, toCanonical: boolean): Int32Array {
  return actions.map((a, i) => (toCanonical ? CANONICAL_ACTIONS[Math.max(0, trumps[i]!)]![a]! : envAction(a, trumps[i]!)));
}
