// N tables stepped in one call over flat typed arrays (Gymnasium's vector API in camelCase).
//
// Buffers (row i belongs to env i): observations N x OBS_SIZE, masks N x NUM_ACTIONS (legal
// actions of the seat to act), seats N (seat to act), rewards N x MAX_SEATS (each seat's chip
// change in this step, see env.ts), terminated / truncated N (0 or 1).
// Autoreset is `same-step` (Gymnasium SAME_STEP): an env whose episode ends inside `step` is
// reset at once; its row then holds the new episode's first observation, while
// `finalObservations` row i and `finalInfo(i)` describe the episode that ended.
// Seeds: env i of `reset(seed)` plays the sessions `<seed>:<i>`, `<seed>:<i>/1`, ...
// The buffers are the env's own: read them, copy them, but do not write into them (observation
// rows are updated sparsely, clearing only what the previous step set).

import { MAX_SEATS, NUM_ACTIONS } from './rules/index.js';
import { OBS_SIZE, OBS_VERSION, ObservationRows, encodeObservation } from './observation.js';
import { RUNNING, TRUNCATED, Table, parseEnvConfig, type EnvConfig, type EnvConfigInput } from './table.js';
import type { EnvMetadata } from './env.js';

export interface VecBuffers {
  observations: Float32Array;
  masks: Uint8Array;
  seats: Int32Array;
  rewards: Float32Array;
  terminated: Uint8Array;
  truncated: Uint8Array;
  finalObservations: Float32Array;
  /** Balances in chips at the end of each env's last finished episode. */
  finalBalances: Float64Array;
  /** Hands the session had finished when the episode ended, and the seat of an illegal action (-1 if none). */
  finalHands: Int32Array;
  finalIllegalSeat: Int32Array;
}

export interface EpisodeInfo {
  balances: number[];
  hands: number;
  illegalActionSeat?: number;
}

export function allocateVecBuffers(numEnvs: number, allocate: (bytes: number) => ArrayBufferLike = (b) => new ArrayBuffer(b)): VecBuffers {
  const f32 = (len: number) => new Float32Array(allocate(len * 4));
  const f64 = (len: number) => new Float64Array(allocate(len * 8));
  const i32 = (len: number) => new Int32Array(allocate(len * 4));
  const u8 = (len: number) => new Uint8Array(allocate(len));
  return {
    observations: f32(numEnvs * OBS_SIZE),
    masks: u8(numEnvs * NUM_ACTIONS),
    seats: i32(numEnvs),
    rewards: f32(numEnvs * MAX_SEATS),
    terminated: u8(numEnvs),
    truncated: u8(numEnvs),
    finalObservations: f32(numEnvs * OBS_SIZE),
    finalBalances: f64(numEnvs * MAX_SEATS),
    finalHands: i32(numEnvs),
    finalIllegalSeat: i32(numEnvs),
  };
}

/** Views of envs [start, start + count) of buffers laid out for more envs. */
export function sliceVecBuffers(b: VecBuffers, start: number, count: number): VecBuffers {
  const rows = <T extends { subarray(a: number, b: number): T }>(a: T, width: number) => a.subarray(start * width, (start + count) * width);
  return {
    observations: rows(b.observations, OBS_SIZE),
    masks: rows(b.masks, NUM_ACTIONS),
    seats: rows(b.seats, 1),
    rewards: rows(b.rewards, MAX_SEATS),
    terminated: rows(b.terminated, 1),
    truncated: rows(b.truncated, 1),
    finalObservations: rows(b.finalObservations, OBS_SIZE),
    finalBalances: rows(b.finalBalances, MAX_SEATS),
    finalHands: rows(b.finalHands, 1),
    finalIllegalSeat: rows(b.finalIllegalSeat, 1),
  };
}

export interface VecEnvOptions {
  numEnvs: number;
  /** Env config shared by every table. */
  config?: EnvConfigInput;
  /** Index of the first env in a larger vector (worker slices), for seeding. */
  firstEnvIndex?: number;
  /** Buffers to write into (shared memory); allocated when absent. */
  buffers?: VecBuffers;
  /**
   * Keep the state of each env's last finished session readable (`endedStateOf(i)`) until its
   * next one finishes. Either way a table starts its next session in a recycled state object,
   * which saves the allocation and garbage collection of a state per episode.
   */
  keepEndedStates?: boolean;
}

/** The buffer views and final-episode info shared by VecEnv and WorkerVecEnv. */
export abstract class VecEnvBuffers {
  abstract readonly buffers: VecBuffers;
  abstract readonly numEnvs: number;
  abstract readonly numPlayers: number;
  abstract readonly config: EnvConfig;
  abstract readonly metadata: EnvMetadata;
  readonly numActions = NUM_ACTIONS;
  readonly observationSize = OBS_SIZE;

  get observations() {
    return this.buffers.observations;
  }
  get masks() {
    return this.buffers.masks;
  }
  get seats() {
    return this.buffers.seats;
  }
  get rewards() {
    return this.buffers.rewards;
  }
  get terminated() {
    return this.buffers.terminated;
  }
  get truncated() {
    return this.buffers.truncated;
  }
  get finalObservations() {
    return this.buffers.finalObservations;
  }

  /** What the episode that env i finished in the last step ended with (null if it did not). */
  finalInfo(i: number): EpisodeInfo | null {
    const b = this.buffers;
    if (!b.terminated[i] && !b.truncated[i]) return null;
    const info: EpisodeInfo = {
      balances: Array.from(b.finalBalances.subarray(i * MAX_SEATS, i * MAX_SEATS + this.numPlayers)),
      hands: b.finalHands[i]!,
    };
    if (b.finalIllegalSeat[i]! >= 0) info.illegalActionSeat = b.finalIllegalSeat[i]!;
    return info;
  }
}

/** What a vector env states about itself (Gymnasium's `metadata`). */
export function vecMetadata(config: EnvConfig): EnvMetadata {
  return { obsVersion: OBS_VERSION, numActions: NUM_ACTIONS, observationSize: OBS_SIZE, autoresetMode: 'same-step', rewardScale: config.rewardScale };
}

export class VecEnv extends VecEnvBuffers {
  readonly numEnvs: number;
  readonly numPlayers: number;
  readonly config: EnvConfig;
  readonly metadata: EnvMetadata;
  readonly buffers: VecBuffers;
  private readonly tables: Table[];
  private readonly firstEnvIndex: number;
  private readonly sparseWrites: boolean;
  /** The observation rows, with the entries each last write set (for sparse wire formats). */
  readonly rows: ObservationRows;
  /** Legal actions set in each mask row last time, so a row is cleared without fill(). */
  private readonly maskSet: Uint8Array;
  private readonly maskSetCount: Uint8Array;

  constructor(options: VecEnvOptions) {
    super();
    if (!Number.isInteger(options.numEnvs) || options.numEnvs < 1) throw new RangeError('numEnvs must be a positive integer');
    const { config, game } = parseEnvConfig(options.config);
    this.config = config;
    this.numEnvs = options.numEnvs;
    this.numPlayers = game.numPlayers;
    this.firstEnvIndex = options.firstEnvIndex ?? 0;
    this.buffers = options.buffers ?? allocateVecBuffers(this.numEnvs);
    const recycling = options.keepEndedStates ? 'keep-last' : 'reuse';
    this.tables = Array.from({ length: this.numEnvs }, () => new Table(game, config, recycling));
    // Shared memory (WorkerVecEnv) is written sparsely: fill() there takes V8's slow path.
    // Private buffers are faster cleared whole with a plain fill, then written.
    this.sparseWrites = this.buffers.observations.buffer instanceof SharedArrayBuffer;
    this.rows = new ObservationRows(this.buffers.observations, this.numEnvs, !this.sparseWrites);
    this.maskSet = new Uint8Array(this.numEnvs * NUM_ACTIONS);
    this.maskSetCount = new Uint8Array(this.numEnvs);
    this.metadata = vecMetadata(config);
  }

  /** The rules-core state of env i (read only). */
  stateOf(i: number) {
    return this.tables[i]!.state;
  }

  /**
   * The state of the last session env i finished, with `keepEndedStates` (null before its first);
   * valid until the next one finishes. A hand episode's state continues into the next hand.
   */
  endedStateOf(i: number) {
    return this.tables[i]!.endedState;
  }

  reset(seed: number | string = 0): this {
    const b = this.buffers;
    b.rewards.fill(0);
    b.terminated.fill(0);
    b.truncated.fill(0);
    for (let i = 0; i < this.numEnvs; i++) {
      this.tables[i]!.reset(`${seed}:${this.firstEnvIndex + i}`);
      this.writeCurrent(i);
    }
    return this;
  }

  /** Steps every env with `actions[i]` for its seat to act; results land in the buffers. */
  step(actions: ArrayLike<number>): this {
    const b = this.buffers;
    for (let i = 0; i < this.numEnvs; i++) {
      const table = this.tables[i]!;
      const outcome = table.step(actions[i]!, b.rewards, i * MAX_SEATS);
      if (outcome === RUNNING) {
        b.terminated[i] = 0;
        b.truncated[i] = 0;
        this.writeCurrent(i);
        continue;
      }
      b.terminated[i] = outcome === TRUNCATED ? 0 : 1;
      b.truncated[i] = outcome === TRUNCATED ? 1 : 0;
      encodeObservation(table.state, table.observer, b.finalObservations, i * OBS_SIZE);
      const state = table.state;
      for (let s = 0; s < MAX_SEATS; s++) {
        b.finalBalances[i * MAX_SEATS + s] = s < this.numPlayers ? state.balances[s]! / state.game.unitsPerChip : 0;
      }
      b.finalHands[i] = state.numResults;
      b.finalIllegalSeat[i] = table.illegalActionSeat;
      table.reset();
      this.writeCurrent(i);
    }
    return this;
  }

  close(): void {}

  private writeCurrent(i: number): void {
    const table = this.tables[i]!;
    const b = this.buffers;
    b.seats[i] = table.seatToAct;
    this.rows.write(table.state, table.observer, i);
    if (!this.sparseWrites) {
      table.state.legalActionMask(b.masks, i * NUM_ACTIONS);
      return;
    }
    const state = table.state;
    const base = i * NUM_ACTIONS;
    const masks = b.masks;
    for (let k = 0; k < this.maskSetCount[i]!; k++) masks[base + this.maskSet[base + k]!] = 0;
    const count = state.isTerminal ? 0 : state.numLegalActions();
    for (let k = 0; k < count; k++) {
      const action = state.legalActionAt(k);
      masks[base + action] = 1;
      this.maskSet[base + k] = action;
    }
    this.maskSetCount[i] = count;
  }
}
