// What anyone may read of a session, and nothing to change it: the accessors, the legal actions
// and why an action is not legal. KratzenState (game.ts) adds the transitions. The data itself
// stays in the rules core: other layers read one seat's part through SeatView.

import { NUM_CARDS } from './cards.js';
import { ACTION_BETTLER, ACTION_DISCARD, ACTION_DONE, ACTION_IN, ACTION_OUT, ACTION_TRUMP, NUM_ACTIONS } from './actions.js';
import type { RuleSet } from './ruleset.js';
import { legalPlayBits } from './trick.js';
import { StateData } from './state-data.js';
import { HAND_CAPACITY } from './sizes.js';
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
  protected readonly balancesView: Float64Array;
  protected readonly resultStore: ResultStore;
  protected readonly log: SessionLog;

  constructor(game: KratzenGame) {
    this.game = game;
    this.rules = game.rules;
    this.numPlayers = game.numPlayers;
    this.d = new StateData(game.numPlayers);
    this.balancesView = this.d.m.balances.subarray(0, game.numPlayers);
    this.resultStore = new ResultStore(game.numPlayers, this.d.m.firstResults);
    this.log = new SessionLog(this.d.m.firstDecks, this.d.m.firstActions);
  }

  /** The rules core's own view of the data (internal.ts); no other layer reads it. */
  get [STATE_DATA](): StateData {
    return this.d;
  }

  get seed(): number | string | undefined { return this.d.seed; }
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
  get balances(): ArrayLike<number> { return this.balancesView; }
  balance(seat: number): number { return this.d.m.balances[seat]!; }
  /** How the session started, amounts in units (built on each read: a restart allocates nothing). */
  get startInfo(): Readonly<{ dealer: number; pot: number; balances: readonly number[]; muss: boolean }> {
    const d = this.d;
    const balances: number[] = [];
    for (let s = 0; s < d.numPlayers; s++) balances.push(d.m.startBalances[s]!);
    return Object.freeze({ dealer: d.startDealer, pot: d.startPot, balances: Object.freeze(balances), muss: d.startMuss });
  }
  /** Tricks finished this hand. */
  get trickNumber(): number { return this.d.trickNumber; }
  get leader(): number { return this.d.leader; }
  get trickLength(): number { return this.d.trickLength; }
  get numPlaying(): number { return this.d.numPlaying; }
  /** tavern5: talon cards not yet drawn. */
  get talonLeft(): number { return this.rules.profile === 'tavern5' ? NUM_CARDS - this.d.talonPosition : 0; }
  get numFaceUp(): number { return this.d.numFaceUp; }
  get faceUp(): ArrayLike<number> { return this.d.m.faceUp; }
  get tricksWon(): ArrayLike<number> { return this.d.m.tricksWon; }
  get quotas(): ArrayLike<number> { return this.d.m.quotas; }
  get dealtIn(): ArrayLike<number> { return this.d.m.dealtIn; }
  get playing(): ArrayLike<number> { return this.d.m.playing; }
  /** DECL_NONE, DECL_OUT, DECL_IN or DECL_BETTLER by seat. */
  get declaration(): ArrayLike<number> { return this.d.m.declaration; }
  get exchanged(): ArrayLike<number> { return this.d.m.exchanged; }
  get trickCards(): ArrayLike<number> { return this.d.m.trickCards; }
  get trickSeats(): ArrayLike<number> { return this.d.m.trickSeats; }
  /** Card played by each seat in each trick (trick * MAX_SEATS + seat), -1 when none. */
  get playedCards(): ArrayLike<number> { return this.d.m.playedCards; }
  get trickWinners(): ArrayLike<number> { return this.d.m.trickWinners; }
  /** Hands finished this session (a tavern5 tie-break deal counts): `results.length`, cheaply. */
  get numResults(): number { return this.resultStore.count; }
  /** The session's finished hands; `restart` begins a new array (an old one stays valid). */
  get results(): HandResult[] { return this.resultStore.all(); }

  /** The cards `seat` holds (any seat: other layers see only their own, through SeatView). */
  handOf(seat: number): number[] {
    return Array.from(this.d.m.hands.subarray(seat * HAND_CAPACITY, seat * HAND_CAPACITY + this.d.m.handLength[seat]!));
  }

  /** The cards `seat` discarded this hand, in order. */
  discardsOf(seat: number): number[] {
    const { discards, discardedBy } = this.d.m;
    return Array.from(discards.subarray(0, this.d.numDiscards)).filter((c) => discardedBy[c] === seat);
  }

  /** Stack = startingChips + balance, in units (tavern5); the balance alone without startingChips. */
  stack(seat: number): number {
    return this.game.startingUnits + this.d.m.balances[seat]!;
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
    const best = Math.max(...candidates.map((s) => d.m.balances[s]!));
    return candidates.filter((s) => d.m.balances[s] === best);
  }

  /** Decks and actions of every hand started so far: the raw material of a record. */
  handLogs(): HandLog[] {
    return this.log.hands();
  }

  // ======================= legal actions =======================

  /** Legal actions as action ids, ascending. */
  legalActions(): number[] {
    this.refreshLegal();
    return Array.from(this.d.m.legal.subarray(0, this.d.numLegal)).sort((a, b) => a - b);
  }

  /** Writes 1 for each legal action into `out` (length NUM_ACTIONS), 0 elsewhere. */
  legalActionMask(out: Uint8Array, offset = 0): Uint8Array {
    this.refreshLegal();
    out.fill(0, offset, offset + NUM_ACTIONS);
    const legal = this.d.m.legal;
    for (let i = 0; i < this.d.numLegal; i++) out[offset + legal[i]!] = 1;
    return out;
  }

  numLegalActions(): number {
    this.refreshLegal();
    return this.d.numLegal;
  }

  /** The i-th legal action in the engine's internal order (for fast uniform sampling). */
  legalActionAt(i: number): number {
    this.refreshLegal();
    return this.d.m.legal[i]!;
  }

  isLegal(action: number): boolean {
    this.refreshLegal();
    const legal = this.d.m.legal;
    for (let i = 0; i < this.d.numLegal; i++) if (legal[i] === action) return true;
    return false;
  }

  /** Why `action` is illegal for the seat to act (or `seat`, if given), without throwing; null when it is legal. */
  explainIllegal(action: number, seat = this.d.currentSeat): string | null {
    if (seat !== this.d.currentSeat) {
      return this.d.phase === 'over' ? 'the session is over' : `it is seat ${this.d.currentSeat}'s turn, not seat ${seat}'s`;
    }
    return this.isLegal(action) ? null : illegalReason(this.game, this.d, action);
  }

  private refreshLegal(): void {
    const d = this.d;
    if (d.legalFresh) return;
    d.legalFresh = true;
    const { legal, hands, handLength } = d.m;
    let count = 0;
    const seat = d.currentSeat;
    const base = seat * HAND_CAPACITY;
    switch (d.phase) {
      case 'trump':
        for (let s = 0; s < 4; s++) legal[count++] = ACTION_TRUMP + s;
        break;
      case 'discard':
        for (let i = 0; i < handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + hands[base + i]!;
        break;
      case 'declare':
        legal[count++] = ACTION_IN;
        legal[count++] = ACTION_OUT;
        if (this.rules.bettler) legal[count++] = ACTION_BETTLER;
        break;
      case 'exchange':
        // Discards are replaced only at `done`, so the talon must still hold one more card.
        if (d.pendingExchange < this.rules.exchange!.maxCards && d.pendingExchange < NUM_CARDS - d.talonPosition) {
          for (let i = 0; i < handLength[seat]!; i++) legal[count++] = ACTION_DISCARD + hands[base + i]!;
        }
        legal[count++] = ACTION_DONE;
        break;
      case 'play': {
        const bits = legalPlayBits(hands, base, handLength[seat]!, d.m.trickCards, d.trickLength, d.trump, this.rules.weliRank === 'highest', this.game.profile.mustHead);
        for (let i = 0; i < handLength[seat]!; i++) if (bits & (1 << i)) legal[count++] = hands[base + i]!;
        break;
      }
      case 'deal':
      case 'over':
        break;
    }
    d.numLegal = count;
  }
}
