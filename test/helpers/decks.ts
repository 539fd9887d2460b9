// Builds explicit decks for scripted scenarios from the hands each seat should be dealt,
// following the packet deal of docs/rules.md (didactic4: 2 + indicator + 2; tavern5: 3 + 2 + turned).

import { NUM_CARDS, parseCard } from '../../env/rules/index.js';

export interface DeckPlan {
  profile: 'didactic4' | 'tavern5';
  players: number;
  dealer: number;
  /** Cards dealt to each seat, as tokens (4 in didactic4, 5 in tavern5). */
  hands: Record<number, string[]>;
  /** didactic4: the indicator, or ['W', x] for a Weli and the card turned after it; tavern5: the turned card. */
  faceUp: string[];
  /** tavern5: the top of the talon, in order. */
  talon?: string[];
  /** Seats dealt in (tavern5 tie-break); default all. */
  dealtIn?: number[];
}

export function buildDeck(plan: DeckPlan): string[] {
  const order: number[] = [];
  for (let k = 1; k <= plan.players; k++) {
    const seat = (plan.dealer + k) % plan.players;
    if (!plan.dealtIn || plan.dealtIn.includes(seat)) order.push(seat);
  }
  const deck: string[] = [];
  const packet = (from: number, count: number) => {
    for (const seat of order) {
      const cards = plan.hands[seat];
      if (!cards) throw new Error(`no hand planned for seat ${seat}`);
      deck.push(...cards.slice(from, from + count));
    }
  };
  if (plan.profile === 'didactic4') {
    packet(0, 2);
    deck.push(...plan.faceUp);
    packet(2, 2);
  } else {
    packet(0, 3);
    packet(3, 2);
    deck.push(...plan.faceUp);
    deck.push(...(plan.talon ?? []));
  }
  const used = new Set(deck.map(parseCard));
  if (used.size !== deck.length || used.has(-1)) throw new Error(`bad plan: ${deck.join(' ')}`);
  for (let id = 0; id < NUM_CARDS; id++) if (!used.has(id)) deck.push(tokenOf(id));
  return deck;
}

function tokenOf(id: number): string {
  return id === 32 ? 'W' : 'AKQJT987'[id & 7]! + 'cshd'[id >> 3]!;
}
