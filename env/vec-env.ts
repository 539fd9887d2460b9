// N tables stepped in one call over flat typed arrays (Gymnasium's vector API in camelCase).
// The tables are multi-agent (the caller acts for the seat to act of every env) or, given
// `opponents`, single-agent (the caller acts for `learnerSeat`; the others play on, see
// single-agent-table.ts); either kind steps, resets (all envs or chosen ones) and reads the same.
//
// Buffers (row i belongs to env i; VEC_BUFFER_LAYOUT declares them once, for this and for
// WorkerVecEnv's shared memory): observations N x OBS_SIZE, masks N x NUM_ACTIONS (legal actions
// of the seat to act), seats N (seat to act), rewards N x MAX_SEATS (each seat's chip change in
// this step, see env.ts), terminated / truncated N (0 or 1).
// Autoreset is `same-step` (Gymnasium SAME_STEP): an env whose episode ends inside `step` is
// reset at once; its row then holds the new episode's first observation, while
// `finalObservations` row i and `finalInfo(i)` describe the episode that ended (the final row is
// the view of the table's observer: the last actor when a hand or session ended, the seat to act
// next when maxSteps truncated it; a learner's in single-agent tables).
// Seeds: env i of `reset(seed)` plays the sessions `<seed>:<i>`, `<seed>:<i>/1`, ...; a reset
// without a seed moves every env on to its next episode, and an env's first reset without one
// plays seed 0's (`0:<i>`).
// The buffers are the env's own: read them, copy them, but do not write into them (observation
// rows are updated sparsely, clearing only what the previous step set).

import { IllegalActionError, MAX_SEATS, NUM_ACTIONS, checkOptionKeys, checkSeed, drain, stateAtHandEndSteps, stateToRecord, type KratzenState, type StateReader } from './rules/index.js';
import { OBS_SIZE, OBS_VERSION, ObservationRows, checkFloatRows, encodeObservation } from './observation.js';
import { encodeOtherHands } from './oracle.js';
import { RUNNING, TRUNCATED, Table, illegalActionEndsEpisode, parseEnvConfig, type EnvConfig, type EnvConfigInput, type EnvTable } from './table.js';
import { SingleAgentTable } from './single-agent-table.js';
import { ALL_HANDS, checkHandRange, seatRecordSteps, tableViewSteps, type HandRange, type SeatRecord, type TableView } from './table-view.js';
import type { EnvMetadata } from './env.js';
import type { Policy } from './policy.js';

/**
 * Every buffer of a vector env: element type and entries per env. Row i of each is env i.
 * `finalBalances`: balances in chips at the end of each env's last finished episode;
 * `finalHands`: hands the session had finished then; `finalIllegalSeat`: the seat of an illegal
 * action that ended it (-1 if none).
 */
export const VEC_BUFFER_LAYOUT = {
  observations: ['f32', OBS_SIZE],
  masks: ['u8', NUM_ACTIONS],
  seats: ['i32', 1],
  rewards: ['f32', MAX_SEATS],
  terminated: ['u8', 1],
  truncated: ['u8', 1],
  finalObservations: ['f32', OBS_SIZE],
  finalBalances: ['f64', MAX_SEATS],
  finalHands: ['i32', 1],
  finalIllegalSeat: ['i32', 1],
} as const;

type Layout = typeof VEC_BUFFER_LAYOUT;
type TypedOf<K> = K extends 'f32' ? Float32Array : K extends 'f64' ? Float64Array : K extends 'i32' ? Int32Array : Uint8Array;
export type VecBuffers = { [N in keyof Layout]: TypedOf<Layout[N][0]> };
export type VecBufferName = keyof Layout;
export const VEC_BUFFER_NAMES = Object.keys(VEC_BUFFER_LAYOUT) as VecBufferName[];

// Envs are stepped a chunk at a time: the chunk's actions first, then its observation rows, then
// its masks, so that each loop runs one part of the code (fewer instruction-cache and branch
// predictor misses) while the chunk's states are still in the data cache.
const STEP_CHUNK = 64;

const BYTES = { f32: 4, f64: 8, i32: 4, u8: 1 } as const;

function viewOf(kind: 'f32' | 'f64' | 'i32' | 'u8', buffer: ArrayBufferLike): ArrayBufferView {
  return kind === 'f32' ? new Float32Array(buffer) : kind === 'f64' ? new Float64Array(buffer) : kind === 'i32' ? new Int32Array(buffer) : new Uint8Array(buffer);
}

/** Views of the buffers in `memory` (one ArrayBuffer or SharedArrayBuffer per buffer, by name). */
export function viewVecBuffers(memory: Record<VecBufferName, ArrayBufferLike>): VecBuffers {
  const out: Record<string, ArrayBufferView> = {};
  for (const name of VEC_BUFFER_NAMES) out[name] = viewOf(VEC_BUFFER_LAYOUT[name][0], memory[name]);
  return out as VecBuffers;
}

/** The backing memory of every buffer for `numEnvs` envs, from `allocate`. */
export function allocateVecMemory(numEnvs: number, allocate: (bytes: number) => ArrayBufferLike): Record<VecBufferName, ArrayBufferLike> {
  const out: Partial<Record<VecBufferName, ArrayBufferLike>> = {};
  for (const name of VEC_BUFFER_NAMES) {
    const [kind, width] = VEC_BUFFER_LAYOUT[name];
    const bytes = numEnvs * width * BYTES[kind];
    try {
      out[name] = allocate(bytes);
      // A buffer past the engine's typed-array length was allocated, then its view failed with
      // "Invalid typed array length: undefined".
      viewOf(kind, out[name]);
    } catch (e) {
      // The engine's "Array buffer allocation failed" did not say which setting asked for it.
      if (e instanceof RangeError) throw new RangeError(`numEnvs ${numEnvs}: the ${name} buffer (${bytes} bytes) cannot be allocated: ${e.message}`);
      throw e;
    }
  }
  return out as Record<VecBufferName, ArrayBufferLike>;
}

/**
 * The first env in [start, end) whose action is not an integer id legal in its mask row (the
 * core's legal actions for its seat to act, written after the last step), or -1: one byte read
 * per env. Callers check a whole step with it before any env moves.
 */
function firstRefusedAction(actions: ArrayLike<number>, start: number, end: number, masks: Uint8Array): number {
  for (let i = start; i < end; i++) {
    const a = actions[i]!;
    if (!(Number.isInteger(a) && a >= 0 && a < NUM_ACTIONS && masks[i * NUM_ACTIONS + a] === 1)) return i;
  }
  return -1;
}

/**
 * Checks a step's `actions` for envs [start, end) before any env moves: a step refused halfway
 * had moved the envs before the bad action, leaving their rows stale. Throws a RangeError when
 * `actions` is too short (or, stepping all `numEnvs`, of another length), and an
 * IllegalActionError naming the env when an action is refused (firstRefusedAction), unless
 * illegal actions end episodes (`illegalAction: "terminate"`), which the step then does.
 */
export function checkStepActions(actions: ArrayLike<number>, start: number, end: number, numEnvs: number, b: VecBuffers, terminate: boolean, reason?: (env: number, action: number) => string | null): void {
  if (actions === null || typeof actions !== 'object' || typeof actions.length !== 'number') throw new TypeError('actions must be an array of action ids, one per env');
  if (start === 0 && end === numEnvs ? actions.length !== numEnvs : actions.length < end) {
    throw new RangeError(`actions has ${actions.length} entries for ${end === numEnvs ? numEnvs : end} envs`);
  }
  const refused = refusedStepAction(actions, start, end, b, terminate, reason);
  if (refused) throw new IllegalActionError(refused.action, refused.seat, `env ${refused.env}: ${refused.reason}`);
}

/** An action a step refuses: in which env, for which seat, and why. */
export interface RefusedAction {
  env: number;
  action: number;
  seat: number;
  reason: string;
}

/**
 * The first action of envs [start, end) that a step refuses under the illegal-action policy:
 * none when illegal actions end episodes (`terminate`), else the first not legal in its mask row
 * (firstRefusedAction), explained by `reason` when it can.
 */
function refusedStepAction(actions: ArrayLike<number>, start: number, end: number, b: VecBuffers, terminate: boolean, reason?: (env: number, action: number) => string | null): RefusedAction | null {
  if (terminate) return null;
  const i = firstRefusedAction(actions, start, end, b.masks);
  if (i < 0) return null;
  const a = actions[i]!;
  return { env: i, action: a, seat: b.seats[i]!, reason: reason?.(i, a) ?? (Number.isInteger(a) ? 'not legal for the seat to act' : 'an action is an integer id') };
}

export interface EpisodeInfo {
  balances: number[];
  hands: number;
  illegalActionSeat?: number;
}

export function allocateVecBuffers(numEnvs: number, allocate: (bytes: number) => ArrayBufferLike = (b) => new ArrayBuffer(b)): VecBuffers {
  return viewVecBuffers(allocateVecMemory(numEnvs, allocate));
}

/** Views of envs [start, start + count) of buffers laid out for more envs. */
export function sliceVecBuffers(b: VecBuffers, start: number, count: number): VecBuffers {
  const out: Record<string, ArrayBufferView> = {};
  for (const name of VEC_BUFFER_NAMES) {
    const width = VEC_BUFFER_LAYOUT[name][1];
    out[name] = (b[name] as Float32Array).subarray(start * width, (start + count) * width);
  }
  return out as VecBuffers;
}

function notReset(env: number): Error {
  return new Error(`env ${env} has not been reset: call reset() (or resetEnvs) first`);
}

const ELEMENT_TYPES = { f32: Float32Array, f64: Float64Array, i32: Int32Array, u8: Uint8Array } as const;

/**
 * Given buffers are checked before use: each of its layout's length and element type (Int32
 * rewards truncated fractions), and no two overlapping (terminated aliased to truncated reported
 * no episode end: the truncated write erased it).
 */
function checkVecBuffers(buffers: VecBuffers, numEnvs: number): void {
  const spans: [VecBufferName, ArrayBufferLike, number, number][] = [];
  for (const name of VEC_BUFFER_NAMES) {
    const [type, width] = VEC_BUFFER_LAYOUT[name];
    const buffer = buffers[name] as ArrayBufferView | undefined;
    if (!(buffer instanceof ELEMENT_TYPES[type])) throw new TypeError(`buffers.${name} must be a ${ELEMENT_TYPES[type].name}, got ${(buffer as object | undefined)?.constructor?.name ?? String(buffer)}`);
    // Buffers for fewer envs took the writes past their end without a word.
    if (buffer.length !== numEnvs * width) throw new RangeError(`buffers.${name} holds ${buffer.length} entries, not ${numEnvs} x ${width}`);
    for (const [other, memory, start, end] of spans) {
      if (memory === buffer.buffer && buffer.byteOffset < end && start < buffer.byteOffset + buffer.byteLength) throw new RangeError(`buffers.${name} shares memory with buffers.${other}`);
    }
    spans.push([name, buffer.buffer, buffer.byteOffset, buffer.byteOffset + buffer.byteLength]);
  }
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
  /**
   * Single-agent tables: one policy for every seat but `learnerSeat`, or one per seat (the
   * learner's entry ignored). The caller then acts for the learner only. @default multi-agent
   */
  opponents?: Policy | (Policy | null)[];
  /** The learner's seat of single-agent tables. @default 0 */
  learnerSeat?: number;
  /**
   * Keep, per observation row, the list of the entries its last write set (`rows.setIndices`),
   * for sparse wire formats (the bridge): a step costs a few percent more with it. Always on in shared
   * memory, which is cleared by that list. @default false
   */
  listObservationEntries?: boolean;
  /**
   * Multi-agent tables: when an episode ends, keep every seat's observation of its end, not only
   * the observer's `finalObservations` row (`finalObservationOf`): a turn-based (AEC) client shows
   * each agent the table as the episode left it. numEnvs x numPlayers x OBS_SIZE floats more.
   * @default false
   */
  finalObservationsOfEverySeat?: boolean;
}

/** Every option VecEnv takes: a key missing here (or one that is not an option) does not compile. */
const VEC_ENV_OPTIONS = Object.keys({
  numEnvs: true,
  config: true,
  firstEnvIndex: true,
  buffers: true,
  keepEndedStates: true,
  opponents: true,
  learnerSeat: true,
  listObservationEntries: true,
  finalObservationsOfEverySeat: true,
} satisfies Record<keyof VecEnvOptions, true>);

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
    this.checkEnvIndex(i);
    const b = this.buffers;
    if (!b.terminated[i] && !b.truncated[i]) return null;
    const info: EpisodeInfo = {
      balances: Array.from(b.finalBalances.subarray(i * MAX_SEATS, i * MAX_SEATS + this.numPlayers)),
      hands: b.finalHands[i]!,
    };
    if (b.finalIllegalSeat[i]! >= 0) info.illegalActionSeat = b.finalIllegalSeat[i]!;
    return info;
  }

  /** Throws a RangeError naming `env` unless `i` is an index of this vector. */
  protected checkEnvIndex(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.numEnvs) throw new RangeError(`env must be an index 0..${this.numEnvs - 1}, got ${String(i).slice(0, 40)}`);
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
  /** The learner's seat when the tables are single-agent, null when multi-agent. */
  readonly learnerSeat: number | null;
  private readonly tables: EnvTable[];
  private readonly firstEnvIndex: number;
  private readonly sparseWrites: boolean;
  private closed = false;
  /** The observation rows; with `listObservationEntries`, the entries each last write set (for sparse wire formats). */
  readonly rows: ObservationRows;
  /** Legal actions set in each mask row last time, so a row is cleared without fill(). */
  private readonly maskSet: Uint8Array;
  private readonly maskSetCount: Uint8Array;
  /** Envs never reset (a table has no state until then): before, a step on one failed inside the core. */
  private unstarted: number;
  /** Set while a step or reset runs: an opponent policy that stepped or reset its own env applied actions chosen on one state to another. */
  private busy = false;
  /** The env being stepped, named when a step fails part-way. */
  private stepping = -1;
  /** With finalObservationsOfEverySeat: row (i * numPlayers + seat) is that seat's view of env i's last ended episode. */
  private readonly everySeatFinal: Float32Array | null;
  /** Per env, 1 once an episode of it ended (everySeatFinal holds it). */
  private readonly endedOnce: Uint8Array;

  constructor(options: VecEnvOptions) {
    super();
    checkOptionKeys(options, VEC_ENV_OPTIONS, 'VecEnv');
    if (!Number.isInteger(options.numEnvs) || options.numEnvs < 1) throw new RangeError('numEnvs must be a positive integer');
    const { config, game } = parseEnvConfig(options.config);
    this.config = config;
    this.numEnvs = options.numEnvs;
    this.numPlayers = game.numPlayers;
    this.firstEnvIndex = options.firstEnvIndex ?? 0;
    if (!Number.isSafeInteger(this.firstEnvIndex) || this.firstEnvIndex < 0) throw new RangeError(`firstEnvIndex must be a non-negative integer, got ${String(options.firstEnvIndex).slice(0, 40)}`);
    this.buffers = options.buffers ?? allocateVecBuffers(this.numEnvs);
    checkVecBuffers(this.buffers, this.numEnvs);
    const recycling = options.keepEndedStates ? 'keep-last' : 'reuse';
    // A learner seat without opponents ran a multi-agent env without a word, as did falsy opponents.
    if (options.opponents === undefined && options.learnerSeat !== undefined) throw new RangeError('learnerSeat needs opponents (the policies of the other seats)');
    if (options.opponents !== undefined) {
      const learnerSeat = options.learnerSeat ?? 0;
      const given = options.opponents;
      const opponents = Array.from({ length: game.numPlayers }, (_, s) => (Array.isArray(given) ? (given[s] ?? null) : given));
      this.learnerSeat = learnerSeat;
      this.tables = Array.from({ length: this.numEnvs }, () => new SingleAgentTable(game, config, learnerSeat, opponents, recycling));
    } else {
      this.learnerSeat = null;
      this.tables = Array.from({ length: this.numEnvs }, () => new Table(game, config, recycling));
    }
    // Shared memory (WorkerVecEnv) is written sparsely: fill() there takes V8's slow path.
    // Private buffers are faster cleared whole with a plain fill, then written.
    this.sparseWrites = this.buffers.observations.buffer instanceof SharedArrayBuffer;
    this.rows = new ObservationRows(this.buffers.observations, this.numEnvs, !this.sparseWrites, options.listObservationEntries ?? false);
    if (options.finalObservationsOfEverySeat && options.opponents !== undefined) {
      throw new RangeError('finalObservationsOfEverySeat is for multi-agent tables: a single-agent table ends with its learner\'s view, finalObservations');
    }
    this.everySeatFinal = options.finalObservationsOfEverySeat ? new Float32Array(this.numEnvs * this.numPlayers * OBS_SIZE) : null;
    this.endedOnce = new Uint8Array(this.numEnvs);
    this.maskSet = new Uint8Array(this.numEnvs * NUM_ACTIONS);
    this.maskSetCount = new Uint8Array(this.numEnvs);
    this.unstarted = this.numEnvs;
    this.metadata = vecMetadata(config);
    // Given memory may hold another env's rows (reused shared memory): mask rows are cleared only
    // where this env set them, so a stale 1 passed the up-front action check and the step failed
    // part-way, after earlier envs had moved. Cleared once every option is checked: a refused
    // construction leaves the caller's memory as it was.
    if (options.buffers) for (const name of VEC_BUFFER_NAMES) this.buffers[name].fill(0);
  }

  /** The rules-core state of env i (read only; for the env layer and tests, not for agents or the bridge). */
  stateOf(i: number): StateReader {
    return this.tableAt(i).state;
  }

  /** Env i's table; an index off the vector is a RangeError naming it. */
  private tableAt(i: number): EnvTable {
    this.checkEnvIndex(i);
    if (!this.isStarted(i)) throw notReset(i);
    return this.tables[i]!;
  }

  /**
   * The state of the last session env i finished, with `keepEndedStates` (null before its first;
   * a single-agent session that ended before its learner acted, never reported, is not kept);
   * valid until the next one finishes. A hand episode's state continues into the next hand.
   */
  endedStateOf(i: number): StateReader | null {
    return this.tableAt(i).endedState;
  }

  /**
   * The state of env i's current episode ('current'), or of the last one it finished ('ended'):
   * a hand episode's session goes on in the current state, until a new session begins (the last
   * hand of a session, or one cut short) and it is kept as endedStateOf.
   */
  private episodeState(i: number, episode: 'current' | 'ended'): KratzenState {
    if (episode === 'current') return this.tableAt(i).state;
    // Anything else read as 'ended': 'bogus' was told the env kept no finished episode.
    if (episode !== 'ended') throw new RangeError(`episode must be 'current' or 'ended', got ${JSON.stringify(episode)?.slice(0, 40) ?? typeof episode}`);
    const ended = this.tableAt(i).endedEpisodeState;
    if (!ended) throw new RangeError(`env ${i} has no finished episode kept (none yet, or keepEndedStates is off)`);
    return ended;
  }

  /**
   * episodeState, but an ended hand episode whose session went on (into the next hand, maybe
   * further) is replayed, a hand at a time, to where it ended.
   */
  private *episodeStateSteps(i: number, episode: 'current' | 'ended'): Generator<void, StateReader> {
    const state = this.episodeState(i, episode);
    if (this.endedSessionWentOn(i, episode)) return yield* stateAtHandEndSteps(state, this.tables[i]!.endedHands);
    return state;
  }

  /** Whether `episode` is env i's ended hand and its session went on after it (its state shows more). */
  private endedSessionWentOn(i: number, episode: 'current' | 'ended'): boolean {
    return episode === 'ended' && this.tables[i]!.endedSessionWentOn;
  }

  /**
   * The first of a whole step's `actions` (one per env) that `step` would refuse under the env
   * config's illegal-action policy, or null: callers that step a range at a time check the whole
   * step first with it, so a refused step moves no env.
   */
  refusedAction(actions: ArrayLike<number>): RefusedAction | null {
    return refusedStepAction(actions, 0, this.numEnvs, this.buffers, illegalActionEndsEpisode(this.config), this.explainRefused);
  }

  /** Why `action` is illegal for env i's seat to act, or null when it is legal. */
  explainIllegal(i: number, action: number): string | null {
    this.tableAt(i);
    return this.explainRefused(i, action);
  }

  /** Env i's pot in chips. */
  potOf(i: number): number {
    const state = this.stateOf(i);
    return state.game.toChips(state.pot);
  }

  /** Writes `seat`'s current observation of env i into `obs` and its legal actions (all zero unless it is to act) into `mask`. */
  observe(i: number, seat: number, obs: Float32Array, mask: Uint8Array): void {
    const state = this.stateOf(i);
    if (!(mask instanceof Uint8Array) || mask.length < NUM_ACTIONS) throw new RangeError(`mask must be a Uint8Array of ${NUM_ACTIONS} entries`);
    encodeObservation(state, seat, obs);
    if (state.currentSeat === seat) state.legalActionMask(mask);
    else mask.fill(0);
  }

  /** Whether every seat's view of an episode's end is kept (finalObservationsOfEverySeat). */
  get keepsFinalObservationsOfEverySeat(): boolean {
    return this.everySeatFinal !== null;
  }

  /**
   * Writes `seat`'s observation of the end of env i's last ended episode into `obs` (vector envs
   * made with finalObservationsOfEverySeat; the seat of its `finalObservations` row gets that row).
   */
  finalObservationOf(i: number, seat: number, obs: Float32Array): void {
    this.checkEnvIndex(i);
    if (!this.everySeatFinal) throw new Error('this vector env keeps the final observation of the observer only (finalObservations): make it with finalObservationsOfEverySeat');
    if (!Number.isInteger(seat) || seat < 0 || seat >= this.numPlayers) throw new RangeError(`seat must be a seat 0..${this.numPlayers - 1}, got ${String(seat).slice(0, 40)}`);
    if (!this.endedOnce[i]) throw new RangeError(`env ${i} has not ended an episode yet`);
    checkFloatRows(obs, 0, OBS_SIZE, 'an observation');
    const from = (i * this.numPlayers + seat) * OBS_SIZE;
    obs.set(this.everySeatFinal.subarray(from, from + OBS_SIZE));
  }

  /**
   * Privileged: the other seats' hands in env i, relative to `seat` (oracle.ts), for a training
   * critic only. Nothing that acts or serves a client may call it.
   */
  writeOtherHands(i: number, seat: number, out: Float32Array, offset = 0): void {
    encodeOtherHands(this.stateOf(i), seat, out, offset);
  }

  /** The public table `seat` sees in env i, with the history of the hands in `range` (table-view.ts; no legal moves in an ended episode). */
  tableView(i: number, seat: number, episode: 'current' | 'ended' = 'current', range: HandRange = ALL_HANDS): TableView {
    return drain(this.tableViewSteps(i, seat, episode, range));
  }

  /** tableView a replayed hand at a time (table-view.ts' tableViewSteps). */
  *tableViewSteps(i: number, seat: number, episode: 'current' | 'ended' = 'current', range: HandRange = ALL_HANDS): Generator<void, TableView> {
    const state = yield* this.episodeStateSteps(i, episode);
    return yield* tableViewSteps(state, seat, range, episode === 'ended');
  }

  /** `seat`'s own record of the hands in `range` of env i's session (no deck, nothing hidden; table-view.ts). */
  seatRecord(i: number, seat: number, episode: 'current' | 'ended' = 'current', range: HandRange = ALL_HANDS): { record: SeatRecord; complete: boolean; numHands: number } {
    return drain(this.seatRecordSteps(i, seat, episode, range));
  }

  /** seatRecord a replayed hand at a time. */
  *seatRecordSteps(
    i: number,
    seat: number,
    episode: 'current' | 'ended' = 'current',
    range: HandRange = ALL_HANDS,
  ): Generator<void, { record: SeatRecord; complete: boolean; numHands: number }> {
    const state = yield* this.episodeStateSteps(i, episode);
    return { record: yield* seatRecordSteps(state, seat, range), complete: state.complete, numHands: state.numResults };
  }

  /** The seat to act in env i's episode in progress or the last one it finished (-1 when none is). */
  seatToActIn(i: number, episode: 'current' | 'ended' = 'current'): number {
    const state = this.episodeState(i, episode);
    return this.endedSessionWentOn(i, episode) ? -1 : state.currentSeat;
  }

  /**
   * The full record (docs/rules.md §5) of env i's finished hands in `range`: decks included, no
   * seed, nothing of the hand in progress. The pages of a session concatenate into its record.
   */
  fullRecord(
    i: number,
    episode: 'current' | 'ended' = 'current',
    range: HandRange = ALL_HANDS,
  ): { record: ReturnType<typeof stateToRecord>; complete: boolean; numHands: number } {
    checkHandRange(range);
    const state = this.episodeState(i, episode);
    // An ended hand whose session went on (it was not complete then): its hands up to that one.
    const wentOn = this.endedSessionWentOn(i, episode);
    const numHands = wentOn ? this.tables[i]!.endedHands : state.numResults;
    const record = stateToRecord(state, range.from, Math.min(numHands, range.from + range.count));
    delete record.seed;
    return { record, complete: !wentOn && state.complete, numHands };
  }

  /**
   * Starts an episode in every env: with a seed, env i starts the sessions `<seed>:<i>`, ...;
   * without, each goes on to its next episode (the first one plays seed 0's). It restarted seed 0
   * every time, so a loop calling reset() replayed the same deals.
   */
  reset(seed?: number | string): this {
    return this.resetRange(0, this.numEnvs, seed);
  }

  /**
   * Resets the envs marked in `mask` (Gymnasium's reset mask) and leaves the others as they
   * are: with a seed, env i starts the sessions `<seed>:<i>`, ...; without, it moves on to its
   * next episode (the sequence of its last seed continues).
   */
  resetEnvs(mask: ArrayLike<number | boolean>, seed?: number | string): this {
    if (mask === null || typeof mask !== 'object' || mask.length !== this.numEnvs) {
      throw new RangeError(`the reset mask must hold one entry per env (${this.numEnvs}), got ${mask === null || typeof mask !== 'object' ? String(mask).slice(0, 40) : `${mask.length}`}`);
    }
    // Entries are 0/1 or booleans: "0" and 0.5 were truthy, and reset envs the caller meant to keep.
    for (let i = 0; i < this.numEnvs; i++) {
      const entry = mask[i];
      if (entry !== 0 && entry !== 1 && entry !== true && entry !== false) throw new RangeError(`reset mask entry ${i} must be 0, 1, true or false, got ${JSON.stringify(entry)?.slice(0, 40)}`);
    }
    for (let i = 0; i < this.numEnvs; i++) if (mask[i]) this.resetRange(i, i + 1, seed);
    return this;
  }

  /** Resets envs [start, end) (a long reset can be done a range at a time). */
  resetRange(start: number, end: number, seed?: number | string): this {
    this.beginReset(start, end, seed);
    for (let i = start; i < end; i++) drain(this.resetPieces(i, seed));
    return this;
  }

  /** resetRange(i, i + 1, seed), yielding after each decision of env i's opponents (see stepEnvSteps). */
  *resetEnvSteps(i: number, seed?: number | string): Generator<void, void> {
    this.beginReset(i, i + 1, seed);
    yield* this.resetPieces(i, seed);
  }

  /**
   * Checks a reset of envs [start, end) before any moves, and clears their step results up front:
   * a reset that failed at one env left the flags of the envs after it as the last step set them.
   */
  private beginReset(start: number, end: number, seed: number | string | undefined): void {
    this.checkRange(start, end);
    if (seed !== undefined) checkSeed(seed);
    this.clearStepResults(start, end);
  }

  /** Resets env i, a decision of its opponents a piece (beginReset has checked and cleared it). */
  private *resetPieces(i: number, seed: number | string | undefined): Generator<void, void> {
    const table = this.tables[i]!;
    const first = !this.isStarted(i);
    // An env never reset starts from seed 0 when given none: its table's own default, the same
    // for every env, dealt them all one game.
    const tableSeed = seed === undefined && !first ? undefined : `${seed ?? 0}:${this.firstEnvIndex + i}`;
    this.busy = true;
    this.stepping = i;
    try {
      yield* table.resetSteps(tableSeed);
      this.writeCurrent(i);
    } catch (e) {
      throw this.failedPartWay(e, i, i + 1);
    } finally {
      if (first && this.isStarted(i)) this.unstarted--;
      this.busy = false;
      // Stopped part-way: the row shows where the env stands (its table marked it failed).
      if (table.failed !== null) this.writeCurrent(i);
    }
  }

  /** Steps every env with `actions[i]` for its seat to act; results land in the buffers. */
  step(actions: ArrayLike<number>): this {
    return this.stepRange(actions, 0, this.numEnvs);
  }

  /**
   * Steps envs [start, end) with `actions[i]` (a long step can be done a range at a time). A
   * refused action (checkStepActions) throws before any env moves.
   */
  stepRange(actions: ArrayLike<number>, start: number, end: number): this {
    this.checkRange(start, end);
    if (this.unstarted > 0) for (let i = start; i < end; i++) if (!this.isStarted(i)) throw notReset(i);
    checkStepActions(actions, start, end, this.numEnvs, this.buffers, illegalActionEndsEpisode(this.config), this.explainRefused);
    this.busy = true;
    let from = start;
    try {
      for (; from < end; from += STEP_CHUNK) {
        const to = Math.min(end, from + STEP_CHUNK);
        this.applyActions(actions, from, to);
        for (let i = from; i < to; i++) this.writeRow(i);
        for (let i = from; i < to; i++) this.writeMask(i);
      }
    } catch (e) {
      throw this.failedPartWay(e, from, Math.min(end, from + STEP_CHUNK));
    } finally {
      this.busy = false;
    }
    return this;
  }

  /**
   * The error of a step or reset that failed in env `this.stepping` (an opponent policy threw or
   * chose an illegal action), after the rows and masks of envs [from, to) are rewritten to show
   * where they are: envs before it moved, that one is left without a legal action until reset.
   */
  private failedPartWay(e: unknown, from: number, to: number): Error {
    const env = this.stepping;
    for (let i = from; i < to; i++) if (this.isStarted(i)) this.writeCurrent(i);
    return new Error(`env ${env}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  }

  /** Applies `actions` to envs [start, end), ending and restarting episodes, without writing rows or masks. */
  private applyActions(actions: ArrayLike<number>, start: number, end: number): void {
    const b = this.buffers;
    for (let i = start; i < end; i++) {
      this.stepping = i;
      const table = this.tables[i]!;
      const outcome = table.step(actions[i]!, b.rewards, i * MAX_SEATS);
      if (outcome === RUNNING) {
        b.terminated[i] = 0;
        b.truncated[i] = 0;
        continue;
      }
      this.endEpisode(i, outcome);
      table.reset();
    }
  }

  /** Zeroes the rewards and episode-end flags of envs [start, end). */
  private clearStepResults(start: number, end: number): void {
    const b = this.buffers;
    b.rewards.fill(0, start * MAX_SEATS, end * MAX_SEATS);
    b.terminated.fill(0, start, end);
    b.truncated.fill(0, start, end);
  }

  /** Writes env i's ended episode (`outcome` TERMINATED or TRUNCATED) into the final buffers; its table is to be reset next. */
  private endEpisode(i: number, outcome: number): void {
    const b = this.buffers;
    const table = this.tables[i]!;
    b.terminated[i] = outcome === TRUNCATED ? 0 : 1;
    b.truncated[i] = outcome === TRUNCATED ? 1 : 0;
    encodeObservation(table.state, table.observer, b.finalObservations, i * OBS_SIZE);
    const state = table.state;
    if (this.everySeatFinal) for (let s = 0; s < this.numPlayers; s++) encodeObservation(state, s, this.everySeatFinal, (i * this.numPlayers + s) * OBS_SIZE);
    this.endedOnce[i] = 1;
    for (let s = 0; s < MAX_SEATS; s++) {
      b.finalBalances[i * MAX_SEATS + s] = s < this.numPlayers ? state.game.toChips(state.balance(s)) : 0;
    }
    b.finalHands[i] = state.numResults;
    b.finalIllegalSeat[i] = table.illegalActionSeat;
  }

  /**
   * stepRange(actions, i, i + 1) in pieces of one decision of env i's opponents each (single-agent
   * tables; a multi-agent env steps at once), its same-step reset's included: a server lets other
   * clients in between (docs/bridge.md, Fair under load). Drained, it is that step.
   * The vector is busy until it ends; one stopped before then leaves env i without a legal
   * action (SingleAgentTable.failed) until it is reset.
   */
  *stepEnvSteps(actions: ArrayLike<number>, i: number): Generator<void, void> {
    const table = this.tables[i]!;
    this.checkRange(i, i + 1);
    if (!this.isStarted(i)) throw notReset(i);
    checkStepActions(actions, i, i + 1, this.numEnvs, this.buffers, illegalActionEndsEpisode(this.config), this.explainRefused);
    const b = this.buffers;
    this.busy = true;
    this.stepping = i;
    try {
      const outcome = yield* table.stepSteps(actions[i]!, b.rewards, i * MAX_SEATS);
      if (outcome === RUNNING) {
        b.terminated[i] = 0;
        b.truncated[i] = 0;
      } else {
        this.endEpisode(i, outcome);
        // The next episode's decisions go in pieces of their own.
        yield* table.resetSteps(undefined, true);
      }
      this.writeCurrent(i);
    } catch (e) {
      throw this.failedPartWay(e, i, i + 1);
    } finally {
      this.busy = false;
      if (table.failed !== null) this.writeCurrent(i);
    }
  }

  /** Ends this env: later steps and resets throw, as WorkerVecEnv's do (they went on before). */
  close(): void {
    this.closed = true;
  }

  /** A range of envs [start, end) within this vector env, checked before anything moves. */
  private checkRange(start: number, end: number): void {
    if (this.closed) throw new Error('VecEnv is closed');
    if (this.busy) throw new Error('VecEnv is stepping or resetting already (an opponent policy may not step or reset its own env)');
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > this.numEnvs || start > end) {
      throw new RangeError(`env range [${start}, ${end}) is not within the ${this.numEnvs} envs`);
    }
  }

  private readonly explainRefused = (env: number, action: number): string | null => {
    const table = this.tables[env]!;
    return table.failed ?? table.state.explainIllegal(action);
  };

  /** Whether env i was ever reset (a table's state is made by its first reset). */
  private isStarted(i: number): boolean {
    return this.tables[i]!.state !== undefined;
  }

  private writeCurrent(i: number): void {
    this.writeRow(i);
    this.writeMask(i);
  }

  private writeRow(i: number): void {
    const table = this.tables[i]!;
    this.buffers.seats[i] = table.seatToAct;
    this.rows.write(table.state, table.observer, i);
  }

  private writeMask(i: number): void {
    const table = this.tables[i]!;
    const b = this.buffers;
    // No seat to act: an episode whose opponents failed (single-agent tables) has no legal action.
    const none = this.learnerSeat !== null && table.seatToAct < 0;
    if (!this.sparseWrites) {
      if (none) b.masks.fill(0, i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS);
      else table.state.legalActionMask(b.masks, i * NUM_ACTIONS);
      return;
    }
    const state = table.state;
    const base = i * NUM_ACTIONS;
    const masks = b.masks;
    for (let k = 0; k < this.maskSetCount[i]!; k++) masks[base + this.maskSet[base + k]!] = 0;
    const count = none || state.isTerminal ? 0 : state.numLegalActions();
    for (let k = 0; k < count; k++) {
      const action = state.legalActionAt(k);
      masks[base + action] = 1;
      this.maskSet[base + k] = action;
    }
    this.maskSetCount[i] = count;
  }
}
