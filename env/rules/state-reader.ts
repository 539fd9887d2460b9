// What anyone may read of a session, and nothing to change it: the accessors, the legal actions
// and why an action is not legal. KratzenState (game.ts) adds the transitions. The data itself
// stays in the rules core: other layers read one seat's part through SeatView.

import { NUM_CARDS } from './cards.js';
import { ACTION_BETTLER, ACTION_DISCARD, ACTION_DONE, ACTION_IN, ACTION_OUT, ACTION_TRUMP, NUM_ACTIONS } from './actions.js';
import type { RuleSet } from './ruleset.js';
import { legalPlayBits } from './trick.js';
import { Mem, StateData } from './state-data.js';
import { HAND_CAPACITY, MAX_SEATS, MAX_TRICKS } from './sizes.js';
import { ResultStore, type HandResult } from './results.js';
import { SessionLog, type HandLog } from './history.js';
import { illegalReason } from './illegal.js';
import type { HandKind, Phase } from './phases.js';
import type { KratzenGame } from './kratzen-game.js';

/** The key under which a state keeps its data, for the rules core's own modules (internal.ts). */
export const STATE_DATA = Symbol('kratzen state data');

export abstract class StateReader {
  readonly game: KratzenGame;
  readonly rules: RuleSet;
  readonly numPlayers: number;
  protected readonly d: StateData;
  protected readonly resultStore: ResultStore;
  protected readonly log: SessionLog;
  /**
   * Views of single arrays for the accessors below, made on first use: the hot paths index the
   * block, and a state that nobody asks for them allocates none.
   */
  private publicViews: PublicViews | null = null;

  constructor(game: KratzenGame) {
    this.game = game;
    this.rules = game.rules;
    this.numPlayers = game.numPlayers;
    this.d = new StateData(game.numPlayers);
    const { f64, i8, i16 } = this.d;
    this.resultStore = new ResultStore(game.numPlayers, f64.subarray(Mem.firstResults, Mem.blockBytes >> 3));
    this.log = new SessionLog(i8.subarray(Mem.firstDecks, Mem.bytesEnd), i16.subarray(Mem.firstActions, Mem.i16End));
  }

  /** The rules core's own view of the data (internal.ts); no other layer reads it. */
  get [STATE_DATA](): StateData {
    return this.d;
  }

  get seed(): number | string | undefined { return this.d.seed; }
  /** Whether `newState({ seed })` deals this session again: seeded, and given no decks and no start. */
  get dealtFromSeedAlone(): boolean { return this.d.seedAlone; }
  get phase(): Phase { return this.d.phase; }
  get isTerminal(): boolean { return this.d.phase === 'over'; }
  /** The session ended by its rules. */
  get complete(): boolean { return this.d.complete; }
  /** The session stopped with an `amount overflow` (never a rounded amount). */
  get overflowed(): boolean { return this.d.overflowed; }
  /** Index of the hand being played (or of the next one once the session is over). */
  get handIndex(): number { return this.d.handIndex; }
  /** Regular hands finished (a tavern5 tie-break deal does not count). */
  get handsPlayed(): number { return this.d.handsPlayed; }
  get isTieBreak(): boolean { return this.d.isTieBreak; }
  get dealer(): number { return this.d.dealer; }
  /** The seat to act, -1 when none. */
  get currentSeat(): number { return this.d.currentSeat; }
  get kind(): HandKind { return this.d.kind; }
  /** Trump suit 0..3, -1 while a named trump is pending. */
  get trump(): number { return this.d.trump; }
  /** The card whose suit set trump, -1 when none (yet). */
  get indicator(): number { return this.d.indicator; }
  /** The pot in units. */
  get pot(): number { return this.d.pot; }
  /** P, the pot just before play, in units (0 before play). */
  get potBeforePlay(): number { return this.d.potBeforePlay; }
  /** Balances in units, by seat. */
  get balances(): ArrayLike<number> { return this.views().balances; }
  /** One seat's balance in units (allocates nothing). */
  balance(seat: number): number { return this.d.f64[Mem.balances + seat]!; }
  /** How the session started, amounts in units (built on each read: a restart allocates nothing). */
  get startInfo(): Readonly<{ dealer: number; pot: number; balances: readonly number[]; muss: boolean }> {
    const d = this.d;
    const balances: number[] = [];
    for (let s = 0; s < d.numPlayers; s++) balances.push(d.f64[Mem.startBalances + s]!);
    return Object.freeze({ dealer: d.startDealer, pot: d.startPot, balances: Object.freeze(balances), muss: d.startMuss });
  }
  /** Tricks finished this hand. */
  get trickNumber(): number { return this.d.trickNumber; }
  get leader(): number { return this.d.leader; }
  get trickLength(): number { return this.d.trickLength; }
  get numPlaying(): number { return this.d.numPlaying; }
  /** tavern5: talon cards not yet drawn. */
  get talonLeft(): number { return this.game.profile.hasTalon ? NUM_CARDS - this.d.talonPosition : 0; }
  get numFaceUp(): number { return this.d.numFaceUp; }
  get faceUp(): ArrayLike<number> { return this.views().faceUp; }
  get tricksWon(): ArrayLike<number> { return this.views().tricksWon; }
  get quotas(): ArrayLike<number> { return this.views().quotas; }
  get dealtIn(): ArrayLike<number> { return this.views().dealtIn; }
  get playing(): ArrayLike<number> { return this.views().playing; }
  /** DECL_NONE, DECL_OUT, DECL_IN or DECL_BETTLER by seat. */
  get declaration(): ArrayLike<number> { return this.views().declaration; }
  get exchanged(): ArrayLike<number> { return this.views().exchanged; }
  get trickCards(): ArrayLike<number> { return this.views().trickCards; }
  get trickSeats(): ArrayLike<number> { return this.views().trickSeats; }
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  get playedCards(): ArrayLike<number> { return this.views().playedCards; }
  get trickWinners(): ArrayLike<number> { return this.views().trickWinners; }
  /** Hands finished this session (a tavern5 tie-break deal counts): `results.length`, cheaply. */
  get numResults(): number { return this.resultStore.count; }
  /** The session's finished hands; `restart` begins a new array (an old one stays valid). */
  get results(): readonly HandResult[] { return this.resultStore.all(); }
  /** results[h] alone: a long session's page of hands need not build them all. */
  resultOf(h: number): HandResult { return this.resultStore.one(h); }

  /**
   * Throws a RangeError naming `field` unless `seat` is a seat at this table: a seat index off
   * the table read other memory of the state block (the deck lies just before the hands).
   */
  assertSeat(seat: number, field = 'seat'): void {
    if (!Number.isInteger(seat) || seat < 0 || seat >= this.d.numPlayers) {
      throw new RangeError(`${field} must be a seat 0..${this.d.numPlayers - 1}, got ${typeof seat === 'number' ? seat : JSON.stringify(seat)?.slice(0, 40)}`);
    }
  }

  /** The cards `seat` holds (any seat: other layers see only their own, through SeatView). */
  handOf(seat: number): number[] {
    this.assertSeat(seat);
    const start = Mem.hands + seat * HAND_CAPACITY;
    return Array.from(this.d.i8.subarray(start, start + this.d.u8[Mem.handLength + seat]!));
  }

  /** The cards `seat` discarded this hand, in order. */
  discardsOf(seat: number): number[] {
    this.assertSeat(seat);
    const i8 = this.d.i8;
    return Array.from(i8.subarray(Mem.discards, Mem.discards + this.d.numDiscards)).filter((c) => i8[Mem.discardedBy + c] === seat);
  }

  /** Stack = startingChips + balance, in units (tavern5); the balance alone without startingChips. */
  stack(seat: number): number {
    return this.game.startingUnits + this.d.f64[Mem.balances + seat]!;
  }

  /**
   * Seats with the highest balance once the session is complete, empty before; after a tavern5
   * tie-break deal only the tied players are candidates [D-11].
   */
  winners(): number[] {
    const d = this.d;
    if (!d.complete) return [];
    const candidates: number[] = [];
    for (let s = 0; s < this.numPlayers; s++) if (d.tiedSeats === 0 || d.tiedSeats & (1 << s)) candidates.push(s);
    const best = Math.max(...candidates.map((s) => this.balance(s)));
    return candidates.filter((s) => this.balance(s) === best);
  }

  /** Decks and actions of every hand started so far: the raw material of a record. */
  handLogs(): HandLog[] {
    return this.log.hands();
  }

  /** Hands started (dealt) so far: the length of handLogs(). */
  get numHandsStarted(): number { return this.log.numHands; }

  /** handLogs()[h] alone: a long session's replay reads a hand at a time. */
  handLog(h: number): HandLog {
    if (!Number.isInteger(h) || h < 0 || h >= this.log.numHands) throw new RangeError(`hand must be 0..${this.log.numHands - 1}, got ${h}`);
    return this.log.hand(h);
  }

  // ======================= legal actions =======================

  /** Legal actions as action ids, ascending. */
  legalActions(): number[] {
    this.refreshLegal();
    return Array.from(this.d.i16.subarray(Mem.legal, Mem.legal + this.d.numLegal)).sort((a, b) => a - b);
  }

  /** Writes 1 for each legal action into `out` (length NUM_ACTIONS), 0 elsewhere. */
  legalActionMask(out: Uint8Array, offset = 0): Uint8Array {
    // A fractional offset wrote nothing (and returned an all-zero mask); '74' was added as text.
    if (!(out instanceof Uint8Array)) throw new TypeError(`a mask is a Uint8Array, got ${out === null ? 'null' : typeof out}`);
    if (!(Number.isSafeInteger(offset) && offset >= 0 && offset + NUM_ACTIONS <= out.length)) {
      throw new RangeError(`a mask needs ${NUM_ACTIONS} entries from offset ${String(offset).slice(0, 20)} (a whole number); the buffer holds ${out.length}`);
    }
    this.refreshLegal();
    out.fill(0, offset, offset + NUM_ACTIONS);
    const i16 = this.d.i16;
    for (let i = 0; i < this.d.numLegal; i++) out[offset + i16[Mem.legal + i]!] = 1;
    return out;
  }

  numLegalActions(): number {
    this.refreshLegal();
    return this.d.numLegal;
  }

  /** The i-th legal action in the engine's internal order (for fast uniform sampling). */
  legalActionAt(i: number): number {
    this.refreshLegal();
    return this.d.i16[Mem.legal + i]!;
  }

  isLegal(action: number): boolean {
    this.refreshLegal();
    const i16 = this.d.i16;
    for (let i = 0; i < this.d.numLegal; i++) if (i16[Mem.legal + i] === action) return true;
    return false;
  }

  /** Why `action` is illegal for the seat to act (or `seat`, if given), without throwing; null when it is legal. */
  explainIllegal(action: number, seat = this.d.currentSeat): string | null {
    // A seat off the table (99, "1") was answered as if it were another seat's turn.
    if (seat !== this.d.currentSeat) this.assertSeat(seat);
    if (seat !== this.d.currentSeat) {
      return this.d.phase === 'over' ? 'the session is over' : `it is seat ${this.d.currentSeat}'s turn, not seat ${seat}'s`;
    }
    return this.isLegal(action) ? null : illegalReason(this.game, this.d, action);
  }

  private refreshLegal(): void {
    const d = this.d;
    if (d.legalFresh) return;
    d.legalFresh = true;
    const { i16, i8 } = d;
    let count = Mem.legal;
    const seat = d.currentSeat;
    const base = Mem.hands + seat * HAND_CAPACITY;
    const handLength = d.u8[Mem.handLength + seat]!;
    switch (d.phase) {
      case 'trump':
        for (let s = 0; s < 4; s++) i16[count++] = ACTION_TRUMP + s;
        break;
      case 'discard':
        for (let i = 0; i < handLength; i++) i16[count++] = ACTION_DISCARD + i8[base + i]!;
        break;
      case 'declare':
        i16[count++] = ACTION_IN;
        i16[count++] = ACTION_OUT;
        if (this.rules.bettler) i16[count++] = ACTION_BETTLER;
        break;
      case 'exchange':
        // Discards are replaced only at `done`, so the talon must still hold one more card.
        if (d.pendingExchange < this.rules.exchange!.maxCards && d.pendingExchange < NUM_CARDS - d.talonPosition) {
          for (let i = 0; i < handLength; i++) i16[count++] = ACTION_DISCARD + i8[base + i]!;
        }
        i16[count++] = ACTION_DONE;
        break;
      case 'play': {
        const bits = legalPlayBits(i8, base, handLength, i8, d.trickLength, d.trump, this.rules.weliRank === 'highest', this.game.profile.mustHead, Mem.trickCards);
        for (let i = 0; i < handLength; i++) if (bits & (1 << i)) i16[count++] = i8[base + i]!;
        break;
      }
      case 'deal':
      case 'over':
        break;
    }
    d.numLegal = count - Mem.legal;
  }

  private views(): PublicViews {
    if (this.publicViews) return this.publicViews;
    const { f64, i8, u8 } = this.d;
    const bytes = <T extends Int8Array | Uint8Array>(view: T, at: number, length: number) => view.subarray(at, at + length) as T;
    return (this.publicViews = {
      balances: f64.subarray(Mem.balances, Mem.balances + this.numPlayers),
      faceUp: bytes(i8, Mem.faceUp, 2),
      tricksWon: bytes(u8, Mem.tricksWon, MAX_SEATS),
      quotas: bytes(u8, Mem.quotas, MAX_SEATS),
      dealtIn: bytes(u8, Mem.dealtIn, MAX_SEATS),
      playing: bytes(u8, Mem.playing, MAX_SEATS),
      declaration: bytes(u8, Mem.declaration, MAX_SEATS),
      exchanged: bytes(u8, Mem.exchanged, MAX_SEATS),
      trickCards: bytes(i8, Mem.trickCards, MAX_SEATS),
      trickSeats: bytes(i8, Mem.trickSeats, MAX_SEATS),
      playedCards: bytes(i8, Mem.playedCards, MAX_TRICKS * MAX_SEATS),
      trickWinners: bytes(i8, Mem.trickWinners, MAX_TRICKS),
    });
  }
}

/** The accessors' views of single arrays of a state's block. */
interface PublicViews {
  balances: Float64Array;
  faceUp: Int8Array;
  tricksWon: Uint8Array;
  quotas: Uint8Array;
  dealtIn: Uint8Array;
  playing: Uint8Array;
  declaration: Uint8Array;
  exchanged: Uint8Array;
  trickCards: Int8Array;
  trickSeats: Int8Array;
  playedCards: Int8Array;
  trickWinners: Int8Array;
}
