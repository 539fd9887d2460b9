// Rollouts for PPO: tables of a VecEnv (one hand per episode) where every seat is played either by
// the learner or by a league opponent drawn per episode. The learner's decisions are stored with
// their log-probabilities and values; each seat's rewards are credited to that seat's latest
// decision, and advantages (GAE) are computed per seat along its own chain of decisions.
//
// A rollout depends only on (seed, update, weights, league): the envs are reset from a seed of the
// update, so a resumed run replays exactly what an uninterrupted one would have.

import seedrandom from 'seedrandom';
import { MAX_SEATS, NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { VecEnv } from '../env/vec-env.js';
import type { Agent } from '../agents/agent.js';
import type { PolicyAgent } from '../agents/policy-agent.js';

/**
 * 1 / (pot in chips) of env i, at least 1 chip. In a hand the pot moves only by the antes (paid
 * before the first decision), tavern5 exchange fees and the settlement, so the decisions of one
 * hand share (nearly) one factor.
 */
function potFactor(vec: VecEnv, i: number): number {
  return 1 / Math.max(1, vec.potOf(i));
}

/** The learner's seats in a LeagueDraw. */
export const LEARNER = 'learner' as const;

/** Who plays a seat for an episode: the learner, or an opponent agent. */
export type SeatController = Agent | typeof LEARNER;

export interface Batch {
  size: number;
  observations: Float32Array;
  masks: Uint8Array;
  actions: Int32Array;
  logProbs: Float32Array;
  values: Float32Array;
  advantages: Float32Array;
  returns: Float32Array;
  // With `recordOtherHands`: what the learner needs to value the decisions again with an oracle
  // critic (`revalue`).
  /** The other seats' hands at each decision (size x ORACLE_SIZE, env/oracle.ts). */
  otherHands?: Float32Array;
  /** The reward credited to each decision. */
  rewards?: Float32Array;
  /** The row of the same seat's next decision in its episode (always a later row), -1 at the episode's end. */
  next?: Int32Array;
}

export interface RolloutStats {
  envSteps: number;
  learnerDecisions: number;
  episodes: number;
  /** Mean learner reward per finished episode (scaled chips), over learner seats. */
  learnerReturn: number;
  /** Learner seats of the finished episodes: the weight of `learnerReturn` when merging rollouts. */
  learnerEpisodeSeats: number;
}

export interface LeagueDraw {
  seats: SeatController[];
}

export class RolloutCollector {
  readonly vec: VecEnv;
  private readonly numPlayers: number;
  private readonly capacity: number;
  private readonly obs: Float32Array;
  private readonly mask: Uint8Array;
  private readonly action: Int32Array;
  private readonly logProb: Float32Array;
  private readonly value: Float32Array;
  private readonly reward: Float32Array;
  /** Index of the same seat's next decision in the episode; -1 at the episode's end. */
  private readonly next: Int32Array;
  private readonly complete: Uint8Array;
  /** Factor applied to the rewards credited to each decision (1, or 1 / pot in chips). */
  private readonly rewardFactor: Float32Array;
  private readonly normalizeByPot: boolean;
  private readonly rewardScale: number;
  /** Other seats' hands per decision, allocated at the first rollout that records them. */
  private otherHands: Float32Array | null = null;

  constructor(
    config: { rules: Record<string, unknown>; numEnvs: number; rolloutSteps: number; rewardScale: number; rewardNormalization?: 'chips' | 'pot' },
  ) {
    this.normalizeByPot = config.rewardNormalization === 'pot';
    this.rewardScale = config.rewardScale;
    this.vec = new VecEnv({ numEnvs: config.numEnvs, config: { rules: config.rules, episode: 'hand', rewardScale: config.rewardScale } });
    this.numPlayers = this.vec.numPlayers;
    this.capacity = config.numEnvs * config.rolloutSteps;
    this.obs = new Float32Array(this.capacity * OBS_SIZE);
    this.mask = new Uint8Array(this.capacity * NUM_ACTIONS);
    this.action = new Int32Array(this.capacity);
    this.logProb = new Float32Array(this.capacity);
    this.value = new Float32Array(this.capacity);
    this.reward = new Float32Array(this.capacity);
    this.next = new Int32Array(this.capacity);
    this.complete = new Uint8Array(this.capacity);
    this.rewardFactor = new Float32Array(this.capacity);
  }

  /**
   * Plays `steps` vector steps. `draw` picks the seats' controllers for each new episode; each
   * opponent acts once per step for all the rows it plays, in env order. With
   * `recordOtherHands`, the batch also carries the other seats' hands at each decision and its
   * chain of rewards, for an oracle critic to value it again (`revalue`).
   */
  collect(
    learner: PolicyAgent,
    draw: (random: () => number) => LeagueDraw,
    options: { seed: string; steps: number; gamma: number; lambda: number; teacher?: Agent; recordOtherHands?: boolean },
  ): { batch: Batch; stats: RolloutStats } {
    const { vec } = this;
    const n = this.numPlayers;
    const numEnvs = vec.numEnvs;
    const random = seedrandom.alea(`${options.seed}/rollout`);
    vec.reset(`${options.seed}/envs`);
    // Controllers as numbers: -1 the learner, k >= 0 the k-th opponent seen in this rollout.
    const controllers = new Int32Array(numEnvs * n);
    const opponents: Agent[] = [];
    const opponentIndex = new Map<Agent, number>();
    const byOpponent: number[][] = [];
    const indexOf = (controller: SeatController): number => {
      if (controller === LEARNER) return -1;
      let k = opponentIndex.get(controller);
      if (k === undefined) {
        k = opponents.push(controller) - 1;
        opponentIndex.set(controller, k);
        byOpponent.push([]);
      }
      return k;
    };
    const pending = new Int32Array(numEnvs * MAX_SEATS).fill(-1);
    const members: number[][] = Array.from({ length: numEnvs }, () => []);
    const startEpisode = (i: number) => {
      const { seats } = draw(random);
      for (let s = 0; s < n; s++) controllers[i * n + s] = indexOf(seats[s]!);
    };
    for (let i = 0; i < numEnvs; i++) startEpisode(i);
    let count = 0;
    let learnerReturn = 0;
    let learnerEpisodeSeats = 0;
    const episodeReward = new Float64Array(numEnvs * MAX_SEATS);
    const actions = new Int32Array(numEnvs);
    const learnerRows: number[] = [];
    let episodes = 0;
    if (options.recordOtherHands && !this.otherHands) this.otherHands = new Float32Array(this.capacity * ORACLE_SIZE);
    const otherHands = options.recordOtherHands ? this.otherHands! : null;

    for (let t = 0; t < options.steps; t++) {
      learnerRows.length = 0;
      byOpponent.forEach((rows) => (rows.length = 0));
      for (let i = 0; i < numEnvs; i++) {
        const controller = controllers[i * n + vec.seats[i]!]!;
        if (controller < 0) learnerRows.push(i);
        else byOpponent[controller]!.push(i);
      }
      if (learnerRows.length > 0) {
        const rows = gatherRows(vec, learnerRows);
        const { probs, values } = learner.evaluate(rows.observations, rows.masks);
        // With a teacher (imitation), the teacher plays the learner's seats and is recorded.
        const taught = options.teacher?.act(rows.observations, rows.masks, rows.seats);
        learnerRows.forEach((i, k) => {
          const a = taught ? taught[k]! : sampleFrom(probs, rows.masks, k, random);
          actions[i] = a;
          const index = count++;
          this.obs.set(rows.observations.subarray(k * OBS_SIZE, (k + 1) * OBS_SIZE), index * OBS_SIZE);
          this.mask.set(rows.masks.subarray(k * NUM_ACTIONS, (k + 1) * NUM_ACTIONS), index * NUM_ACTIONS);
          if (otherHands) vec.writeOtherHands(i, vec.seats[i]!, otherHands, index * ORACLE_SIZE);
          this.action[index] = a;
          this.logProb[index] = Math.log(Math.max(probs[k * NUM_ACTIONS + a]!, 1e-30));
          this.value[index] = values[k]!;
          this.reward[index] = 0;
          this.rewardFactor[index] = this.normalizeByPot ? potFactor(vec, i) / this.rewardScale : 1;
          this.next[index] = -1;
          this.complete[index] = 0;
          members[i]!.push(index);
          const slot = i * MAX_SEATS + vec.seats[i]!;
          if (pending[slot]! >= 0) this.next[pending[slot]!] = index;
          pending[slot] = index;
        });
      }
      byOpponent.forEach((rows, k) => {
        if (rows.length === 0) return;
        const gathered = gatherRows(vec, rows);
        const chosen = opponents[k]!.act(gathered.observations, gathered.masks, gathered.seats);
        rows.forEach((i, r) => (actions[i] = chosen[r]!));
      });
      vec.step(actions);
      for (let i = 0; i < numEnvs; i++) {
        for (let s = 0; s < n; s++) {
          const r = vec.rewards[i * MAX_SEATS + s]!;
          const p = pending[i * MAX_SEATS + s]!;
          if (p >= 0) this.reward[p]! += r * this.rewardFactor[p]!;
          if (controllers[i * n + s]! < 0) episodeReward[i * MAX_SEATS + s]! += r;
        }
        if (!vec.terminated[i] && !vec.truncated[i]) continue;
        // The episode (a hand) is over: its learner decisions are complete.
        episodes++;
        for (let s = 0; s < n; s++) {
          const slot = i * MAX_SEATS + s;
          if (controllers[i * n + s]! < 0) {
            learnerReturn += episodeReward[slot]!;
            learnerEpisodeSeats++;
          }
          episodeReward[slot] = 0;
          pending[slot] = -1;
        }
        for (const k of members[i]!) this.complete[k] = 1;
        members[i]!.length = 0;
        startEpisode(i);
      }
    }
    return {
      batch: this.finish(count, options.gamma, options.lambda, otherHands),
      stats: {
        envSteps: options.steps * numEnvs,
        learnerDecisions: count,
        episodes,
        learnerReturn: learnerEpisodeSeats > 0 ? learnerReturn / learnerEpisodeSeats : 0,
        learnerEpisodeSeats,
      },
    };
  }

  /** GAE along each seat's chain of decisions, over complete episodes only; `otherHands` go with the batch. */
  private finish(count: number, gamma: number, lambda: number, otherHands: Float32Array | null): Batch {
    const advantage = gae(count, this.reward, this.value, this.next, gamma, lambda, this.complete);
    const kept: number[] = [];
    for (let k = 0; k < count; k++) if (this.complete[k]) kept.push(k);
    const size = kept.length;
    const batch: Batch = {
      size,
      observations: new Float32Array(size * OBS_SIZE),
      masks: new Uint8Array(size * NUM_ACTIONS),
      actions: new Int32Array(size),
      logProbs: new Float32Array(size),
      values: new Float32Array(size),
      advantages: new Float32Array(size),
      returns: new Float32Array(size),
      ...(otherHands ? { otherHands: new Float32Array(size * ORACLE_SIZE), rewards: new Float32Array(size), next: new Int32Array(size) } : {}),
    };
    // Row of each kept decision; a complete decision's successor is complete too (same episode).
    const row = new Int32Array(count).fill(-1);
    kept.forEach((k, j) => (row[k] = j));
    kept.forEach((k, j) => {
      if (otherHands) {
        batch.otherHands!.set(otherHands.subarray(k * ORACLE_SIZE, (k + 1) * ORACLE_SIZE), j * ORACLE_SIZE);
        batch.rewards![j] = this.reward[k]!;
        batch.next![j] = this.next[k]! >= 0 ? row[this.next[k]!]! : -1;
      }
      batch.observations.set(this.obs.subarray(k * OBS_SIZE, (k + 1) * OBS_SIZE), j * OBS_SIZE);
      batch.masks.set(this.mask.subarray(k * NUM_ACTIONS, (k + 1) * NUM_ACTIONS), j * NUM_ACTIONS);
      batch.actions[j] = this.action[k]!;
      batch.logProbs[j] = this.logProb[k]!;
      batch.values[j] = this.value[k]!;
      batch.advantages[j] = advantage[k]!;
      batch.returns[j] = advantage[k]! + this.value[k]!;
    });
    return batch;
  }
}

/**
 * Values the batch's decisions with `values` and computes its advantages and returns again (GAE
 * along the chains in `next`), as `collect` would have with those values. Needs a batch collected
 * with `recordOtherHands`.
 */
export function revalue(batch: Batch, values: Float32Array, gamma: number, lambda: number): void {
  const { rewards, next } = batch;
  if (!rewards || !next) throw new Error('revalue needs a batch collected with recordOtherHands');
  const advantage = gae(batch.size, rewards, values, next, gamma, lambda);
  for (let j = 0; j < batch.size; j++) {
    batch.values[j] = values[j]!;
    batch.advantages[j] = advantage[j]!;
    batch.returns[j] = advantage[j]! + values[j]!;
  }
}

/**
 * GAE of `n` decisions along their chains (`next`: the same seat's next decision, always later,
 * -1 at the episode's end), skipping those `include` marks 0. The one recurrence of the rollout
 * and of `revalue`.
 */
function gae(n: number, rewards: ArrayLike<number>, values: ArrayLike<number>, next: ArrayLike<number>, gamma: number, lambda: number, include?: ArrayLike<number>): Float32Array {
  const advantage = new Float32Array(n);
  // `next` always points forward, so a backward pass sees a decision's successor first.
  for (let k = n - 1; k >= 0; k--) {
    if (include && !include[k]) continue;
    const after = next[k]!;
    const nextValue = after >= 0 ? values[after]! : 0;
    const nextAdvantage = after >= 0 ? advantage[after]! : 0;
    const delta = rewards[k]! + gamma * nextValue - values[k]!;
    advantage[k] = delta + gamma * lambda * nextAdvantage;
  }
  return advantage;
}

function gatherRows(vec: VecEnv, rows: number[]): { observations: Float32Array; masks: Uint8Array; seats: Int32Array } {
  const observations = new Float32Array(rows.length * OBS_SIZE);
  const masks = new Uint8Array(rows.length * NUM_ACTIONS);
  const seats = new Int32Array(rows.length);
  rows.forEach((i, k) => {
    observations.set(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE), k * OBS_SIZE);
    masks.set(vec.masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS), k * NUM_ACTIONS);
    seats[k] = vec.seats[i]!;
  });
  return { observations, masks, seats };
}

/** Draws from a row of probabilities; only legal actions can come out, even from a broken model. */
function sampleFrom(probs: Float32Array, masks: Uint8Array, row: number, random: () => number): number {
  const base = row * NUM_ACTIONS;
  let u = random();
  let last = -1;
  for (let a = 0; a < NUM_ACTIONS; a++) {
    const p = probs[base + a]!;
    if (!masks[base + a] || !(p > 0)) continue;
    last = a;
    u -= p;
    if (u < 0) return a;
  }
  if (last >= 0) return last;
  for (let a = 0; a < NUM_ACTIONS; a++) if (masks[base + a]) return a;
  throw new Error(`rollout: row ${row} has no legal action`);
}
