// The raw material of a record: the deck of every hand started and every action applied, in
// typed arrays grown by doubling, so a session's history costs no allocation once they are big
// enough, and a restarted state keeps them.

import { NUM_CARDS } from './cards.js';
import { copyInto } from './results.js';

export interface HandLog {
  deck: number[];
  actions: { seat: number; action: number }[];
}

export class SessionLog {
  /** The deck of each hand started, NUM_CARDS ids per hand. */
  private decks: Int8Array;
  /** Hands started (decks recorded). */
  numHands = 0;
  /** Every action applied: seat * 256 + action, per hand from `handStart[h]`. */
  private actions: Int16Array;
  private numActions = 0;
  private handStart = new Int32Array(4);

  /**
   * The first room for decks and actions: views into the state's memory (state-data.ts), so a
   * new state allocates no arrays here; a longer session moves to arrays of their own.
   */
  constructor(
    private readonly firstDecks: Int8Array,
    private readonly firstActions: Int16Array,
  ) {
    this.decks = firstDecks;
    this.actions = firstActions;
  }

  clear(): void {
    this.numHands = 0;
    this.numActions = 0;
  }

  copyFrom(other: SessionLog): void {
    this.decks = copyInto(this.firstDecks, other.decks);
    this.numHands = other.numHands;
    this.actions = copyInto(this.firstActions, other.actions);
    this.numActions = other.numActions;
    this.handStart = other.handStart.slice();
  }

  /** Starts the log of a new hand dealt from `deck[start .. start + NUM_CARDS)`. */
  beginHand(deck: Int8Array, start: number): void {
    if ((this.numHands + 1) * NUM_CARDS > this.decks.length) this.decks = grown(this.decks);
    if (this.numHands === this.handStart.length) this.handStart = grown(this.handStart);
    const decks = this.decks;
    const at = this.numHands * NUM_CARDS;
    for (let i = 0; i < NUM_CARDS; i++) decks[at + i] = deck[start + i]!;
    this.handStart[this.numHands++] = this.numActions;
  }

  push(seat: number, action: number): void {
    if (this.numActions === this.actions.length) this.actions = grown(this.actions);
    this.actions[this.numActions++] = seat * 256 + action;
  }

  /** Decks and actions of every hand started so far. */
  hands(): HandLog[] {
    return Array.from({ length: this.numHands }, (_, h) => this.hand(h));
  }

  /** The deck and actions of hand `h` (0 .. numHands - 1). */
  hand(h: number): HandLog {
    const deck = this.decks.subarray(h * NUM_CARDS, (h + 1) * NUM_CARDS);
    const end = h + 1 < this.numHands ? this.handStart[h + 1]! : this.numActions;
    const actions = Array.from(this.actions.subarray(this.handStart[h], end), (packed) => ({ seat: packed >> 8, action: packed & 255 }));
    return { deck: Array.from(deck), actions };
  }
}

/** A copy of `array` with twice the room. */
function grown<T extends Int8Array | Int16Array | Int32Array>(array: T): T {
  const bigger = new (array.constructor as new (length: number) => T)(array.length * 2);
  bigger.set(array);
  return bigger;
}
