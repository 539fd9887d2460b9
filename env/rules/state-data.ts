// The data of one session, which only the rules core reads and writes (state-reader.ts exposes
// it read only; SeatView shows one seat its part). Every fixed-size array lives in one block of memory laid
// out by `Mem` below, so a state is a few contiguous cache lines rather than a score of
// scattered allocations (it matters when a vector env steps thousands in turn), and a clone is
// one buffer copy. Nothing outside env/rules/ imports this module.

import { NUM_CARDS } from './cards.js';
import { NUM_ACTIONS } from './actions.js';
import type { HandKind, Phase } from './phases.js';
import { DECL_NONE, HAND_CAPACITY, MAX_SEATS, MAX_TRICKS, nextSeatWith } from './sizes.js';
import { RESULT_STRIDE } from './results.js';

/** Hands and actions the first rooms of a session's results and log hold (results.ts, history.ts). */
const FIRST_HANDS = 4;
const FIRST_ACTIONS = 128;

/**
 * Where every array of a state lives in its block of memory, in elements of the view its group
 * names (`f64`, `i16`, or the byte views `i8` / `u8`, which share indices). A const enum, so each
 * offset compiles to a number at its use. The block is read through those four views only: a
 * view per array (27 per state) made every state ~35 heap objects, which a vector env of 1024
 * tables stepped through out of cache, and which a young-generation GC copied one by one.
 */
export const enum Mem {
  // ---- f64: element index (the block starts with them, 8-byte aligned)
  /** Alea's four doubles (alea.ts reads f64[rng .. rng + 4)). */
  rng = 0,
  /** Balances in units, per seat. */
  balances = rng + 4,
  /** Balances when the session started. */
  startBalances = balances + MAX_SEATS,
  /** Exchange fees paid this hand, per seat. */
  fees = startBalances + MAX_SEATS,
  f64End = fees + MAX_SEATS,

  // ---- i16: element index
  /** The legal actions of the current state, in the engine's order. */
  legal = f64End * 4,
  /** The first room of the session's action log (history.ts): 128 actions. */
  firstActions = legal + NUM_ACTIONS,
  i16End = firstActions + FIRST_ACTIONS,

  // ---- bytes (i8 / u8): byte index. First the public table, in SeatView's order: seatView
  // copies it whole, a 4-byte word at a time (`i32`), so it starts on a word (checked in tests).
  /** Face-up cards everybody saw: didactic4's indicator(s), tavern5's turned card (i8). */
  faceUp = i16End * 2,
  /** The trick in progress: cards and who played them (i8). */
  trickCards = faceUp + 2,
  trickSeats = trickCards + MAX_SEATS,
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none (i8). */
  playedCards = trickSeats + MAX_SEATS,
  /** Winner of each finished trick, -1 when none (i8). */
  trickWinners = playedCards + MAX_TRICKS * MAX_SEATS,
  /** Per seat (u8): DECL_* codes, cards exchanged, tricks won, quota, dealt in (1), playing (1). */
  declaration = trickWinners + MAX_TRICKS,
  exchanged = declaration + MAX_SEATS,
  tricksWon = exchanged + MAX_SEATS,
  quotas = tricksWon + MAX_SEATS,
  dealtIn = quotas + MAX_SEATS,
  playing = dealtIn + MAX_SEATS,
  publicEnd = playing + MAX_SEATS,
  /** The public table's length in bytes, rounded up to whole words. */
  publicBytes = ((publicEnd - faceUp + 3) >> 2) << 2,

  // ---- bytes the seats do not all see
  /** The deck of the hand, top first (i8). */
  deck = faceUp + publicBytes,
  /** Bettler declared, per seat (u8). */
  bettler = deck + NUM_CARDS,
  /** Each seat's cards, HAND_CAPACITY per seat (i8), and how many (u8). */
  hands = bettler + MAX_SEATS,
  handLength = hands + MAX_SEATS * HAND_CAPACITY,
  /** Which seat discarded each card this hand (-1: none); only that seat may ever see it (i8). */
  discardedBy = handLength + MAX_SEATS,
  /** The cards discarded this hand, in order (`discardedBy` says whose): a short list to scan (i8). */
  discards = discardedBy + NUM_CARDS,
  /** The first room of the action log's decks (history.ts): 4 hands (i8). */
  firstDecks = discards + NUM_CARDS,
  bytesEnd = firstDecks + FIRST_HANDS * NUM_CARDS,

  // ---- f64 again, read once a hand: the first room of the results (results.ts), 4 hands
  firstResults = (bytesEnd + 7) >> 3,
  /** The block's size in bytes. */
  blockBytes = (firstResults + FIRST_HANDS * RESULT_STRIDE) * 8,
}

// States take their memory from slabs of SLAB_STATES states rather than an ArrayBuffer each: a
// buffer's allocation (off-heap, tracked by the garbage collector) cost more here than creating
// all of a state's views, and search and random play create a state per session or sample. A
// slab lives while any of its states does, so a long-lived state keeps at most SLAB_STATES - 1
// dead states' memory (~1.4 KB each) with it. Regions are handed out once, never reused, so a new
// state's memory is zero as a fresh buffer's would be.
const SLAB_STATES = 16;
let slab = new ArrayBuffer(0);
let slabNext = SLAB_STATES;

/** The offset of a new state's memory in `slab` (a new slab when the last one is used up). */
function takeMemory(): number {
  if (slabNext === SLAB_STATES) {
    slab = new ArrayBuffer(SLAB_STATES * Mem.blockBytes);
    slabNext = 0;
  }
  return Mem.blockBytes * slabNext++;
}

/** Copies a per-seat array of a block (MAX_SEATS entries of `from` at `at`) into `to`. */
export function copySeats<T extends Uint8Array | Float64Array>(from: T, at: Mem, to: T): void {
  for (let s = 0; s < MAX_SEATS; s++) to[s] = from[at + s]!;
}

/** The mutable data of a session; field by field what state-reader.ts documents for its accessors. */
export class StateData {
  /** This state's memory (Mem.blockBytes of a slab, see takeMemory), through the views of its element types. */
  readonly f64: Float64Array;
  readonly i16: Int16Array;
  readonly i8: Int8Array;
  readonly u8: Uint8Array;
  /** Whole words of the block, for copying the public table (seat-view.ts). */
  readonly i32: Int32Array;

  // ---- session
  seed: number | string | undefined = undefined;
  seeded = false;
  /** Seeded, with no decks and no start given: the seed alone deals the session again. */
  seedAlone = false;
  handIndex = -1;
  handsPlayed = 0;
  complete = false;
  overflowed = false;
  isTieBreak = false;
  /** Bit s set for each seat tied for the lead when a tie-break deal began: only they can win [D-11]. */
  tiedSeats = 0;
  pot = 0;
  nextDealIsMuss = false;
  /** How the session started (balances at Mem.startBalances). */
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

  /**
   * The public table (the bytes from Mem.faceUp, Mem.publicBytes of them, signed and unsigned)
   * and the balances as views of their own, made at first use (`makePublicViews`): what a
   * LiveSeatView reads in place (seat-view.ts), and nothing else of the block. Plain fields, not
   * a getter: the encoder reads them for every row.
   */
  publicBytes: Int8Array | null = null;
  publicUbytes: Uint8Array | null = null;
  publicBalances: Float64Array | null = null;

  makePublicViews(): void {
    const at = this.u8.byteOffset + Mem.faceUp;
    this.publicBytes = new Int8Array(this.u8.buffer, at, Mem.publicBytes);
    this.publicUbytes = new Uint8Array(this.u8.buffer, at, Mem.publicBytes);
    this.publicBalances = new Float64Array(this.f64.buffer, this.f64.byteOffset + Mem.balances * 8, MAX_SEATS);
  }

  constructor(readonly numPlayers: number) {
    const start = takeMemory();
    this.f64 = new Float64Array(slab, start, Mem.blockBytes >> 3);
    this.i16 = new Int16Array(slab, start, Mem.blockBytes >> 1);
    this.i8 = new Int8Array(slab, start, Mem.blockBytes);
    this.u8 = new Uint8Array(slab, start, Mem.blockBytes);
    this.i32 = new Int32Array(slab, start, Mem.blockBytes >> 2);
  }

  /** Copies every field and the memory of `other` (same game). */
  copyFrom(o: StateData): void {
    this.u8.set(o.u8);
    this.seed = o.seed;
    this.seeded = o.seeded;
    this.seedAlone = o.seedAlone;
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

  /** The next seat clockwise after `from` whose entry in the per-seat u8 array at `set` (Mem.dealtIn, Mem.playing) is non-zero. */
  nextSeatIn(set: Mem, from: number): number {
    return nextSeatWith(this.u8, set, from, this.numPlayers);
  }

  /** Deals every seat of the table in (a tavern5 tie-break deal deals in only some). */
  dealInEverybody(): void {
    for (let s = 0; s < MAX_SEATS; s++) this.u8[Mem.dealtIn + s] = s < this.numPlayers ? 1 : 0;
  }

  numDealtIn(): number {
    let count = 0;
    for (let s = 0; s < this.numPlayers; s++) count += this.u8[Mem.dealtIn + s]!;
    return count;
  }

  addToHand(seat: number, card: number): void {
    const length = this.u8[Mem.handLength + seat]!;
    this.i8[Mem.hands + seat * HAND_CAPACITY + length] = card;
    this.u8[Mem.handLength + seat] = length + 1;
  }

  removeFromHand(seat: number, card: number): void {
    const i8 = this.i8;
    const base = Mem.hands + seat * HAND_CAPACITY;
    const length = this.u8[Mem.handLength + seat]!;
    let i = 0;
    while (i8[base + i] !== card) i++;
    for (; i < length - 1; i++) i8[base + i] = i8[base + i + 1]!;
    this.u8[Mem.handLength + seat] = length - 1;
  }

  holds(seat: number, card: number): boolean {
    const base = Mem.hands + seat * HAND_CAPACITY;
    const length = this.u8[Mem.handLength + seat]!;
    for (let i = 0; i < length; i++) if (this.i8[base + i] === card) return true;
    return false;
  }

  /** Clears everything of the hand before a deal. */
  resetHand(): void {
    // Loops, not fill(): on arrays this short the builtin's call costs more than the stores.
    const { u8, i8, f64 } = this;
    for (let s = 0; s < MAX_SEATS; s++) {
      u8[Mem.handLength + s] = 0;
      u8[Mem.playing + s] = 0;
      u8[Mem.declaration + s] = DECL_NONE;
      u8[Mem.bettler + s] = 0;
      u8[Mem.quotas + s] = 0;
      u8[Mem.tricksWon + s] = 0;
      u8[Mem.exchanged + s] = 0;
      f64[Mem.fees + s] = 0;
    }
    for (let c = 0; c < NUM_CARDS; c++) i8[Mem.discardedBy + c] = -1;
    for (let i = 0; i < MAX_TRICKS * MAX_SEATS; i++) i8[Mem.playedCards + i] = -1;
    for (let t = 0; t < MAX_TRICKS; t++) i8[Mem.trickWinners + t] = -1;
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
