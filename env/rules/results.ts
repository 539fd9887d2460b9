// Finished hands, stored flat (RESULT_STRIDE doubles each) and turned into HandResult objects
// only when read: objects kept for a whole session would each survive a young-generation GC in a
// vector env that never reads them.

import { HAND_KINDS, handKindIndex, type HandKind } from './phases.js';
import { MAX_SEATS } from './sizes.js';

/** One finished hand, amounts in units (see `KratzenGame.unitsPerChip`); frozen, like its arrays: states share them with every reader. */
export interface HandResult {
  readonly hand: number;
  readonly dealer: number;
  readonly trump: number;
  /** The card whose suit set trump; -1 when a tavern5 dealer named it after a turned Weli. */
  readonly indicator: number;
  readonly kind: HandKind;
  readonly walkover: boolean;
  readonly potBeforePlay: number;
  readonly in: readonly boolean[];
  readonly tricks: readonly number[];
  readonly payouts: readonly number[];
  readonly penalties: readonly number[];
  /** Exchange fees per seat; null when the exchange variant is off. */
  readonly fees: readonly number[] | null;
  readonly potAfter: number;
  readonly balances: readonly number[];
}

/** A hand's fields as the state commits them (per-seat arrays hold MAX_SEATS entries). */
export interface HandRecordInput {
  hand: number;
  dealer: number;
  trump: number;
  indicator: number;
  kind: HandKind;
  walkover: boolean;
  potBeforePlay: number;
  potAfter: number;
  hasFees: boolean;
  playing: ArrayLike<number>;
  tricks: ArrayLike<number>;
  payouts: ArrayLike<number>;
  penalties: ArrayLike<number>;
  fees: ArrayLike<number>;
  balances: ArrayLike<number>;
}

/** A HandRecordInput to fill and push hand after hand: arrays of its own, and the settlement's payouts and penalties. */
export interface HandRecordScratch extends HandRecordInput {
  playing: Uint8Array;
  tricks: Uint8Array;
  fees: Float64Array;
  balances: Float64Array;
}

export function handRecordScratch(payouts: ArrayLike<number>, penalties: ArrayLike<number>): HandRecordScratch {
  const [playing, tricks] = [new Uint8Array(MAX_SEATS), new Uint8Array(MAX_SEATS)];
  const [fees, balances] = [new Float64Array(MAX_SEATS), new Float64Array(MAX_SEATS)];
  return { hand: 0, dealer: 0, trump: 0, indicator: 0, kind: 'normal', walkover: false, potBeforePlay: 0, potAfter: 0, hasFees: false, playing, tricks, payouts, penalties, fees, balances };
}

const R_HAND = 0;
const R_DEALER = 1;
const R_TRUMP = 2;
const R_INDICATOR = 3;
const R_KIND = 4;
const R_WALKOVER = 5;
const R_POT_BEFORE = 6;
const R_POT_AFTER = 7;
const R_HAS_FEES = 8;
const R_SEATS = 9;
const S_IN = 0;
const S_TRICKS = 1;
const S_PAYOUTS = 2;
const S_PENALTIES = 3;
const S_FEES = 4;
const S_BALANCES = 5;
/** Doubles per finished hand. */
export const RESULT_STRIDE = R_SEATS + 6 * MAX_SEATS;

export class ResultStore {
  private data: Float64Array;
  /** Hands finished this session (a tavern5 tie-break deal counts). */
  count = 0;
  private cache: HandResult[] = [];

  /**
   * `firstData` is the first room (a view into the state's memory, state-data.ts): a new state
   * then allocates nothing here; a longer session moves to an array of its own.
   */
  constructor(
    private readonly numPlayers: number,
    private readonly firstData: Float64Array,
  ) {
    this.data = firstData;
  }

  clear(): void {
    this.count = 0;
    this.cache = [];
  }

  copyFrom(other: ResultStore): void {
    this.data = copyInto(this.firstData, other.data);
    this.count = other.count;
    this.cache = other.cache.slice();
  }

  push(r: HandRecordInput): void {
    if ((this.count + 1) * RESULT_STRIDE > this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    const data = this.data;
    const base = this.count++ * RESULT_STRIDE;
    data[base + R_HAND] = r.hand;
    data[base + R_DEALER] = r.dealer;
    data[base + R_TRUMP] = r.trump;
    data[base + R_INDICATOR] = r.indicator;
    data[base + R_KIND] = handKindIndex(r.kind);
    data[base + R_WALKOVER] = r.walkover ? 1 : 0;
    data[base + R_POT_BEFORE] = r.potBeforePlay;
    data[base + R_POT_AFTER] = r.potAfter;
    data[base + R_HAS_FEES] = r.hasFees ? 1 : 0;
    for (let s = 0; s < this.numPlayers; s++) {
      const at = base + R_SEATS + s;
      data[at + S_IN * MAX_SEATS] = r.playing[s] === 1 ? 1 : 0;
      data[at + S_TRICKS * MAX_SEATS] = r.tricks[s]!;
      data[at + S_PAYOUTS * MAX_SEATS] = r.payouts[s]!;
      data[at + S_PENALTIES * MAX_SEATS] = r.penalties[s]!;
      data[at + S_FEES * MAX_SEATS] = r.fees[s]!;
      data[at + S_BALANCES * MAX_SEATS] = r.balances[s]!;
    }
  }

  /** Every finished hand; `clear` begins a new array (an old one stays valid). */
  all(): readonly HandResult[] {
    const cache = this.cache;
    for (let h = cache.length; h < this.count; h++) cache.push(this.at(h));
    return cache;
  }

  /** Finished hand `h` alone (0 .. count - 1), without building the others. */
  one(h: number): HandResult {
    if (!Number.isInteger(h) || h < 0 || h >= this.count) throw new RangeError(`hand must be 0..${this.count - 1}, got ${h}`);
    return this.cache[h] ?? this.at(h);
  }

  /** The pot after the last finished hand (for views that need it without building results). */
  lastPotAfter(): number | null {
    return this.count === 0 ? null : this.data[(this.count - 1) * RESULT_STRIDE + R_POT_AFTER]!;
  }

  private at(h: number): HandResult {
    const n = this.numPlayers;
    const data = this.data;
    const base = h * RESULT_STRIDE;
    const seats = (field: number) => Object.freeze(Array.from({ length: n }, (_, s) => data[base + R_SEATS + field * MAX_SEATS + s]!));
    return Object.freeze({
      hand: data[base + R_HAND]!,
      dealer: data[base + R_DEALER]!,
      trump: data[base + R_TRUMP]!,
      indicator: data[base + R_INDICATOR]!,
      kind: HAND_KINDS[data[base + R_KIND]!]!,
      walkover: data[base + R_WALKOVER] === 1,
      potBeforePlay: data[base + R_POT_BEFORE]!,
      in: Object.freeze(seats(S_IN).map((v) => v === 1)),
      tricks: seats(S_TRICKS),
      payouts: seats(S_PAYOUTS),
      penalties: seats(S_PENALTIES),
      fees: data[base + R_HAS_FEES] === 1 ? seats(S_FEES) : null,
      potAfter: data[base + R_POT_AFTER]!,
      balances: seats(S_BALANCES),
    });
  }
}

/** `source` copied into `first` when it fits there, else into an array of its own. */
export function copyInto<T extends Float64Array | Int8Array | Int16Array>(first: T, source: T): T {
  if (source.length > first.length) return source.slice() as T;
  first.set(source);
  return first;
}
