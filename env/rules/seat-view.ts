// What one seat may see, in one place: its own hand and discards, and the public table (face-up
// cards, trump, every card played and by whom, declarations, exchange counts, tricks, quotas,
// the ledger, the session's progress and the rule set). The observation encoder, the structured
// views, the bridge's table and the hidden-card sampler all read a seat's information from here,
// never from the state. Other hands, the talon and undealt cards, and other seats' discards
// never enter a SeatView.
//
// A SeatView is filled in place (`seatView(state, seat, view)`), so the encoder allocates
// nothing. It is a copy: the seat's own cards, and the public table copied from the state's
// block in whole words, so it stays valid when the state moves on. A LiveSeatView
// (`liveSeatView`) holds the same except the public table, which it reads in place through views
// of just that part of the state's block: valid only until the state changes, for the
// observation encoder, which reads it at once (copying the table was an eighth of a vector env's
// step).

import { NUM_CARDS } from './cards.js';
import type { KratzenState } from './game.js';
import type { KratzenGame } from './kratzen-game.js';
import { internals } from './internal.js';
import { Mem, type StateData } from './state-data.js';
import type { HandKind, Phase } from './phases.js';
import type { RuleSet } from './ruleset.js';
import { HAND_CAPACITY, MAX_SEATS, MAX_TRICKS } from './sizes.js';
import type { StateReader } from './state-reader.js';

/** What every view of a seat holds besides the public table: scalars, and the seat's own cards. */
export abstract class SeatFacts {
  game!: KratzenGame;
  rules!: RuleSet;
  numPlayers = 0;
  /** The seat this view belongs to. */
  seat = 0;
  phase: Phase = 'over';
  kind: HandKind = 'normal';
  dealer = 0;
  /** The seat to act, -1 when none. */
  toAct = -1;
  /** Trump suit 0..3; -1 while a named trump is pending. */
  trump = -1;
  /** Tricks finished this hand. */
  trickNumber = 0;
  /** The leader of the trick in progress. */
  leader = -1;
  /** Cards in the trick in progress (`trickCards` / `trickSeats`). */
  trickLength = 0;
  numPlaying = 0;
  /** tavern5 talon cards not drawn yet (0 in didactic4). */
  talonLeft = 0;
  /** Amounts in units (`game.unitsPerChip` a chip). */
  pot = 0;
  potBeforePlay = 0;
  handsPlayed = 0;
  isTieBreak = false;

  /** The seat's cards, `handLength` of them (a copy). */
  readonly hand = new Int8Array(HAND_CAPACITY);
  handLength = 0;
  /** The cards the seat discarded this hand, in order (a copy). */
  readonly ownDiscards = new Int8Array(NUM_CARDS);
  numOwnDiscards = 0;
  numFaceUp = 0;
}

/** A seat's view with its own copy of the public table: valid for as long as it is kept. */
export class SeatView extends SeatFacts {
  // The public table. seatView points these at the view's own copy (below); decodeSeatView may
  // put plain arrays here.
  faceUp: ArrayLike<number> = [];
  trickCards: ArrayLike<number> = [];
  trickSeats: ArrayLike<number> = [];
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  playedCards: ArrayLike<number> = [];
  trickWinners: ArrayLike<number> = [];
  /** Per seat: DECL_* codes, cards exchanged, tricks won, quota, dealt in (1), playing (1), balance in units. */
  declaration: ArrayLike<number> = [];
  exchanged: ArrayLike<number> = [];
  tricksWon: ArrayLike<number> = [];
  quotas: ArrayLike<number> = [];
  dealtIn: ArrayLike<number> = [];
  playing: ArrayLike<number> = [];
  balances: ArrayLike<number> = [];

  /** seatView's copy of the public table, made at its first use (decoded views never need one). */
  private tableCopy: TableCopy | null = null;

  /**
   * Copies the public table of `d`'s block into this view and points the public fields at the
   * copy (seatView's part; `d` is a state's data, which only the rules core holds).
   * @internal
   */
  copyTable(d: StateData): void {
    const copy = (this.tableCopy ??= new TableCopy());
    const words = copy.words;
    const i32 = d.i32;
    for (let w = 0; w < Mem.publicBytes >> 2; w++) words[w] = i32[(Mem.faceUp >> 2) + w]!;
    const balances = copy.balances;
    for (let s = 0; s < MAX_SEATS; s++) balances[s] = d.f64[Mem.balances + s]!;
    this.faceUp = copy.faceUp;
    this.trickCards = copy.trickCards;
    this.trickSeats = copy.trickSeats;
    this.playedCards = copy.playedCards;
    this.trickWinners = copy.trickWinners;
    this.declaration = copy.declaration;
    this.exchanged = copy.exchanged;
    this.tricksWon = copy.tricksWon;
    this.quotas = copy.quotas;
    this.dealtIn = copy.dealtIn;
    this.playing = copy.playing;
    this.balances = balances;
  }
}

/**
 * Where each array of the public table starts within it: in a LiveSeatView's `bytes` / `ubytes`
 * and in a SeatView's copy (`balances`: in a LiveSeatView's `units`). Each array is laid out as
 * the SeatView field of the same name documents.
 */
export const enum TableAt {
  faceUp = Mem.faceUp - Mem.faceUp,
  trickCards = Mem.trickCards - Mem.faceUp,
  trickSeats = Mem.trickSeats - Mem.faceUp,
  playedCards = Mem.playedCards - Mem.faceUp,
  trickWinners = Mem.trickWinners - Mem.faceUp,
  declaration = Mem.declaration - Mem.faceUp,
  exchanged = Mem.exchanged - Mem.faceUp,
  tricksWon = Mem.tricksWon - Mem.faceUp,
  quotas = Mem.quotas - Mem.faceUp,
  dealtIn = Mem.dealtIn - Mem.faceUp,
  playing = Mem.playing - Mem.faceUp,
  balances = 0,
}

/** A copy of a state's public bytes (its arrays at their TableAt offsets), with a view of each array, and the balances. */
class TableCopy {
  readonly words = new Int32Array(Mem.publicBytes >> 2);
  private readonly buffer = this.words.buffer as ArrayBuffer;
  readonly faceUp = this.bytes(Int8Array, TableAt.faceUp, 2);
  readonly trickCards = this.bytes(Int8Array, TableAt.trickCards, MAX_SEATS);
  readonly trickSeats = this.bytes(Int8Array, TableAt.trickSeats, MAX_SEATS);
  readonly playedCards = this.bytes(Int8Array, TableAt.playedCards, MAX_TRICKS * MAX_SEATS);
  readonly trickWinners = this.bytes(Int8Array, TableAt.trickWinners, MAX_TRICKS);
  readonly declaration = this.bytes(Uint8Array, TableAt.declaration, MAX_SEATS);
  readonly exchanged = this.bytes(Uint8Array, TableAt.exchanged, MAX_SEATS);
  readonly tricksWon = this.bytes(Uint8Array, TableAt.tricksWon, MAX_SEATS);
  readonly quotas = this.bytes(Uint8Array, TableAt.quotas, MAX_SEATS);
  readonly dealtIn = this.bytes(Uint8Array, TableAt.dealtIn, MAX_SEATS);
  readonly playing = this.bytes(Uint8Array, TableAt.playing, MAX_SEATS);
  readonly balances = new Float64Array(MAX_SEATS);

  private bytes<T extends Int8Array | Uint8Array>(Kind: new (buffer: ArrayBuffer, offset: number, length: number) => T, at: TableAt, length: number): T {
    return new Kind(this.buffer, at, length);
  }
}
/**
 * A seat's view that reads the public table in place: `bytes` / `ubytes` are views of the
 * state's public table alone (signed and unsigned reads of the same bytes), its arrays at the
 * offsets `TableAt` names; `units` the balances. Valid only until the state changes. Its fields
 * mean what SeatView's do.
 */
export class LiveSeatView extends SeatFacts {
  bytes: Int8Array = new Int8Array(0);
  ubytes: Uint8Array = new Uint8Array(0);
  units: Float64Array = new Float64Array(0);
}


/** Fills `into` (or a new SeatView) with what `seat` may see of `state` now. */
export function seatView(state: StateReader, seat: number, into: SeatView = new SeatView()): SeatView {
  const d = internals(state);
  fillFacts(state, d, seat, into);
  into.copyTable(d);
  return into;
}

/** Fills `into` with what `seat` may see of `state` now, the public table read in place (see LiveSeatView). */
export function liveSeatView(state: StateReader, seat: number, into: LiveSeatView): LiveSeatView {
  const d = internals(state);
  fillFacts(state, d, seat, into);
  if (d.publicBytes === null) d.makePublicViews();
  into.bytes = d.publicBytes!;
  into.ubytes = d.publicUbytes!;
  into.units = d.publicBalances!;
  return into;
}

/** The scalars and `seat`'s own cards: the part both kinds of view copy. */
function fillFacts(state: StateReader, d: StateData, seat: number, v: SeatFacts): void {
  state.assertSeat(seat);
  const { i8, u8 } = d;
  v.game = state.game;
  v.rules = state.rules;
  v.numPlayers = d.numPlayers;
  v.seat = seat;
  v.phase = d.phase;
  v.kind = d.kind;
  v.dealer = d.dealer;
  v.toAct = d.currentSeat;
  v.trump = d.trump;
  v.trickNumber = d.trickNumber;
  v.leader = d.leader;
  v.trickLength = d.trickLength;
  v.numPlaying = d.numPlaying;
  v.talonLeft = state.talonLeft;
  v.pot = d.pot;
  v.potBeforePlay = d.potBeforePlay;
  v.handsPlayed = d.handsPlayed;
  v.isTieBreak = d.isTieBreak;
  const length = u8[Mem.handLength + seat]!;
  const base = Mem.hands + seat * HAND_CAPACITY;
  for (let i = 0; i < length; i++) v.hand[i] = i8[base + i]!;
  v.handLength = length;
  let own = 0;
  for (let j = 0; j < d.numDiscards; j++) {
    const card = i8[Mem.discards + j]!;
    if (i8[Mem.discardedBy + card] === seat) v.ownDiscards[own++] = card;
  }
  v.numOwnDiscards = own;
  v.numFaceUp = d.numFaceUp;
}
