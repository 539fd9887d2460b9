// What people call the cards, by deck style: the one table of display names. The terminal game
// formats with it and the web table receives it as served data (bridge/web/assets.ts), so no
// frontend keeps its own copy. Display only: card ids and tokens (cards.ts) never change.

import { SUIT_LETTERS } from './cards.js';
import type { DeckStyle } from './ruleset.js';

interface StyleNames {
  /** By suit letter. */
  suits: Record<string, string>;
  /** By rank letter (A K Q J T 9 8 7). */
  ranks: Record<string, string>;
  /** The rank part of a short label (`O♣`, `10♥`). */
  short: Record<string, string>;
  /** `suit-rank`: "Eichel König"; `rank-of-suit`: "King of Clubs". */
  order: 'suit-rank' | 'rank-of-suit';
  /** The long name of the Weli. */
  weli: string;
  /** The short label of the Weli. */
  weliShort: string;
}

const GERMAN: StyleNames = {
  suits: { c: 'Eichel', s: 'Laub', h: 'Herz', d: 'Schellen' },
  ranks: { A: 'Sau', K: 'König', Q: 'Ober', J: 'Unter', T: 'Zehner', 9: 'Neuner', 8: 'Achter', 7: 'Siebener' },
  short: { A: 'A', K: 'K', Q: 'O', J: 'U', T: '10', 9: '9', 8: '8', 7: '7' },
  order: 'suit-rank',
  weli: 'Weli (Schellen 6)',
  weliShort: 'W♦',
};

const FRENCH: StyleNames = {
  suits: { c: 'Clubs', s: 'Spades', h: 'Hearts', d: 'Diamonds' },
  ranks: { A: 'Ace', K: 'King', Q: 'Queen', J: 'Jack', T: 'Ten', 9: 'Nine', 8: 'Eight', 7: 'Seven' },
  short: { A: 'A', K: 'K', Q: 'Q', J: 'J', T: '10', 9: '9', 8: '8', 7: '7' },
  order: 'rank-of-suit',
  weli: 'Weli (6 of Diamonds)',
  weliShort: 'W♦',
};

export const CARD_NAMES = {
  /** By suit letter. */
  suitSymbols: { c: '♣', s: '♠', h: '♥', d: '♦' } as Record<string, string>,
  /** The Weli is coloured as a Schellen (diamond) card. */
  weliSuit: 'd',
  // A joker labelled "Weli" is no six of diamonds: neither its name nor its label says one.
  styles: { german: GERMAN, french: FRENCH, 'french-joker': { ...FRENCH, weli: 'Weli (joker)', weliShort: 'W' } } satisfies Record<DeckStyle, StyleNames>,
} as const;

export const SUIT_SYMBOLS = SUIT_LETTERS.map((l) => CARD_NAMES.suitSymbols[l]!);

/** `K♣`, `O♣` (german), `10♥`, `W♦` (`W` for the joker). */
export function cardShortName(token: string, style: DeckStyle): string {
  if (token === 'W') return CARD_NAMES.styles[style].weliShort;
  return `${CARD_NAMES.styles[style].short[token[0]!]}${CARD_NAMES.suitSymbols[token[1]!]}`;
}

/** `Eichel König`, `King of Clubs`, `Weli (Schellen 6)`, `Weli (6 of Diamonds)`. */
export function cardLongName(token: string, style: DeckStyle): string {
  const names = CARD_NAMES.styles[style];
  if (token === 'W') return names.weli;
  const rank = names.ranks[token[0]!]!;
  const suit = names.suits[token[1]!]!;
  return names.order === 'suit-rank' ? `${suit} ${rank}` : `${rank} of ${suit}`;
}

/** `♣ Eichel`. */
export function suitDisplayName(letter: string, style: DeckStyle): string {
  return `${CARD_NAMES.suitSymbols[letter]} ${CARD_NAMES.styles[style].suits[letter]}`;
}
