// PIMC (perfect-information Monte Carlo) search: sample the hidden cards consistently with what
// the seat knows (the rules core's sampleState, from the seat view the observation decodes to),
// play each legal action out to the end of the hand with a rollout policy, and choose the action
// with the best mean chip result for the seat. The rules it simulates are the table's, read from
// the observation (observation v2 carries the rule set).
// Budget: a number of sampled deals per decision, or milliseconds (not reproducible across
// machines, so the default is samples).

import seedrandom from 'seedrandom';
import { AmountOverflowError, NUM_ACTIONS, SeatView, checkOptionKeys, checkSeed, sampleState, type KratzenState } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { decodeSeatView, seatViewJson } from '../env/observation-view.js';
import { checkBatch, decodeRow, type Agent } from './agent.js';
import { HeuristicAgent } from './heuristic.js';

export interface PimcOptions {
  /** Sampled deals per decision. @default 12 */
  samples?: number;
  /** If set, sample until this many milliseconds have passed instead (at least one sample). */
  timeBudgetMs?: number;
  /**
   * A decision stops once its playouts have simulated this many actions (after at least one
   * sample), with samples or a time budget: a sample's cost grows with the players, the legal
   * actions and the rest of the hand, so servers bound the work this way. It counts work, not
   * time, so a decision by samples it cuts short is still reproducible. @default Infinity
   */
  maxSimulatedActions?: number;
  /** How the rest of the hand is played in each simulation. @default 'heuristic' */
  rollout?: 'heuristic' | 'random';
  seed?: number | string;
}

/** At most this many samples and milliseconds a decision: only what keeps one finite (a spec's limits may be lower, see registry.ts). */
export const MAX_PIMC_SAMPLES = 100_000;
export const MAX_PIMC_TIME_BUDGET_MS = 600_000;

/** Every option PimcAgent takes (complete by type). */
const PIMC_OPTIONS = Object.keys({ samples: true, timeBudgetMs: true, maxSimulatedActions: true, rollout: true, seed: true } satisfies Record<keyof PimcOptions, true>);

export class PimcAgent implements Agent {
  readonly name = 'pimc';
  private readonly samples: number;
  private readonly timeBudgetMs: number | undefined;
  private readonly maxSimulatedActions: number;
  private readonly rollout: 'heuristic' | 'random';
  private readonly random: () => number;
  private readonly heuristic = new HeuristicAgent();
  private readonly obs = new Float32Array(OBS_SIZE);
  private readonly mask = new Uint8Array(NUM_ACTIONS);
  private readonly seat = new Int32Array(1);
  private readonly view = new SeatView();

  constructor(options: PimcOptions = {}) {
    // createAgent checks a spec's options; a caller of the class got none of it: samples NaN made
    // a decision that never ended (`k >= NaN` is never true), 0 or 2.5 passed without a word.
    checkOptionKeys(options, PIMC_OPTIONS, 'PimcAgent');
    const { samples = 12, timeBudgetMs, maxSimulatedActions = Infinity, rollout = 'heuristic' } = options;
    // Bounded as specs are: samples 2^53 - 1 or a budget of 1e300 ms made a decision that never ended.
    if (!Number.isSafeInteger(samples) || samples < 1 || samples > MAX_PIMC_SAMPLES) {
      throw new RangeError(`PimcAgent: samples must be an integer 1..${MAX_PIMC_SAMPLES}, got ${String(samples).slice(0, 40)}`);
    }
    if (timeBudgetMs !== undefined && !(typeof timeBudgetMs === 'number' && timeBudgetMs > 0 && timeBudgetMs <= MAX_PIMC_TIME_BUDGET_MS)) {
      throw new RangeError(`PimcAgent: timeBudgetMs must be a positive number of milliseconds, at most ${MAX_PIMC_TIME_BUDGET_MS}, got ${String(timeBudgetMs).slice(0, 40)}`);
    }
    if (!(maxSimulatedActions === Infinity || (Number.isSafeInteger(maxSimulatedActions) && maxSimulatedActions >= 1))) {
      throw new RangeError(`PimcAgent: maxSimulatedActions must be a positive integer or Infinity, got ${String(maxSimulatedActions).slice(0, 40)}`);
    }
    if (rollout !== 'heuristic' && rollout !== 'random') throw new RangeError(`PimcAgent: rollout is heuristic or random, got ${String(rollout).slice(0, 40)}`);
    this.samples = samples;
    this.timeBudgetMs = timeBudgetMs;
    this.maxSimulatedActions = maxSimulatedActions;
    this.rollout = rollout;
    if (options.seed !== undefined) checkSeed(options.seed);
    this.random = seedrandom(`pimc/${options.seed ?? 0}`);
  }

  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    checkBatch(observations, masks, seats);
    const actions = new Int32Array(seats.length);
    for (let i = 0; i < seats.length; i++) actions[i] = this.decide(observations, masks, i);
    return actions;
  }

  private decide(observations: Float32Array, masks: Uint8Array, row: number): number {
    const legal: number[] = [];
    for (let a = 0; a < NUM_ACTIONS; a++) if (masks[row * NUM_ACTIONS + a]) legal.push(a);
    if (legal.length === 0) throw new Error(`pimc agent: row ${row} has no legal action`);
    if (legal.length === 1) return legal[0]!;
    const view = decodeRow(row, () => decodeSeatView(observations, row * OBS_SIZE, this.view));
    // A row within every slice's bounds may still be no table the rules can deal from (a trick
    // number or a dealer weight no encoder writes, balances past what a hand can pay): sampling
    // and playing it out failed as internal errors, or as an overflow of a simulated hand.
    return decodeRow(row, () => this.search(view, legal));
  }

  /** The legal action with the best mean chip result over the sampled deals. */
  private search(view: SeatView, legal: number[]): number {
    const totals = new Float64Array(legal.length);
    let simulations = 0;
    const started = Date.now();
    let simulated = 0;
    for (let k = 0; ; k++) {
      // The action cap holds for a time budget too: a fast machine's playouts in a short budget
      // would otherwise hold another client's step on a server far longer than the budget.
      if (k > 0 && simulated >= this.maxSimulatedActions) break;
      if (this.timeBudgetMs === undefined ? k >= this.samples : k > 0 && Date.now() - started >= this.timeBudgetMs) break;
      const state = sampleState(view, this.random);
      if (!state) {
        if (k >= 3 * this.samples) break;
        continue;
      }
      const start = state.balance(view.seat);
      legal.forEach((action, j) => {
        if (!state.isLegal(action)) return;
        const copy = state.clone();
        simulated += this.playOut(copy, action);
        totals[j]! += copy.balance(view.seat) - start;
      });
      simulations++;
    }
    if (simulations === 0) {
      // No consistent deal found (or a tie-break deal): fall back to the heuristic.
      return this.heuristic.choose(seatViewJson(view), legal);
    }
    let best = 0;
    for (let j = 1; j < legal.length; j++) if (totals[j]! > totals[best]!) best = j;
    return legal[best]!;
  }

  /**
   * Applies `first`, then plays the hand to its end (the state pauses between hands); the number
   * of actions played. A simulated hand whose amounts would pass 2^53 units ends there, as the
   * session does in an env (truncated, docs/rules.md §3), valued at the balances before it: the
   * overflow of a sampled deal was reported as an invalid observation, and the step failed.
   */
  private playOut(state: KratzenState, first: number): number {
    let played = 1;
    try {
      state.apply(first);
      while (state.phase !== 'deal' && state.phase !== 'over') {
        played++;
        state.apply(this.rolloutAction(state));
      }
    } catch (e) {
      if (!(e instanceof AmountOverflowError)) throw e;
    }
    return played;
  }

  /** The rollout policy's action for the seat to act. */
  private rolloutAction(state: KratzenState): number {
    const count = state.numLegalActions();
    if (this.rollout === 'random') return state.legalActionAt(Math.floor(this.random() * count));
    if (count === 1) return state.legalActionAt(0);
    const seat = state.currentSeat;
    encodeObservation(state, seat, this.obs);
    state.legalActionMask(this.mask);
    this.seat[0] = seat;
    return this.heuristic.act(this.obs, this.mask, this.seat)[0]!;
  }
}

