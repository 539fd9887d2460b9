// Money (docs/rules.md §3 and §4, Settlement): exact integer units, never rounded.
// didactic4 counts quarter chips (P/4 per trick is exact because every P is whole chips);
// tavern5 counts fifths of a chip, and a share is floor(P_units / 5) [D-5]. The engine settles
// into arrays it keeps (`out`), so a hand's settlement allocates nothing.

/** Largest amount in units an engine keeps exactly; passing it is an `amount overflow`. */
export const MAX_UNITS = Number.MAX_SAFE_INTEGER;

// Exact order. A sum of whole numbers is exact while every partial sum stays within MAX_UNITS,
// and a partial sum past it shows as one (rounding never brings a double back under 2^53).
// So the pot takes every payout before any penalty: its partial sums then run from P down to
// P - payouts and up to potAfter, never past both ends, and a settlement whose amounts all fit
// is computed exactly, however large (game.ts checks each amount it commits). In seat order a
// dealer's 2P could lift the pot past 2^53 before a later seat's payout brings it back, and
// the rounding there would go unseen.

export interface SettlementInput {
  numPlayers: number;
  dealer: number;
  /** P: the pot just before play, in units. */
  potBeforePlay: number;
  /** 1 for every seat that played the tricks. */
  playing: ArrayLike<number>;
  tricks: ArrayLike<number>;
  quotas: ArrayLike<number>;
}

export interface Settlement {
  payouts: number[] | Float64Array;
  penalties: number[] | Float64Array;
  potAfter: number;
  /** Some non-Bettler player missed the quota: the next tavern5 deal is a Muss. */
  anyMissedQuota: boolean;
}

/** A settlement to write into; a fresh one when none is given. */
function target(numPlayers: number, out: Settlement | undefined): Settlement {
  if (!out) return { payouts: new Array<number>(numPlayers).fill(0), penalties: new Array<number>(numPlayers).fill(0), potAfter: 0, anyMissedQuota: false };
  out.payouts.fill(0);
  out.penalties.fill(0);
  return out;
}

/** didactic4: P/4 per trick in a normal hand, nothing in a Muss; then P per failure, 2P for the declarer. */
export function settleDidactic4(input: SettlementInput, isMuss: boolean, out?: Settlement): Settlement {
  const { numPlayers, dealer, potBeforePlay: P, playing, tricks, quotas } = input;
  const settlement = target(numPlayers, out);
  const { payouts, penalties } = settlement;
  let pot = P;
  let anyMissedQuota = false;
  const perTrick = P / 4; // exact: P is whole chips, so a multiple of 4 quarter units
  // Payouts first, then penalties (exact order, above).
  if (!isMuss) {
    for (let s = 0; s < numPlayers; s++) {
      if (!playing[s]) continue;
      payouts[s] = tricks[s]! * perTrick;
      pot -= payouts[s]!;
    }
  }
  for (let s = 0; s < numPlayers; s++) {
    if (!playing[s] || tricks[s]! >= quotas[s]!) continue;
    // Every penalty comes from the same P, never from the pot as it changes.
    penalties[s] = s === dealer ? 2 * P : P;
    pot += penalties[s]!;
    anyMissedQuota = true;
  }
  settlement.potAfter = pot;
  settlement.anyMissedQuota = anyMissedQuota;
  return settlement;
}

export interface Tavern5SettlementInput extends SettlementInput {
  /** A Muss deal (7-forced included): a player who missed the quota still collects for tricks [D-9]. */
  isMuss: boolean;
  anteUnits: number;
  failPenalty: 'double-ante' | 'pot';
  /** 1 for a seat playing a Bettler contract. */
  bettler: ArrayLike<number>;
  bettlerBonusUnits: number;
}

/**
 * tavern5: tricks x share to those who met the quota (in a Muss deal to everybody [D-9]), then
 * 2 x ante (or P) per failure; Bettlers [D-6].
 */
export function settleTavern5(input: Tavern5SettlementInput, out?: Settlement): Settlement {
  const { numPlayers, potBeforePlay: P, playing, tricks, quotas, bettler } = input;
  const settlement = target(numPlayers, out);
  const { payouts, penalties } = settlement;
  const share = Math.floor(P / 5);
  const failure = input.failPenalty === 'pot' ? P : 2 * input.anteUnits;
  let pot = P;
  let anyMissedQuota = false;
  // Payouts first, then penalties (exact order, above).
  for (let s = 0; s < numPlayers; s++) {
    if (!playing[s] || bettler[s]) continue;
    if (tricks[s]! >= quotas[s]! || input.isMuss) {
      payouts[s] = tricks[s]! * share;
      pot -= payouts[s]!;
    }
  }
  for (let s = 0; s < numPlayers; s++) {
    if (!playing[s] || bettler[s] || tricks[s]! >= quotas[s]!) continue;
    penalties[s] = failure;
    pot += failure;
    anyMissedQuota = true;
  }
  for (let s = 0; s < numPlayers; s++) {
    if (!playing[s] || !bettler[s]) continue;
    if (tricks[s] === 0) {
      // A won Bettler is paid by every other player in the hand, straight, not through the pot.
      for (let o = 0; o < numPlayers; o++) {
        if (o === s || !playing[o]) continue;
        penalties[o]! += input.bettlerBonusUnits;
        payouts[s]! += input.bettlerBonusUnits;
      }
    } else {
      penalties[s]! += P;
      pot += P;
    }
  }
  settlement.potAfter = pot;
  settlement.anyMissedQuota = anyMissedQuota;
  return settlement;
}

export function exceedsUnits(value: number): boolean {
  return !(Math.abs(value) <= MAX_UNITS);
}

/**
 * The seats with the highest of `values[at + s]` (all of them when tied), as bits (1 << seat):
 * who leads a session, who tied [D-11]. Bits rather than an array: it runs at every session's end.
 */
export function leaderBits(values: Float64Array, at: number, n: number): number {
  let best = -Infinity;
  for (let s = 0; s < n; s++) best = Math.max(best, values[at + s]!);
  let bits = 0;
  for (let s = 0; s < n; s++) if (values[at + s] === best) bits |= 1 << s;
  return bits;
}
