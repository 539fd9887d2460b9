// Determinization for search: from one seat's observation, sample a complete rules-core state
// that agrees with everything that seat has seen. The hidden cards (other hands, discards it did
// not make, the undealt cards) are dealt at random, respecting the voids revealed by play; the
// sampled deal is then replayed through the rules core, whose legality checks reject any sample
// that contradicts the play so far (e.g. a didactic4 player who could have headed a trick).

import {
  ACTION_DONE,
  ACTION_IN,
  ACTION_OUT,
  ACTION_BETTLER,
  IllegalActionError,
  NUM_CARDS,
  SUIT_LETTERS,
  TRUMP_SUIT,
  discardAction,
  effectiveSuit,
  isTrump,
  parseCard,
  playAction,
  suitIndex,
  trickWinnerIndex,
  trumpAction,
  type KratzenGame,
  type KratzenState,
} from '../env/rules/index.js';
import type { ObservationView } from '../env/observation.js';

type Random = () => number;

function shuffle<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

interface PlayedTrick {
  /** Seats in play order and their cards. */
  seats: number[];
  cards: number[];
}

/** The tricks so far in play order, and the suits each seat has shown it lacks. */
function reconstructTricks(game: KratzenGame, view: ObservationView): { tricks: PlayedTrick[]; voids: Set<number>[] } | null {
  const n = view.numPlayers;
  const trump = suitIndex(view.trump ?? 'c');
  const weliHighest = game.rules.weliRank === 'highest';
  const playing = view.declarations.map((d, s) => view.dealtIn[s] && (d === 'in' || d === 'bettler'));
  const next = (s: number) => {
    let t = s;
    do t = (t + 1) % n;
    while (!playing[t]);
    return t;
  };
  const voids = Array.from({ length: n }, () => new Set<number>());
  const tricks: PlayedTrick[] = [];
  if (view.phase !== 'play') return { tricks, voids };
  let leader = game.rules.profile === 'didactic4' ? view.dealer : next(view.dealer);
  const numPlaying = playing.filter(Boolean).length;
  for (let t = 0; t <= view.trickNumber; t++) {
    const trick: PlayedTrick = { seats: [], cards: [] };
    let seat = leader;
    for (let k = 0; k < numPlaying; k++) {
      const token = view.playedBy[seat]![t];
      if (token === undefined) break;
      trick.seats.push(seat);
      trick.cards.push(parseCard(token));
      seat = next(seat);
    }
    if (trick.cards.length > 0) {
      const led = effectiveSuit(trick.cards[0]!, trump);
      trick.cards.forEach((card, k) => {
        if (k === 0 || effectiveSuit(card, trump) === led) return;
        voids[trick.seats[k]!]!.add(led);
        if (!isTrump(card, trump)) voids[trick.seats[k]!]!.add(TRUMP_SUIT);
      });
      tricks.push(trick);
    }
    if (t < view.trickNumber) {
      if (trick.cards.length !== numPlaying) return null;
      leader = trick.seats[trickWinnerIndex(trick.cards, trick.cards.length, trump, weliHighest)]!;
    }
  }
  return { tricks, voids };
}

/**
 * A state consistent with `view` in which `view.seat` is to act, or null when no consistent
 * deal was found in `attempts` tries (or the position is not supported: a tie-break deal).
 */
export function sampleState(game: KratzenGame, view: ObservationView, random: Random, attempts = 30): KratzenState | null {
  if (view.kind === 'tie-break' || view.phase === 'deal' || view.phase === 'over') return null;
  const reconstructed = reconstructTricks(game, view);
  if (!reconstructed) return null;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const state = trySample(game, view, reconstructed.tricks, reconstructed.voids, random);
    if (state) return state;
  }
  return null;
}

function trySample(game: KratzenGame, view: ObservationView, tricks: PlayedTrick[], voids: Set<number>[], random: Random): KratzenState | null {
  const n = view.numPlayers;
  const me = view.seat;
  const dealer = view.dealer;
  const didactic = game.rules.profile === 'didactic4';
  const trump = suitIndex(view.trump ?? 'c');
  const hand = view.hand.map(parseCard);
  const ownDiscards = view.ownDiscards.map(parseCard);
  const faceUp = view.faceUp.map(parseCard);
  const played = view.playedBy.map((cards) => cards.map(parseCard));
  const seen = new Set<number>([...hand, ...ownDiscards, ...faceUp, ...played.flat()]);
  const pool = shuffle(
    Array.from({ length: NUM_CARDS }, (_, c) => c).filter((c) => !seen.has(c)),
    random,
  );
  const take = (count: number, fits: (card: number) => boolean = () => true): number[] | null => {
    const out: number[] = [];
    for (let i = 0; i < pool.length && out.length < count; ) {
      if (fits(pool[i]!)) out.push(pool.splice(i, 1)[0]!);
      else i++;
    }
    return out.length === count ? out : null;
  };
  const fitsVoids = (seat: number) => (card: number) => !voids[seat]!.has(effectiveSuit(card, trump));
  const handSize = game.handSize;
  const discardPhaseOpen = didactic && view.phase === 'discard';

  // Current (hidden) hands of the others; the didactic4 dealer's discards; tavern5 exchanges.
  const hands: number[][] = [];
  const discards: number[][] = Array.from({ length: n }, () => []);
  const drawn: number[][] = Array.from({ length: n }, () => []);
  for (let s = 0; s < n; s++) {
    if (s === me) {
      hands[s] = hand;
      discards[s] = ownDiscards;
      continue;
    }
    if (!view.dealtIn[s]) return null;
    const size = handSize - played[s]!.length;
    if (didactic && s === dealer && !discardPhaseOpen) {
      // The unplayed face-up cards are somewhere in the dealer's hand or discards.
      const unplayedFaceUp = faceUp.filter((c) => !played[s]!.includes(c));
      const extra = take(size + faceUp.length - unplayedFaceUp.length);
      if (!extra) return null;
      const holding = shuffle([...unplayedFaceUp, ...extra], random);
      const keep = holding.filter(fitsVoids(s)).slice(0, size);
      if (keep.length < size) return null;
      hands[s] = keep;
      discards[s] = holding.filter((c) => !keep.includes(c));
      continue;
    }
    const cards = take(size, fitsVoids(s));
    if (!cards) return null;
    hands[s] = cards;
  }
  if (!didactic) {
    for (let s = 0; s < n; s++) {
      const count = view.exchanged[s]!;
      if (count === 0) continue;
      // Cards that came from the talon are among the current and played cards; which ones does
      // not matter to the play ahead.
      drawn[s] = shuffle([...hands[s]!, ...played[s]!], random).slice(0, count);
      if (s !== me) {
        const gone = take(count);
        if (!gone) return null;
        discards[s] = gone;
      }
    }
  }

  // The deal: each seat's cards as dealt, in packets from the dealer's left.
  const dealt: number[][] = [];
  for (let s = 0; s < n; s++) {
    let cards = [...hands[s]!, ...played[s]!, ...discards[s]!].filter((c) => !drawn[s]!.includes(c));
    if (didactic && s === dealer) cards = cards.filter((c) => !faceUp.includes(c));
    if (cards.length !== handSize) return null;
    dealt[s] = shuffle(cards, random);
  }
  const order = Array.from({ length: n }, (_, k) => (dealer + 1 + k) % n);
  const packets = didactic ? [2, 2] : [3, 2];
  const deck: number[] = [];
  order.forEach((s) => deck.push(...dealt[s]!.slice(0, packets[0])));
  if (didactic) deck.push(...faceUp);
  order.forEach((s) => deck.push(...dealt[s]!.slice(packets[0])));
  if (!didactic) deck.push(faceUp[0]!);
  const exchangeOrder = [...order.filter((s) => s !== dealer), dealer];
  exchangeOrder.forEach((s) => deck.push(...drawn[s]!));
  deck.push(...pool);
  if (deck.length !== NUM_CARDS) return null;

  // The actions that led here, replayed through the rules core.
  const actions: [number, number][] = [];
  if (didactic) discards[dealer]!.forEach((c) => actions.push([dealer, discardAction(c)]));
  if (!didactic && view.faceUp[0] === 'W' && view.trump) actions.push([dealer, trumpAction(SUIT_LETTERS.indexOf(view.trump as 'c'))]);
  if (view.kind === 'normal') {
    for (const s of order) {
      if (s === dealer) continue;
      const d = view.declarations[s];
      if (d === 'none') break;
      actions.push([s, d === 'in' ? ACTION_IN : d === 'out' ? ACTION_OUT : ACTION_BETTLER]);
    }
    if (!didactic && game.rules.exchange && (view.phase === 'exchange' || view.phase === 'play')) {
      for (const s of exchangeOrder) {
        if (view.declarations[s] !== 'in' && view.declarations[s] !== 'bettler' && s !== dealer) continue;
        discards[s]!.forEach((c) => actions.push([s, discardAction(c)]));
        if (s === me && view.phase === 'exchange') break;
        actions.push([s, ACTION_DONE]);
      }
    }
  }
  for (const trick of tricks) trick.cards.forEach((c, k) => actions.push([trick.seats[k]!, playAction(c)]));

  const unit = game.unitsPerChip;
  let pot = Math.round(view.pot * unit);
  if (didactic) {
    pot = view.kind === 'funding-muss' ? 0 : Math.max(0, Math.round(view.pot) - 1) * unit;
  } else {
    const antes = view.dealtIn.filter(Boolean).length * game.toUnits(game.rules.ante);
    const fees = view.exchanged.reduce((a, b) => a + b, 0) * game.toUnits(game.rules.exchange?.feePerCard ?? 0);
    pot = Math.max(0, pot - antes - fees);
  }
  const state = game.newState({
    decks: [deck],
    start: { dealer, pot, muss: !didactic && view.kind === 'muss' },
    pauseBetweenHands: true,
  });
  try {
    for (const [seat, action] of actions) state.applyAs(seat, action);
  } catch (e) {
    if (e instanceof IllegalActionError) return null;
    throw e;
  }
  return state.currentSeat === me && state.phase === view.phase ? state : null;
}

