// The phases of a state and the kinds of hand, each list defined once with its index: the
// observation's one-hots, stored results and every view use these.

/**
 * `deal`: the next hand waits for a deck (`dealNextHand`), as a record without a seed stops
 * after its last hand; it has no legal actions but is not terminal. `over`: the session ended.
 */
export type Phase = 'deal' | 'trump' | 'discard' | 'declare' | 'exchange' | 'play' | 'over';
export type HandKind = 'funding-muss' | 'forced-muss' | 'normal' | 'muss' | 'tie-break';

/** Every phase, in the order of their indices. */
export const PHASES: readonly Phase[] = ['deal', 'trump', 'discard', 'declare', 'exchange', 'play', 'over'];

/** Every hand kind, in the order of their indices (didactic4's three, then tavern5's). */
export const HAND_KINDS: readonly HandKind[] = ['funding-muss', 'forced-muss', 'normal', 'muss', 'tie-break'];

// Switches on interned strings compile to pointer compares; keyed object lookups do not.

/** The index of `phase` in PHASES. */
export function phaseIndex(phase: Phase): number {
  switch (phase) {
    case 'deal':
      return 0;
    case 'trump':
      return 1;
    case 'discard':
      return 2;
    case 'declare':
      return 3;
    case 'exchange':
      return 4;
    case 'play':
      return 5;
    case 'over':
      return 6;
  }
}

/** The index of `kind` in HAND_KINDS. */
export function handKindIndex(kind: HandKind): number {
  switch (kind) {
    case 'funding-muss':
      return 0;
    case 'forced-muss':
      return 1;
    case 'normal':
      return 2;
    case 'muss':
      return 3;
    case 'tie-break':
      return 4;
  }
}

/** Declarations by seat, in the order of their codes (state-data.ts DECL_*). */
export const DECLARATION_NAMES = ['none', 'out', 'in', 'bettler'] as const;
