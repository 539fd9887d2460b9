// What one seat may see, in one place: its own hand and discards, and the public table (face-up
// cards, trump, every card played and by whom, declarations, exchange counts, tricks, quotas,
// the ledger, the session's progress and the rule set). The observation encoder, the structured
// views, the bridge's table and the hidden-card sampler all read a seat's information from here,
// never from the state. Other hands, the talon and undealt cards, and other seats' discards
// never enter a SeatView.
//
// A SeatView is filled in place (`seatView(state, seat, view)`), so the encoder allocates
// nothing. The seat's own cards are copied; the public arrays are the state's own memory, read
// only, and valid until the state moves on.

import { NUM_CARDS } from './cards.js';
import type { KratzenState } from './game.js';
import type { KratzenGame } from './kratzen-game.js';
import { internals } from './internal.js';
import type { HandKind, Phase } from './phases.js';
import type { RuleSet } from './ruleset.js';
import { HAND_CAPACITY } from './sizes.js';

export class SeatView {
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

  // The public table: the state's own arrays, read only.
  faceUp: ArrayLike<number> = [];
  numFaceUp = 0;
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
}

/** Fills `into` (or a new SeatView) with what `seat` may see of `state` now. */
export function seatView(state: KratzenState, seat: number, into: SeatView = new SeatView()): SeatView {
  const d = internals(state);
  const m = d.m;
  const v = into;
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
  v.talonLeft = state.rules.profile === 'tavern5' ? NUM_CARDS - d.talonPosition : 0;
  v.pot = d.pot;
  v.potBeforePlay = d.potBeforePlay;
  v.handsPlayed = d.handsPlayed;
  v.isTieBreak = d.isTieBreak;
  const length = m.handLength[seat]!;
  const base = seat * HAND_CAPACITY;
  for (let i = 0; i < length; i++) v.hand[i] = m.hands[base + i]!;
  v.handLength = length;
  let own = 0;
  for (let j = 0; j < d.numDiscards; j++) {
    const card = m.discards[j]!;
    if (m.discardedBy[card] === seat) v.ownDiscards[own++] = card;
  }
  v.numOwnDiscards = own;
  v.faceUp = m.faceUp;
  v.numFaceUp = d.numFaceUp;
  v.trickCards = m.trickCards;
  v.trickSeats = m.trickSeats;
  v.playedCards = m.playedCards;
  v.trickWinners = m.trickWinners;
  v.declaration = m.declaration;
  v.exchanged = m.exchanged;
  v.tricksWon = m.tricksWon;
  v.quotas = m.quotas;
  v.dealtIn = m.dealtIn;
  v.playing = m.playing;
  v.balances = m.balances;
  return v;
}
