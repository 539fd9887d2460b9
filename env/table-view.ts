// The public table as one seat sees it, for frontends (the web table, the terminal game, any
// bridge client): the observation view, the legal moves, every trick and declaration so far and
// each finished hand's settlement. Only public information and the seat's own cards leave here:
// other seats' discards are masked, hands and undealt cards never appear.

import {
  AmountOverflowError,
  playedCard,
  ACTION_IN,
  actionSeenBy,
  actionToString,
  cardToken,
  drain,
  logReplayStart,
  replayResult,
  stateToRecord,
  trickWinnerIndex,
  type HandReport,
  type KratzenState,
  type StateReader,
} from './rules/index.js';
import { observationView, type ObservationView } from './observation-view.js';

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
  /** Every action of the hand in order, as the viewer saw it (actionSeenBy: `discard ?` for a discard it did not make). */
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
  /**
   * The session stopped before its end because an amount would pass 2^53 - 1 units (docs/rules.md
   * §3, Ledger): it is over although `complete` is false, and `final` is the last settlement's.
   */
  overflowed: boolean;
  history: HandHistory[];
  /** The settlement of every finished hand (docs/rules.md §6), amounts in chips. */
  settlements: HandReport[];
  final: ReturnType<typeof replayResult>['final'];
}

/** Builds hand histories as `viewer` sees them from actions as they are applied: call `observe` before each `apply`. */
export class HistoryRecorder {
  readonly hands: HandHistory[] = [];

  constructor(readonly viewer: number) {}

  /** Records `action` by `seat` (not yet applied to `state`); returns the trick it completes, if any. */
  observe(state: KratzenState, seat: number, action: number): TrickView | null {
    let hand = this.hands[this.hands.length - 1];
    if (!hand || hand.hand !== state.handIndex) {
      hand = { hand: state.handIndex, dealer: state.dealer, actions: [], tricks: [] };
      this.hands.push(hand);
    }
    hand.actions.push({ seat, action: actionSeenBy(this.viewer, seat, action) });
    const played = playedCard(action);
    if (state.phase !== 'play' || played < 0) return null;
    const cards = [...Array.from({ length: state.trickLength }, (_, i) => state.trickCards[i]!), played];
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

/** Hands `from`, `from + 1`, ..., at most `count` of them: a page of a long session. */
export interface HandRange {
  from: number;
  count: number;
}

export const ALL_HANDS: HandRange = Object.freeze({ from: 0, count: Infinity });

/** `range` when it is one (from an integer >= 0, count an integer >= 0 or Infinity); a RangeError naming it else ("all" and NaN counts read as no hands). */
export function checkHandRange(range: HandRange): HandRange {
  const from = (range as Partial<HandRange> | null)?.from;
  const count = (range as Partial<HandRange> | null)?.count;
  if (!Number.isSafeInteger(from) || from! < 0 || !((Number.isSafeInteger(count) && count! >= 0) || count === Infinity)) {
    throw new RangeError(`range must be { from: an integer >= 0, count: an integer >= 0 or Infinity }, got ${JSON.stringify(range)?.slice(0, 80)}`);
  }
  return range;
}

const inRange = (hand: number, range: HandRange) => hand >= range.from && hand - range.from < range.count;

/**
 * The histories of the hands of `state` in `range` as `viewer` saw them, rebuilt by replaying
 * its logs on a copy of the session (up to the range's last hand); `viewer`'s cards as dealt and
 * the face-up cards are noted for each hand. Yields after each replayed hand, so a caller serving others can give
 * way in a long session (a replay takes about 0.1 ms a hand).
 */
export function* sessionHistorySteps(state: StateReader, viewer: number, range: HandRange = ALL_HANDS): Generator<void, HandHistory[]> {
  checkHandRange(range);
  const numHands = Math.min(state.numHandsStarted, range.from + range.count);
  const replay = logReplayStart(state, numHands, false);
  const recorder = new HistoryRecorder(viewer);
  const kept: HandHistory[] = [];
  const dealt: { cards: string[]; faceUp: string[] }[] = [];
  hands: for (let h = 0; h < numHands; h++) {
    // The replay waits at the deal of each hand; what the viewer holds then is what it was dealt.
    dealt[h] = {
      cards: replay.handOf(viewer).map(cardToken),
      faceUp: Array.from({ length: replay.numFaceUp }, (_, i) => cardToken(replay.faceUp[i]!)),
    };
    for (const { seat, action } of state.handLog(h).actions) {
      recorder.observe(replay, seat, action);
      try {
        replay.applyAs(seat, action);
      } catch (e) {
        // The session stopped at this action (an amount overflow): so does its history.
        if (e instanceof AmountOverflowError) break hands;
        throw e;
      }
    }
    // Hands before the range are dropped as they are replayed.
    for (const hand of recorder.hands.splice(0)) if (inRange(hand.hand, range)) kept.push(hand);
    yield;
  }
  for (const hand of recorder.hands) if (inRange(hand.hand, range)) kept.push(hand);
  for (const hand of kept) Object.assign(hand, dealt[hand.hand]);
  return kept;
}

/** sessionHistorySteps at once. */
export function sessionHistory(state: StateReader, viewer: number, range: HandRange = ALL_HANDS): HandHistory[] {
  return drain(sessionHistorySteps(state, viewer, range));
}

/**
 * The table `viewer` sees, with the history and settlements of the hands in `range`; yields as
 * sessionHistorySteps does. The view of an `ended` episode offers no moves: one an illegal action
 * or the step limit ended stops mid-hand, and listed the moves of a seat that will never act.
 */
export function* tableViewSteps(state: StateReader, viewer: number, range: HandRange = ALL_HANDS, ended = false): Generator<void, TableView> {
  checkHandRange(range);
  const result = replayResult(state, range.from, range.from + range.count);
  const legal = !ended && state.currentSeat === viewer && !state.isTerminal ? state.legalActions() : [];
  const history = yield* sessionHistorySteps(state, viewer, range);
  return {
    view: observationView(state, viewer),
    legal: legal.map((action) => ({ action, text: actionToString(action) })),
    handIndex: state.handIndex,
    numHands: state.rules.hands,
    complete: state.complete,
    overflowed: state.overflowed,
    history,
    settlements: result.hands,
    final: result.final,
  };
}

export function tableView(state: StateReader, viewer: number, range: HandRange = ALL_HANDS): TableView {
  return drain(tableViewSteps(state, viewer, range));
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

/** `viewer`'s record of the finished hands in `range`; yields as sessionHistorySteps does. */
export function* seatRecordSteps(state: StateReader, viewer: number, range: HandRange = ALL_HANDS): Generator<void, SeatRecord> {
  checkHandRange(range);
  const result = replayResult(state, range.from, range.from + range.count);
  const record = stateToRecord(state, 0, 0);
  const history = yield* sessionHistorySteps(state, viewer, range);
  const hands: SeatRecord['hands'] = result.hands.map((settlement, k) => {
    const h = range.from + k;
    return { ...(history.find((x) => x.hand === h) ?? { hand: h, dealer: settlement.dealer, actions: [], tricks: [] }), settlement };
  });
  return { kind: 'seat', seat: viewer, rules: record.rules, start: record.start as SeatRecord['start'], hands, final: result.final };
}

export function seatRecord(state: StateReader, viewer: number, range: HandRange = ALL_HANDS): SeatRecord {
  return drain(seatRecordSteps(state, viewer, range));
}

/** True for the declaration and other non-card actions a frontend shows as buttons. */
export function isCallAction(action: number): boolean {
  return action >= ACTION_IN;
}
