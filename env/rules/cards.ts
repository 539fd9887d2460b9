// Card identities: the canonical ids (docs/rules.md §1) and the tokens records use.
// Every encoding, record and test goes through these ids: id = suit * 8 + rank, Weli = 32.

export const NUM_SUITS = 4;
export const NUM_RANKS = 8;
/** 32 plain cards plus the Weli. */
export const NUM_CARDS = 33;
export const WELI = 32;

/** Suit letters in canonical order: c=Eichel/Clubs, s=Laub/Spades, h=Herz/Hearts, d=Schellen/Diamonds. */
export const SUIT_LETTERS = ['c', 's', 'h', 'd'] as const;
/** Rank letters, high to low in a plain suit (A=Sau, Q=Ober, J=Unter). */
export const RANK_LETTERS = ['A', 'K', 'Q', 'J', 'T', '9', '8', '7'] as const;
export type SuitLetter = (typeof SUIT_LETTERS)[number];

export const RANK_SEVEN = 7;

export function cardSuit(card: number): number {
  return card >> 3;
}

export function cardRank(card: number): number {
  return card & 7;
}

export function makeCard(suit: number, rank: number): number {
  return suit * NUM_RANKS + rank;
}

export function cardToken(card: number): string {
  if (card === WELI) return 'W';
  if (!Number.isInteger(card) || card < 0 || card > WELI) throw new RangeError(`not a card id: ${card}`);
  return RANK_LETTERS[cardRank(card)] + SUIT_LETTERS[cardSuit(card)];
}

const TOKEN_TO_CARD = new Map<string, number>();
for (let id = 0; id < NUM_CARDS; id++) TOKEN_TO_CARD.set(cardToken(id), id);
TOKEN_TO_CARD.set('6d', WELI);

/** Parses a card token (`Ac`, `Td`, `W`, `6d`); returns -1 when it is not one. */
export function parseCard(token: string): number {
  return TOKEN_TO_CARD.get(token) ?? -1;
}

export function suitIndex(letter: string): number {
  return (SUIT_LETTERS as readonly string[]).indexOf(letter);
}
