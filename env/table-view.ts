// The public table as one seat sees it, for frontends (the web table, the terminal game, any
// bridge client): the observation view, the legal moves, every trick and declaration so far and
// each finished hand's settlement. Only public information and the seat's own cards leave here:
// other seats' discards are masked, hands and undealt cards never appear.

import {
  AmountOverflowError,
  ACTION_DISCARD,
  ACTION_IN,
  actionToString,
  cardToken,
  replayResult,
  stateToRecord,
  trickWinnerIndex,
  type HandReport,
  type KratzenState,
} from './rules/index.js';
import { observationView, type ObservationView } from './observation.js';

export interface TrickView {
  /** 0-based trick of the hand. */
  trick: number;
  leader: number;
  /** In playing order, the leader first. */
  plays: { seat: number; card: string }[];
  /** -1 while the trick is in progress. */
  winner: number;
}

export interface HandHistory {
  hand: number;
  dealer: number;
  /** The viewer's cards as dealt (the didactic4 dealer's with the face-up cards it took); set by `sessionHistory`. */
  cards?: string[];
  /** Face-up cards everybody saw; set by `sessionHistory`. */
  faceUp?: string[];
  /** Every action of the hand in order; `discard ?` for a discard the viewer did not make. */
  actions: { seat: number; action: string }[];
  tricks: TrickView[];
}

export interface TableView {
  view: ObservationView;
  /** The viewer's legal moves (empty unless it is to act), as action ids and their text. */
  legal: { action: number; text: string }[];
  /** 0-based index of the hand in progress (the number of hands once the session is over). */
  handIndex: number;
  numHands: number;
  complete: boolean;
  history: HandHistory[];
  /** The settlement of every finished hand (docs/rules.md §6), amounts in chips. */
  settlements: HandReport[];
  final: ReturnType<typeof replayResult>['final'];
}

/** Builds hand histories from actions as they are applied: call `observe` before each `apply`. */
export class HistoryRecorder {
  readonly hands: HandHistory[] = [];

  /** Records `action` by `seat` (not yet applied to `state`); returns the trick it completes, if any. */
  observe(state: KratzenState, seat: number, action: number): TrickView | null {
    let hand = this.hands[this.hands.length - 1];
    if (!hand || hand.hand !== state.handIndex) {
      hand = { hand: state.handIndex, dealer: state.dealer, actions: [], tricks: [] };
      this.hands.push(hand);
    }
    hand.actions.push({ seat, action: actionToString(action) });
    if (state.phase !== 'play' || action >= ACTION_DISCARD) return null;
    const cards = [...Array.from({ length: state.trickLength }, (_, i) => state.trickCards[i]!), action];
    const seats = [...Array.from({ length: state.trickLength }, (_, i) => state.trickSeats[i]!), seat];
    const trick: TrickView = {
      trick: state.trickNumber,
      leader: seats[0]!,
      plays: seats.map((s, i) => ({ seat: s, card: cardToken(cards[i]!) })),
      winner: -1,
    };
    if (cards.length === state.numPlaying) {
      trick.winner = seats[trickWinnerIndex(cards, cards.length, state.trump, state.rules.weliRank === 'highest')]!;
    }
    const last = hand.tricks[hand.tricks.length - 1];
    if (last && last.trick === trick.trick) hand.tricks[hand.tricks.length - 1] = trick;
    else hand.tricks.push(trick);
    return trick.winner >= 0 ? trick : null;
  }
}

/**
 * The histories of every hand of `state`, rebuilt by replaying its logs on a copy of the session;
 * `viewer`'s cards as dealt and the face-up cards are noted for each hand.
 */
export function sessionHistory(state: KratzenState, viewer: number): HandHistory[] {
  const logs = state.handLogs();
  const start = state.startInfo;
  const replay = state.game.newState({
    seed: state.seed,
    decks: logs.map((l) => l.deck),
    start: { dealer: start.dealer, pot: start.pot, balances: start.balances, muss: start.muss },
  });
  const recorder = new HistoryRecorder();
  const dealt: { cards: string[]; faceUp: string[] }[] = [];
  hands: for (const log of logs) {
    // The replay waits at the deal of each hand; what the viewer holds then is what it was dealt.
    dealt.push({
      cards: replay.handOf(viewer).map(cardToken),
      faceUp: Array.from({ length: replay.numFaceUp }, (_, i) => cardToken(replay.faceUp[i]!)),
    });
    for (const { seat, action } of log.actions) {
      recorder.observe(replay, seat, action);
      try {
        replay.applyAs(seat, action);
      } catch (e) {
        // The session stopped at this action (an amount overflow): so does its history.
        if (e instanceof AmountOverflowError) break hands;
        throw e;
      }
    }
  }
  for (const hand of recorder.hands) Object.assign(hand, dealt[hand.hand]);
  return recorder.hands;
}

/** Hides the discards of other seats (docs/rules.md §3: only the discarding seat sees them). */
export function maskHistory(hands: HandHistory[], viewer: number): HandHistory[] {
  return hands.map((h) => ({
    ...h,
    actions: h.actions.map((a) => (a.seat !== viewer && a.action.startsWith('discard ') ? { seat: a.seat, action: 'discard ?' } : a)),
  }));
}

export function tableView(state: KratzenState, viewer: number): TableView {
  const result = replayResult(state);
  const legal = state.currentSeat === viewer && !state.isTerminal ? state.legalActions() : [];
  return {
    view: observationView(state, viewer),
    legal: legal.map((action) => ({ action, text: actionToString(action) })),
    handIndex: state.handIndex,
    numHands: state.rules.hands,
    complete: state.complete,
    history: maskHistory(sessionHistory(state, viewer), viewer),
    settlements: result.hands,
    final: result.final,
  };
}

/**
 * A session as one seat saw it, for clients that play that seat alone (single-agent sessions,
 * the web table): rule set and start, and per finished hand the seat's dealt cards, the face-up
 * cards, every action with other seats' discards masked, the tricks and the settlement. No seed
 * and no deck: other hands, discards and the talon stay hidden also after the hand.
 */
export interface SeatRecord {
  kind: 'seat';
  seat: number;
  rules: Record<string, unknown>;
  start: { dealer: number; pot: number; balances: number[]; muss?: boolean };
  hands: (HandHistory & { settlement: HandReport })[];
  final: TableView['final'];
}

export function seatRecord(state: KratzenState, viewer: number): SeatRecord {
  const result = replayResult(state);
  const record = stateToRecord(state);
  const history = maskHistory(sessionHistory(state, viewer), viewer);
  return {
    kind: 'seat',
    seat: viewer,
    rules: record.rules,
    start: record.start as SeatRecord['start'],
    hands: result.hands.map((settlement, h) => ({ ...(history.find((x) => x.hand === h) ?? { hand: h, dealer: settlement.dealer, actions: [], tricks: [] }), settlement })),
    final: result.final,
  };
}

/** True for the declaration and other non-card actions a frontend shows as buttons. */
export function isCallAction(action: number): boolean {
  return action >= ACTION_IN;
}
