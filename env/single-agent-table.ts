// A table with one learning seat: the other seats are played by given policies, so a step (and
// a reset) returns only when the learner must act again or the episode ends. SingleAgentEnv and
// the vector envs' single-agent mode (VecEnvOptions.opponents) step these, so both give the same
// trajectories.
//
// Rewards: a step writes every seat's chip change since the learner's previous action (the
// learner's own, in its column, is what it learns from). What the learner gains or pays before
// its first action of an episode (the stakes, the bots' moves) is added to its first step, so an
// episode's rewards sum to its net. Episodes that end before the learner acts at all (a tavern5
// hand episode whose walkover the learner deals) are played through at the reset: their rewards
// go into the next episode's first step like the stakes do (so the rewards of a session sum to
// its net even then), and the learner's part of them is also in `skippedReward`. Such an
// episode was never reported, so it does not become the kept ended episode (Table.reset's
// `unseen`): that stays the one the learner's last step ended.

import { MAX_SEATS, NUM_ACTIONS } from './rules/index.js';
import { OBS_SIZE, encodeObservation } from './observation.js';
import { RUNNING, TERMINATED, Table, type EnvConfig, type EnvTable } from './table.js';
import type { Policy } from './policy.js';
import type { KratzenGame } from './rules/index.js';

/** playOpponents stopped at its decision limit with an opponent still to act (not a Table outcome). */
const OPPONENT_TO_ACT = -1;

export class SingleAgentTable implements EnvTable {
  readonly table: Table;
  /** The learner's reward of the episodes reset() played through before it could act (also in the first step's reward). */
  skippedReward = 0;
  // Sums in doubles, stored once: a step's reward is a float32 of the exact sum.
  private readonly pending = new Float64Array(MAX_SEATS);
  private readonly total = new Float64Array(MAX_SEATS);
  private readonly stepRewards = new Float32Array(MAX_SEATS);
  private readonly obs = new Float32Array(OBS_SIZE);
  private readonly mask = new Uint8Array(NUM_ACTIONS);
  private readonly seatBuffer = new Int32Array(1);
  /**
   * Why the opponents could not go on in this episode (a policy threw, or chose an illegal
   * action), until the next reset. The learner's action and some opponents' were applied by then:
   * the next step moved an opponent's seat as if it were the learner's.
   */
  private failure: string | null = null;

  constructor(
    game: KratzenGame,
    config: EnvConfig,
    readonly learnerSeat: number,
    private readonly opponents: readonly (Policy | null)[],
    recycling: 'none' | 'reuse' | 'keep-last' = 'none',
  ) {
    if (!Number.isInteger(learnerSeat) || learnerSeat < 0 || learnerSeat >= game.numPlayers) {
      throw new RangeError(`learnerSeat must be a seat 0..${game.numPlayers - 1}`);
    }
    opponents.forEach((p, s) => {
      if (s !== learnerSeat && typeof p?.act !== 'function') throw new TypeError(`opponents: seat ${s} needs a policy (an object with act()), got ${String(p).slice(0, 40)}`);
    });
    this.table = new Table(game, config, recycling);
  }

  get state() {
    return this.table.state;
  }

  get endedState() {
    return this.table.endedState;
  }

  get endedEpisodeState() {
    return this.table.endedEpisodeState;
  }

  get endedHands() {
    return this.table.endedHands;
  }

  get endedSessionWentOn() {
    return this.table.endedSessionWentOn;
  }

  /** The learner while it is to act, -1 once the episode is over (or its opponents failed). */
  get seatToAct(): number {
    return this.failure === null && this.table.state.currentSeat === this.learnerSeat ? this.learnerSeat : -1;
  }

  /** Why this episode cannot go on (its opponents failed) and what to do, or null. */
  get failed(): string | null {
    return this.failure;
  }

  get observer(): number {
    return this.learnerSeat;
  }

  get illegalActionSeat(): number {
    return this.table.illegalActionSeat;
  }

  /** Starts an episode and plays the other seats until the learner must act. */
  reset(seed?: number | string): void {
    this.beginEpisode(seed);
    // Not through resetSteps: hand episodes reset at every hand (see step).
    for (let guard = 0; this.playOpponentsOrFail(this.pending, Infinity) !== RUNNING; guard++) this.playedThrough(guard);
  }

  /**
   * reset, in pieces of one opponent decision each (docs/bridge.md, Fair under load), the first
   * empty with `pauseFirst`. Drained, it is reset. A caller that stops before the end leaves the
   * episode failed (`failed`): it could have left the learner a state where it is not its turn.
   */
  *resetSteps(seed?: number | string, pauseFirst = false): Generator<void, void> {
    yield* this.failedIfStopped(this.resetPieces(seed, pauseFirst));
  }

  private *resetPieces(seed: number | string | undefined, pauseFirst: boolean): Generator<void, void> {
    if (pauseFirst) yield;
    this.beginEpisode(seed);
    for (let guard = 0; (yield* this.opponentDecisions(this.pending)) !== RUNNING; guard++) {
      // The next episode's decisions go in pieces of their own.
      yield;
      this.playedThrough(guard);
    }
  }

  private beginEpisode(seed: number | string | undefined): void {
    this.table.reset(seed);
    this.failure = null;
    this.pending.fill(0);
    this.skippedReward = 0;
  }

  /** After an episode that ended before the learner could act: the next one, which is not reported (Table.reset's `unseen`). */
  private playedThrough(guard: number): void {
    this.skippedReward = this.pending[this.learnerSeat]!;
    if (guard > 1000) throw new Error('the learner never gets to act');
    this.table.reset(undefined, true);
  }

  /** The learner's action; then the other seats until the learner must act again. */
  step(action: number, rewards: Float32Array, offset: number): number {
    let outcome = this.applyLearnerAction(action);
    // Not through stepSteps: its generators cost a vector env of random bots ~15% of its steps.
    if (outcome === RUNNING) outcome = this.playOpponentsOrFail(this.total, Infinity);
    return this.writeStepRewards(outcome, rewards, offset);
  }

  /** step in pieces of one opponent decision each, as resetSteps. Drained, it is step. */
  *stepSteps(action: number, rewards: Float32Array, offset: number): Generator<void, number> {
    let outcome = this.applyLearnerAction(action);
    if (outcome === RUNNING) outcome = yield* this.failedIfStopped(this.opponentDecisions(this.total));
    return this.writeStepRewards(outcome, rewards, offset);
  }

  /** Applies the learner's action, its rewards and those pending from the reset into `total`. */
  private applyLearnerAction(action: number): number {
    if (this.failure !== null) throw new Error(this.failure);
    const outcome = this.table.step(action, this.stepRewards, 0);
    for (let s = 0; s < MAX_SEATS; s++) this.total[s] = this.stepRewards[s]! + this.pending[s]!;
    this.pending.fill(0);
    return outcome;
  }

  private writeStepRewards(outcome: number, rewards: Float32Array, offset: number): number {
    for (let s = 0; s < MAX_SEATS; s++) rewards[offset + s] = this.total[s]!;
    return outcome;
  }

  /** The opponents' decisions until the learner's turn or the episode's end (its outcome), one a piece. */
  private *opponentDecisions(rewards: Float64Array): Generator<void, number> {
    let outcome: number;
    while ((outcome = this.playOpponentsOrFail(rewards, 1)) === OPPONENT_TO_ACT) yield;
    return outcome;
  }

  /** `pieces`, marking the episode failed if the caller stops them before they end (not if they throw). */
  private *failedIfStopped<T>(pieces: Generator<void, T>): Generator<void, T> {
    let ended = false;
    try {
      const value = yield* pieces;
      ended = true;
      return value;
    } catch (e) {
      ended = true;
      throw e;
    } finally {
      if (!ended && this.failure === null) {
        this.failure = 'a step or reset of this env was stopped before its opponents had played: reset this env before stepping it';
      }
    }
  }

  /** playOpponents, marking this episode failed when an opponent's policy fails. */
  private playOpponentsOrFail(rewards: Float64Array, maxDecisions: number): number {
    try {
      return this.playOpponents(rewards, maxDecisions);
    } catch (e) {
      this.failure = `the opponents failed in this episode (${String((e as Error)?.message ?? e).slice(0, 240)}): reset this env before stepping it`;
      throw e;
    }
  }

  /**
   * Lets the opponents act until it is the learner's turn (RUNNING), the episode ends (its
   * outcome), or they have made `maxDecisions` decisions with one still to act (OPPONENT_TO_ACT),
   * adding the rewards into `rewards`.
   */
  private playOpponents(rewards: Float64Array, maxDecisions: number): number {
    const table = this.table;
    const state = table.state;
    for (let decisions = 0; table.seatToAct >= 0 && table.seatToAct !== this.learnerSeat; decisions++) {
      if (decisions === maxDecisions) return OPPONENT_TO_ACT;
      const seat = table.seatToAct;
      encodeObservation(state, seat, this.obs);
      state.legalActionMask(this.mask);
      this.seatBuffer[0] = seat;
      const chosen: ArrayLike<number> | null | undefined = this.opponents[seat]!.act(this.obs, this.mask, this.seatBuffer);
      const action = chosen?.[0];
      // A policy's own fault, not the learner's episode to end: named as such, nothing applied.
      // Judged by the state, not by the mask the policy was handed: one that wrote 1s into it
      // got an illegal action past this check, and the episode ended on the learner's step.
      if (!(Number.isInteger(action) && action! >= 0 && action! < NUM_ACTIONS && state.isLegal(action!))) {
        throw new Error(`the opponent policy of seat ${seat} chose ${chosen == null ? `no actions (act returned ${String(chosen)})` : String(action).slice(0, 40)}, not one of its legal actions`);
      }
      const outcome = table.step(action!, this.stepRewards, 0);
      for (let s = 0; s < MAX_SEATS; s++) rewards[s]! += this.stepRewards[s]!;
      if (outcome !== RUNNING) return outcome;
    }
    return table.seatToAct < 0 ? TERMINATED : RUNNING;
  }
}
