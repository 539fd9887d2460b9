// Sizes and codes every layer shares (the observation's slices, buffers, views).

/** Players at a table: MIN_PLAYERS to MAX_SEATS (docs/rules.md §0). */
export const MIN_PLAYERS = 3;
export const MAX_SEATS = 6;
/** Room for the largest hand: a didactic4 dealer holding two face-up cards (6). */
export const HAND_CAPACITY = 8;
/** Tricks in the longest hand (tavern5). */
export const MAX_TRICKS = 5;

/** Declarations by seat: not (yet) declared, out, in, bettler (names in phases.ts DECLARATION_NAMES). */
export const DECL_NONE = 0;
export const DECL_OUT = 1;
export const DECL_IN = 2;
export const DECL_BETTLER = 3;

/** Whether a seat dealt into a normal hand plays it, by its declaration: in, or bettler (docs/rules.md §3, §4). */
export function playsByDeclaration(declaration: number): boolean {
  return declaration === DECL_IN || declaration === DECL_BETTLER;
}

/**
 * The next seat clockwise after `from` (of `numPlayers`) whose flag `flags[offset + seat]` is
 * set (dealt in, playing): play and dealing go round the table this way (docs/rules.md §2).
 * One of the seats' flags must be set.
 */
export function nextSeatWith(flags: ArrayLike<number>, offset: number, from: number, numPlayers: number): number {
  let s = from;
  // A compare rather than % n: an integer division costs more than the rest of a step.
  do s = s + 1 === numPlayers ? 0 : s + 1;
  while (!flags[offset + s]);
  return s;
}
