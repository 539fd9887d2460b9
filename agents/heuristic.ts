// A rule-based player that follows the seeds' advice: fold weak hands in normal hands, count the
// players already in, play marginal hands when the pot is fat, lead trumps early as the dealer,
// keep the Weli for a trick that matters, and in a Muss make sure of a trick before anything else.
// It reads only the observation (through the env's decoder) and the mask; every rule it uses
// (Weli rank, quotas, number of tricks, fees, penalties) comes from the observed rule set.

import {
  ACTION_BETTLER,
  ACTION_DONE,
  ACTION_IN,
  ACTION_OUT,
  ACTION_TRUMP,
  NUM_ACTIONS,
  WELI,
  cardRank,
  checkOptionKeys,
  cardSuit,
  discardAction,
  discardedCard,
  effectiveSuit,
  isTrump,
  parseCard,
  playedCard,
  suitIndex,
  trickValue,
} from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { decodeObservation, type ObservationView } from '../env/observation-view.js';
import { checkBatch, decodeRow, type Agent } from './agent.js';
import { observedGame } from './observed-game.js';

export interface HeuristicOptions {
  /** Added to the declaration threshold: > 0 folds more, < 0 plays more; within ±MAX_CAUTION. @default 0 */
  caution?: number;
}

/** The largest |caution|: beyond it the agent always folds or always plays. */
const MAX_CAUTION = 10;
/** Every option HeuristicAgent takes (complete by type). */
const HEURISTIC_OPTIONS = Object.keys({ caution: true } satisfies Record<keyof HeuristicOptions, true>);

export class HeuristicAgent implements Agent {
  readonly name = 'heuristic';
  private readonly caution: number;

  constructor(options: HeuristicOptions = {}) {
    checkOptionKeys(options, HEURISTIC_OPTIONS, 'HeuristicAgent');
    const { caution = 0 } = options;
    if (typeof caution !== 'number') throw new TypeError(`HeuristicAgent: caution is a number, got ${typeof caution}`);
    // NaN made every comparison with the threshold false: an agent that never declared in.
    if (!(Math.abs(caution) <= MAX_CAUTION)) throw new RangeError(`HeuristicAgent: caution must be within -${MAX_CAUTION}..${MAX_CAUTION}, got ${String(caution).slice(0, 40)}`);
    this.caution = caution;
  }

  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    checkBatch(observations, masks, seats);
    const actions = new Int32Array(seats.length);
    for (let i = 0; i < seats.length; i++) {
      const legal: number[] = [];
      for (let a = 0; a < NUM_ACTIONS; a++) if (masks[i * NUM_ACTIONS + a]) legal.push(a);
      if (legal.length === 0) throw new Error(`heuristic agent: row ${i} has no legal action`);
      if (legal.length === 1) {
        actions[i] = legal[0]!;
        continue;
      }
      // The game is read from the observation too: garbage there made a rule set that failed.
      const view = decodeRow(i, () => {
        const decoded = decodeObservation(observations, i * OBS_SIZE);
        observedGame(decoded);
        return decoded;
      });
      const chosen = this.choose(view, legal);
      // A mask that does not fit its observation (another row's) left a choice outside it: -1.
      if (!legal.includes(chosen)) throw new RangeError(`heuristic agent: row ${i}'s mask does not fit its observation (phase ${view.phase}): none of its legal actions is a move of that phase`);
      actions[i] = chosen;
    }
    return actions;
  }

  /** One decision from a decoded view and the legal actions. */
  choose(view: ObservationView, legal: number[]): number {
    const rules = observedGame(view).rules;
    const weliHighest = rules.weliRank === 'highest';
    switch (view.phase) {
      case 'trump':
        return ACTION_TRUMP + bestTrumpSuit(view.hand.map(parseCard));
      case 'discard':
        return discardAction(weakest(view, legal.map(discardedCard), weliHighest));
      case 'declare':
        return this.declare(view, legal, weliHighest);
      case 'exchange':
        return exchange(view, legal, weliHighest);
      default:
        return play(view, legal, weliHighest);
    }
  }

  private declare(view: ObservationView, legal: number[], weliHighest: boolean): number {
    const rules = observedGame(view).rules;
    const hand = view.hand.map(parseCard);
    const trump = suitIndex(view.trump ?? 'c');
    const expected = expectedTricks(hand, trump, weliHighest, view.numPlayers);
    // Count the players in: those who said in, plus the dealer, plus half of those still to speak.
    let opponents = 0;
    view.declarations.forEach((d, s) => {
      if (s === view.seat || !view.dealtIn[s]) return;
      if (s === view.dealer || d === 'in' || d === 'bettler') opponents += 1;
      else if (d === 'none') opponents += 0.5;
    });
    const quota = view.quotas[view.seat]!;
    // A fat pot (many antes' worth) pays for a riskier call.
    const potPerPlayer = view.pot / Math.max(1, view.numPlayers);
    const fatPot = Math.min(0.35, Math.max(0, (potPerPlayer - 1.5) * 0.08));
    // failPenalty "pot": a failure costs the whole pot rather than two antes; call more carefully.
    const dearFailure =
      rules.profile === 'tavern5' && rules.failPenalty === 'pot' ? Math.min(0.3, (0.1 * view.pot) / (2 * rules.ante)) : 0;
    const threshold = quota * (0.75 + 0.12 * Math.max(0, opponents - 1)) - fatPot + dearFailure + this.caution;
    if (legal.includes(ACTION_BETTLER) && expected < 0.1 && hand.every((c) => !isTrump(c, trump) && cardRank(c) >= 4)) {
      return ACTION_BETTLER;
    }
    return expected >= threshold ? ACTION_IN : ACTION_OUT;
  }
}

/** Rough chance that each card takes a trick, summed. */
function expectedTricks(hand: number[], trump: number, weliHighest: boolean, numPlayers: number): number {
  const trumps = hand.filter((c) => isTrump(c, trump)).length;
  let sum = 0;
  for (const card of hand) {
    // The top trump is a sure trick: the Weli under the Salzburg rule, else the trump Ace.
    if (card === WELI) sum += weliHighest ? 1 : 0.85;
    else if (cardSuit(card) === trump && cardRank(card) === 0) sum += weliHighest ? 0.85 : 1;
    else if (cardSuit(card) === trump) sum += [1, 0.7, 0.5, 0.35, 0.3, 0.25, 0.2, 0.2][cardRank(card)]! * (trumps >= 2 ? 1 : 0.8);
    else if (cardRank(card) === 0) sum += numPlayers <= 4 ? 0.55 : 0.4;
    else if (cardRank(card) === 1) sum += 0.15;
  }
  return sum;
}

function bestTrumpSuit(hand: number[]): number {
  let best = 0;
  let bestScore = -1;
  for (let suit = 0; suit < 4; suit++) {
    const score = hand.filter((c) => c !== WELI && cardSuit(c) === suit).reduce((s, c) => s + 10 + (8 - cardRank(c)), 0);
    if (score > bestScore) {
      bestScore = score;
      best = suit;
    }
  }
  return best;
}

/** How much a card is worth keeping: trumps by rank, then plain cards by rank. */
function keepValue(card: number, trump: number, weliHighest: boolean): number {
  return trickValue(card, -1, trump, weliHighest) || 8 - cardRank(card);
}

function weakest(view: ObservationView, cards: number[], weliHighest: boolean): number {
  const trump = suitIndex(view.trump ?? 'c');
  return cards.reduce((a, b) => (keepValue(b, trump, weliHighest) < keepValue(a, trump, weliHighest) ? b : a));
}

function exchange(view: ObservationView, legal: number[], weliHighest: boolean): number {
  const rules = observedGame(view).rules;
  const trump = suitIndex(view.trump ?? 'c');
  // A card changed costs the fee; it is worth it only when the fee is small against a share
  // of the pot (a fifth of it per trick), here at most half a share.
  if ((rules.exchange?.feePerCard ?? 0) > view.pot / 10) return ACTION_DONE;
  const candidates = legal.map(discardedCard).filter((card) => card >= 0);
  // Change only plain cards below the Ten: they rarely take a trick.
  const poor = candidates.filter((c) => !isTrump(c, trump) && cardRank(c) >= 5);
  return poor.length > 0 ? discardAction(weakest(view, poor, weliHighest)) : ACTION_DONE;
}

function play(view: ObservationView, legal: number[], weliHighest: boolean): number {
  const trump = suitIndex(view.trump ?? 'c');
  const keep = (card: number) => keepValue(card, trump, weliHighest);
  const cards = legal.map(playedCard);
  const trick = view.currentTrick.flatMap((t, s) => (t ? [{ seat: s, card: parseCard(t) }] : []));
  const tricksLeft = observedGame(view).numTricks - view.trickNumber;
  const need = Math.max(0, view.quotas[view.seat]! - view.tricksWon[view.seat]!);
  const payoutHand = observedGame(view).profile.tricksPay(view.kind);
  const bettler = view.declarations[view.seat] === 'bettler';
  const lowest = () => cards.reduce((a, b) => (keep(b) < keep(a) ? b : a));
  if (trick.length === 0) {
    if (bettler) return lowest();
    const trumps = cards.filter((c) => isTrump(c, trump)).sort((a, b) => keep(b) - keep(a));
    const nonWeli = trumps.filter((c) => c !== WELI);
    if (view.seat === view.dealer && need > 0 && trumps.length >= 2 && nonWeli.length > 0) return nonWeli[0]!;
    const aces = cards.filter((c) => !isTrump(c, trump) && cardRank(c) === 0);
    if (aces.length > 0) return aces[0]!;
    const plain = cards.filter((c) => !isTrump(c, trump));
    if (plain.length > 0) {
      const length = (c: number) => plain.filter((d) => cardSuit(d) === cardSuit(c)).length;
      return plain.reduce((a, b) => (length(b) > length(a) || (length(b) === length(a) && cardRank(b) > cardRank(a)) ? b : a));
    }
    return need >= tricksLeft && trumps.length ? trumps[0]! : lowest();
  }
  const led = effectiveSuit(trick[0]!.card, trump);
  const best = Math.max(...trick.map((t) => trickValue(t.card, led, trump, weliHighest)));
  const winners = cards.filter((c) => trickValue(c, led, trump, weliHighest) > best).sort((a, b) => keep(a) - keep(b));
  if (bettler) {
    const losers = cards.filter((c) => trickValue(c, led, trump, weliHighest) <= best);
    return losers.length ? losers.reduce((a, b) => (keep(b) > keep(a) ? b : a)) : lowest();
  }
  const wantTrick = need > 0 || payoutHand;
  if (wantTrick && winners.length > 0) {
    const withoutWeli = winners.filter((c) => c !== WELI);
    // Keep the Weli for a trick that matters: spend it only when it is the one winner and a
    // trick is still needed with few left.
    if (withoutWeli.length > 0) return withoutWeli[0]!;
    if (need > 0 && need >= tricksLeft - 1) return winners[0]!;
  }
  return lowest();
}
