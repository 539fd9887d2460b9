// The data of one session, which only the rules core reads and writes (game.ts exposes it read
// only; SeatView shows one seat its part). Every fixed-size array lives in one block of memory laid
// out by MEMORY_LAYOUT below, so a state is a few contiguous cache lines rather than a score of
// scattered allocations (it matters when a vector env steps thousands in turn), and a clone is
// one buffer copy. Nothing outside env/rules/ imports this module.

import { NUM_CARDS } from './cards.js';
import { NUM_ACTIONS } from './actions.js';
import type { HandKind, Phase } from './phases.js';
import { DECL_NONE, HAND_CAPACITY, MAX_SEATS, MAX_TRICKS } from './sizes.js';
import { RESULT_STRIDE } from './results.js';

type Kind = 'f64' | 'i8' | 'u8' | 'i16';
const BYTES: Record<Kind, number> = { f64: 8, i8: 1, u8: 1, i16: 2 };

/** Every array of a state: [name, element type, length]. Offsets follow from this list alone. */
const MEMORY_LAYOUT = [
  /** Alea's four doubles (alea.ts). */
  ['rng', 'f64', 4],
  /** Balances in units, per seat. */
  ['balances', 'f64', MAX_SEATS],
  /** Balances when the session started. */
  ['startBalances', 'f64', MAX_SEATS],
  /** Exchange fees paid this hand, per seat. */
  ['fees', 'f64', MAX_SEATS],
  /** The settlement being committed (ledger.ts writes it). */
  ['payouts', 'f64', MAX_SEATS],
  ['penalties', 'f64', MAX_SEATS],
  /** Face-up cards everybody saw: didactic4's indicator(s), tavern5's turned card. */
  ['faceUp', 'i8', 2],
  ['deck', 'i8', NUM_CARDS],
  ['dealtIn', 'u8', MAX_SEATS],
  ['playing', 'u8', MAX_SEATS],
  ['declaration', 'u8', MAX_SEATS],
  ['bettler', 'u8', MAX_SEATS],
  ['quotas', 'u8', MAX_SEATS],
  ['tricksWon', 'u8', MAX_SEATS],
  ['hands', 'i8', MAX_SEATS * HAND_CAPACITY],
  ['handLength', 'u8', MAX_SEATS],
  /** Which seat discarded each card this hand (-1: none); only that seat may ever see it. */
  ['discardedBy', 'i8', NUM_CARDS],
  /** The cards discarded this hand, in order (`discardedBy` says whose): a short list to scan. */
  ['discards', 'i8', NUM_CARDS],
  ['exchanged', 'u8', MAX_SEATS],
  ['trickCards', 'i8', MAX_SEATS],
  ['trickSeats', 'i8', MAX_SEATS],
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  ['playedCards', 'i8', MAX_TRICKS * MAX_SEATS],
  ['trickWinners', 'i8', MAX_TRICKS],
  /** The legal actions of the current state, in the engine's order. */
  ['legal', 'i16', NUM_ACTIONS],
  /** The first room of the session's results and log (results.ts, history.ts): 4 hands, 128 actions. */
  ['firstResults', 'f64', 4 * RESULT_STRIDE],
  ['firstDecks', 'i8', 4 * NUM_CARDS],
  ['firstActions', 'i16', 128],
] as const;

type LayoutName = (typeof MEMORY_LAYOUT)[number][0];
type ViewOf<K> = K extends 'f64' ? Float64Array : K extends 'i16' ? Int16Array : K extends 'i8' ? Int8Array : Uint8Array;
type Memory = { [E in (typeof MEMORY_LAYOUT)[number] as E[0]]: ViewOf<E[1]> };

const OFFSETS: Record<string, number> = {};
let cursor = 0;
for (const [name, kind, length] of MEMORY_LAYOUT) {
  cursor = Math.ceil(cursor / BYTES[kind]) * BYTES[kind];
  OFFSETS[name] = cursor;
  cursor += BYTES[kind] * length;
}
const MEMORY_BYTES = Math.ceil(cursor / 8) * 8;

// A plain object rather than a Map: carve's lookups by constant names can then compile to field
// loads instead of a hash lookup per view.
const LAYOUT_BY_NAME = Object.fromEntries(MEMORY_LAYOUT.map(([name, kind, length]) => [name, [kind, OFFSETS[name]!, length]])) as unknown as Record<LayoutName, readonly [Kind, number, number]>;

function view<N extends LayoutName>(buffer: ArrayBuffer, start: number, name: N): Memory[N] {
  const [kind, offset, length] = LAYOUT_BY_NAME[name];
  const at = start + offset;
  const out = kind === 'f64' ? new Float64Array(buffer, at, length) : kind === 'i16' ? new Int16Array(buffer, at, length) : kind === 'i8' ? new Int8Array(buffer, at, length) : new Uint8Array(buffer, at, length);
  return out as Memory[N];
}

// States take their memory from slabs of SLAB_STATES states rather than an ArrayBuffer each: a
// buffer's allocation (off-heap, tracked by the garbage collector) cost more here than creating
// all of a state's views, and search and random play create a state per session or sample. A
// slab lives while any of its states does, so a long-lived state keeps at most SLAB_STATES - 1
// dead states' memory (~1.7 KB each) with it. Regions are handed out once, never reused, so a new
// state's memory is zero as a fresh buffer's would be.
const SLAB_STATES = 16;
let slab = new ArrayBuffer(0);
let slabNext = SLAB_STATES;

/** The offset of a new state's memory in `slab` (a new slab when the last one is used up). */
function takeMemory(): number {
  if (slabNext === SLAB_STATES) {
    slab = new ArrayBuffer(SLAB_STATES * MEMORY_BYTES);
    slabNext = 0;
  }
  return MEMORY_BYTES * slabNext++;
}

/**
 * The views of a state's memory. One object literal, so every state's `m` has one shape built
 * at once (adding the views one by one in a loop costs more than creating them); the compiler
 * checks it names exactly the arrays of MEMORY_LAYOUT.
 */
function carve(buffer: ArrayBuffer, start: number): Memory {
  return {
    rng: view(buffer, start, 'rng'),
    balances: view(buffer, start, 'balances'),
    startBalances: view(buffer, start, 'startBalances'),
    fees: view(buffer, start, 'fees'),
    payouts: view(buffer, start, 'payouts'),
    penalties: view(buffer, start, 'penalties'),
    faceUp: view(buffer, start, 'faceUp'),
    deck: view(buffer, start, 'deck'),
    dealtIn: view(buffer, start, 'dealtIn'),
    playing: view(buffer, start, 'playing'),
    declaration: view(buffer, start, 'declaration'),
    bettler: view(buffer, start, 'bettler'),
    quotas: view(buffer, start, 'quotas'),
    tricksWon: view(buffer, start, 'tricksWon'),
    hands: view(buffer, start, 'hands'),
    handLength: view(buffer, start, 'handLength'),
    discardedBy: view(buffer, start, 'discardedBy'),
    discards: view(buffer, start, 'discards'),
    exchanged: view(buffer, start, 'exchanged'),
    trickCards: view(buffer, start, 'trickCards'),
    trickSeats: view(buffer, start, 'trickSeats'),
    playedCards: view(buffer, start, 'playedCards'),
    trickWinners: view(buffer, start, 'trickWinners'),
    legal: view(buffer, start, 'legal'),
    firstResults: view(buffer, start, 'firstResults'),
    firstDecks: view(buffer, start, 'firstDecks'),
    firstActions: view(buffer, start, 'firstActions'),
  };
}

/** The mutable data of a session; field by field what game.ts documents for its accessors. */
export class StateData {
  /** This state's memory: MEMORY_BYTES of a slab (see takeMemory). */
  readonly bytes: Uint8Array;
  readonly m: Memory;

  // ---- session
  seed: number | string | undefined = undefined;
  seeded = false;
  handIndex = -1;
  handsPlayed = 0;
  complete = false;
  overflowed = false;
  isTieBreak = false;
  /** Bit s set for each seat tied for the lead when a tie-break deal began: only they can win [D-11]. */
  tiedSeats = 0;
  pot = 0;
  nextDealIsMuss = false;
  /** How the session started (balances in `m.startBalances`). */
  startDealer = 0;
  startPot = 0;
  startMuss = false;

  // ---- the hand
  phase: Phase = 'over';
  dealer = 0;
  currentSeat = -1;
  kind: HandKind = 'normal';
  trump = -1;
  indicator = -1;
  numFaceUp = 0;
  numDiscards = 0;
  /** Cards discarded by the exchanging player and not yet replaced. */
  pendingExchange = 0;
  talonPosition = 0;
  potBeforePlay = 0;
  trickNumber = 0;
  leader = -1;
  trickLength = 0;
  numPlaying = 0;

  // ---- legal actions, computed once per state
  numLegal = 0;
  legalFresh = false;

  constructor(readonly numPlayers: number) {
    const start = takeMemory();
    this.bytes = new Uint8Array(slab, start, MEMORY_BYTES);
    this.m = carve(slab, start);
  }

  /** Copies every field and the memory of `other` (same game). */
  copyFrom(o: StateData): void {
    this.bytes.set(o.bytes);
    this.seed = o.seed;
    this.seeded = o.seeded;
    this.handIndex = o.handIndex;
    this.handsPlayed = o.handsPlayed;
    this.complete = o.complete;
    this.overflowed = o.overflowed;
    this.isTieBreak = o.isTieBreak;
    this.tiedSeats = o.tiedSeats;
    this.pot = o.pot;
    this.nextDealIsMuss = o.nextDealIsMuss;
    this.startDealer = o.startDealer;
    this.startPot = o.startPot;
    this.startMuss = o.startMuss;
    this.phase = o.phase;
    this.dealer = o.dealer;
    this.currentSeat = o.currentSeat;
    this.kind = o.kind;
    this.trump = o.trump;
    this.indicator = o.indicator;
    this.numFaceUp = o.numFaceUp;
    this.numDiscards = o.numDiscards;
    this.pendingExchange = o.pendingExchange;
    this.talonPosition = o.talonPosition;
    this.potBeforePlay = o.potBeforePlay;
    this.trickNumber = o.trickNumber;
    this.leader = o.leader;
    this.trickLength = o.trickLength;
    this.numPlaying = o.numPlaying;
    this.numLegal = o.numLegal;
    this.legalFresh = o.legalFresh;
  }

  /** The next seat clockwise after `from` whose entry in `set` is non-zero. */
  nextSeatIn(set: Uint8Array, from: number): number {
    const n = this.numPlayers;
    let s = from;
    // A compare rather than % n: an integer division costs more than the rest of the step.
    do s = s + 1 === n ? 0 : s + 1;
    while (!set[s]);
    return s;
  }

  numDealtIn(): number {
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += this.m.dealtIn[s]!;
    return count;
  }

  addToHand(seat: number, card: number): void {
    const { hands, handLength } = this.m;
    hands[seat * HAND_CAPACITY + handLength[seat]!] = card;
    handLength[seat]!++;
  }

  removeFromHand(seat: number, card: number): void {
    const { hands, handLength } = this.m;
    const base = seat * HAND_CAPACITY;
    const length = handLength[seat]!;
    let i = 0;
    while (hands[base + i] !== card) i++;
    for (; i < length - 1; i++) hands[base + i] = hands[base + i + 1]!;
    handLength[seat] = length - 1;
  }

  holds(seat: number, card: number): boolean {
    const { hands, handLength } = this.m;
    const base = seat * HAND_CAPACITY;
    for (let i = 0; i < handLength[seat]!; i++) if (hands[base + i] === card) return true;
    return false;
  }

  /** Clears everything of the hand before a deal. */
  resetHand(): void {
    // Loops, not fill(): on arrays this short the builtin's call costs more than the stores.
    const m = this.m;
    for (let s = 0; s < MAX_SEATS; s++) {
      m.handLength[s] = 0;
      m.playing[s] = 0;
      m.declaration[s] = DECL_NONE;
      m.bettler[s] = 0;
      m.quotas[s] = 0;
      m.tricksWon[s] = 0;
      m.exchanged[s] = 0;
      m.fees[s] = 0;
    }
    for (let c = 0; c < NUM_CARDS; c++) m.discardedBy[c] = -1;
    for (let i = 0; i < MAX_TRICKS * MAX_SEATS; i++) m.playedCards[i] = -1;
    for (let t = 0; t < MAX_TRICKS; t++) m.trickWinners[t] = -1;
    this.numDiscards = 0;
    this.trickLength = 0;
    this.trickNumber = 0;
    this.pendingExchange = 0;
    this.numFaceUp = 0;
    this.indicator = -1;
    this.trump = -1;
    this.potBeforePlay = 0;
  }
}
