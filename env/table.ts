// One table of the environment: episode bookkeeping over a rules-core state (seeding, resets,
// reward accounting, illegal-action policy). The single, vector and worker envs all step tables,
// so every env produces the same trajectories from the same seeds.

import { z } from 'zod';
import {
  AmountOverflowError,
  KratzenGame,
  RuleSetError,
  ValidationError,
  checkSeed,
  rawJsonObject,
  type KratzenState,
} from './rules/index.js';
import { firstIssue } from './rules/zod-issue.js';

export const envConfigSchema = z.strictObject({
  /** Rule set (docs/rules.md §0). @default {} (didactic4, 4 players) */
  rules: rawJsonObject('a rule set').default({}),
  /** An episode is a whole session, or one hand with the pot and balances carried on. @default 'session' */
  episode: z.enum(['session', 'hand']).default('session'),
  /** `throw` an IllegalActionError, or `terminate` the episode with a penalty. @default 'throw' */
  illegalAction: z.enum(['throw', 'terminate']).default('throw'),
  /** Chips taken from the offending seat's reward when `illegalAction` is `terminate` (at most 1e9). @default 10 */
  illegalActionPenalty: z.number().nonnegative().max(1e9).default(10),
  /**
   * Rewards are chip deltas times this factor, from 1e-6 to 1e6: amounts reach 2^53 units, and a
   * float32 reward must stay finite; 1e-300 made every float32 reward 0. @default 1
   */
  rewardScale: z.number().min(1e-6).max(1e6).default(1),
  /**
   * `chips`: rewards are chip changes times `rewardScale`. `pot`: each seat's rewards are chip
   * changes divided by the pot (in chips, at least 1) at that seat's latest decision (before its
   * first one in an episode: the pot when the episode began); `rewardScale` does not apply. The
   * pot is in the observation and stays put from the stakes to the settlement (tavern5 exchange
   * fees aside), so the best action in every state is unchanged, while hands with escalated pots
   * no longer swamp a learner's gradient: what the trainer does (training/config.ts). @default 'chips'
   */
  rewardNormalization: z.enum(['chips', 'pot']).default('chips'),
  /**
   * Truncate an episode after this many steps; 0 means never. Steps are actions at the table,
   * every seat's: a single-agent env counts its opponents' too, so a learner gets fewer turns
   * than this. @default 0. (An episode whose
   * session stops at an amount overflow, docs/rules.md §3, also ends truncated: a settlement that
   * would overflow pays nothing, one followed by a deal whose stakes overflow is paid. With hand
   * episodes such a deal comes at the reset, and the next episode starts a new session.)
   */
  maxSteps: z.number().int().nonnegative().default(0),
});

export type EnvConfigInput = z.input<typeof envConfigSchema>;
export type EnvConfig = z.output<typeof envConfigSchema>;

/**
 * The illegal-action policy, read in this one place: true when an illegal action ends its
 * episode with a penalty (`terminate`, Table.step), false when a step holding one is refused
 * before any env moves (`throw`, the vector envs' checkStepActions).
 */
export function illegalActionEndsEpisode(config: Pick<EnvConfig, 'illegalAction'>): boolean {
  return config.illegalAction === 'terminate';
}

/** Validates an env config; rule-set errors keep the field path (`rules.players`). */
export function parseEnvConfig(input: EnvConfigInput = {}): { config: EnvConfig; game: KratzenGame } {
  const parsed = envConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const { field, reason } = firstIssue(parsed.error);
    throw new ValidationError('invalid env config', field, reason);
  }
  let game: KratzenGame;
  try {
    game = new KratzenGame(parsed.data.rules);
  } catch (e) {
    if (e instanceof RuleSetError) throw new RuleSetError(e.field ? `rules.${e.field}` : 'rules', e.reason);
    throw e;
  }
  // Each field in range, the antes together can still pass 2^53 - 1 units at the first deal
  // (docs/rules.md §3): such a table could never start, and every reset would fail.
  try {
    game.newState({ seed: 0 });
  } catch (e) {
    if (e instanceof AmountOverflowError) throw new RuleSetError('rules', 'the first deal already passes 2^53 - 1 units (antes and stakes too large together): no session can start');
    throw e;
  }
  // The config is the table's own, frozen: `rules` was the caller's object (changing it later
  // showed rules other than those played), and a write to `maxSteps` took effect mid-run. Copied
  // once the game has checked the rules: they are a small JSON object by then.
  const config = Object.freeze({ ...parsed.data, rules: frozenCopy(parsed.data.rules) });
  return { config, game };
}

/** A deep copy of a JSON value, frozen all through. */
function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  const copy = (Array.isArray(value) ? value.map(frozenCopy) : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, frozenCopy(v)]))) as T;
  return Object.freeze(copy);
}

/** Step outcome codes, kept numeric so vector envs can store them in typed arrays. */
export const RUNNING = 0;
export const TERMINATED = 1;
export const TRUNCATED = 2;

/**
 * What a vector env steps (env/vec-env.ts): a multi-agent Table or a SingleAgentTable. The
 * `...Steps` generators do the work of `reset` and `step` in pieces a server can give way between
 * (one opponent decision each); a table with no opponents does it in one piece.
 */
export interface EnvTable {
  readonly state: KratzenState;
  readonly endedState: KratzenState | null;
  readonly endedEpisodeState: KratzenState | null;
  /** The hands its session had finished when the last reported episode ended. */
  readonly endedHands: number;
  /** Whether that session has gone on since (hand episodes): `endedEpisodeState` then shows more than the ended hand. */
  readonly endedSessionWentOn: boolean;
  /** The seat to act, -1 when none may. */
  readonly seatToAct: number;
  /** The seat whose observation is shown. */
  readonly observer: number;
  readonly illegalActionSeat: number;
  /** Why this episode cannot go on until a reset (opponents failed), or null. */
  readonly failed: string | null;
  reset(seed?: number | string): void;
  /** reset in pieces; `pauseFirst`: a table with opponents starts with an empty piece. */
  resetSteps(seed?: number | string, pauseFirst?: boolean): Generator<void, void>;
  /** Applies `action`, writes every seat's reward at `offset`, returns RUNNING, TERMINATED or TRUNCATED. */
  step(action: number, rewards: Float32Array, offset: number): number;
  stepSteps(action: number, rewards: Float32Array, offset: number): Generator<void, number>;
}

export class Table implements EnvTable {
  readonly game: KratzenGame;
  readonly config: EnvConfig;
  state!: KratzenState;
  /** Balances (units) at the last reward: rewards are the change since then. */
  private readonly baseline: Float64Array;
  private readonly rewardPerUnit: number;
  private readonly byPot: boolean;
  /** `pot` normalization: 1 / (pot in chips, at least 1) at each seat's latest decision. */
  private readonly potFactor: Float64Array;
  private sessionSeed: string = '0';
  private sessions = 0;
  steps = 0;
  /** The seat that acted last (the terminal observation is theirs). */
  lastActor = 0;
  /** Set when the episode ended on an illegal action under `illegalAction: 'terminate'`. */
  illegalActionSeat = -1;

  /** The state of the last session this table finished (kept with `recycling: 'keep-last'`). */
  endedState: KratzenState | null = null;
  /** Whether the last episode reported as ended is a hand of the session still in `state` (hand episodes). */
  private endedInCurrentSession = false;
  /** The hands the session had finished when the last reported episode ended. */
  endedHands = 0;
  /**
   * Whether that session went on after that episode's end: a hand episode's session deals the
   * next hand, and may play more (an unseen hand, a hand abandoned by a reset).
   */
  endedSessionWentOn = false;
  /** Whether the last step ended the episode: a reset before then abandons it (see reset). */
  private episodeEnded = false;

  /**
   * @param recycling `none`: every session gets a fresh state object; `reuse`: new sessions start
   *   in the finished session's object (no allocation); `keep-last`: the finished session's
   *   object is kept as `endedState` until the next one finishes, and the new session starts in
   *   the one before it (two objects, no allocation, the last finished episode readable).
   */
  constructor(
    game: KratzenGame,
    config: EnvConfig,
    private readonly recycling: 'none' | 'reuse' | 'keep-last' = 'none',
  ) {
    this.game = game;
    this.config = config;
    this.baseline = new Float64Array(game.numPlayers);
    this.rewardPerUnit = config.rewardScale / game.unitsPerChip;
    this.byPot = config.rewardNormalization === 'pot';
    this.potFactor = new Float64Array(game.numPlayers);
  }

  /**
   * Starts an episode. With a seed, a new session from that seed; without one, hand episodes
   * continue the session (next hand) and session episodes start the next session of the seed's
   * sequence (`<seed>/<k>`), so a seeded run stays reproducible across auto-resets.
   *
   * `unseen`: the episode that just ended was never reported (a single-agent table played it
   * through before its learner could act), so it does not displace the kept ended episode, the
   * one the last reported end described: a new session then starts in its state object. An
   * episode reset before it ended (abandoned) is not kept either: the ended views showed it as
   * the last finished one.
   */
  reset(seed?: number | string, unseen = false): void {
    const handEpisode = this.config.episode === 'hand';
    const abandoned = this.state !== undefined && !this.episodeEnded;
    this.episodeEnded = false;
    if (this.state && !unseen && !abandoned) {
      this.endedHands = this.state.numResults;
      this.endedSessionWentOn = false;
    } else if (this.endedInCurrentSession) this.endedSessionWentOn = true;
    if (seed !== undefined) {
      checkSeed(seed);
      this.sessionSeed = String(seed);
      this.sessions = 0;
    }
    // A hand cut short by an illegal action cannot continue: the next episode is a new session.
    // Nor can a session whose next deal's stakes pass 2^53 - 1 units (docs/rules.md §3).
    const handUnfinished = this.state !== undefined && this.state.phase !== 'deal';
    if (seed !== undefined || !this.state || !handEpisode || this.state.complete || handUnfinished || !this.dealNextHand()) {
      const sessionSeed = this.sessions === 0 ? this.sessionSeed : `${this.sessionSeed}/${this.sessions}`;
      this.sessions++;
      const keepEnded = (unseen || abandoned) && !this.endedInCurrentSession;
      if (this.state && (this.recycling === 'reuse' || (keepEnded && this.recycling === 'keep-last'))) this.state.restart(sessionSeed);
      else if (this.state && this.recycling === 'keep-last') {
        const spare = this.endedState;
        this.endedState = this.state;
        if (spare) spare.restart(sessionSeed);
        this.state = spare ?? this.game.newState({ seed: sessionSeed, pauseBetweenHands: handEpisode });
      } else this.state = this.game.newState({ seed: sessionSeed, pauseBetweenHands: handEpisode });
      this.baseline.fill(0);
      this.endedInCurrentSession = false;
    } else if (!unseen) {
      this.endedInCurrentSession = true;
      this.endedSessionWentOn = true;
    }
    this.steps = 0;
    this.illegalActionSeat = -1;
    this.lastActor = Math.max(0, this.state.currentSeat);
    if (this.byPot) this.potFactor.fill(this.currentPotFactor());
  }

  /** Deals the next hand of a hand-episode session; false if its stakes overflow (the session stops). */
  private dealNextHand(): boolean {
    for (let s = 0; s < this.game.numPlayers; s++) this.baseline[s] = this.state.balance(s);
    try {
      this.state.dealNextHand();
      return true;
    } catch (e) {
      if (e instanceof AmountOverflowError) return false;
      throw e;
    }
  }

  private currentPotFactor(): number {
    return 1 / Math.max(1, this.state.pot / this.game.unitsPerChip);
  }

  get seatToAct(): number {
    return this.state.currentSeat;
  }

  /** A table without opponents never fails part-way. */
  get failed(): null {
    return null;
  }

  /** reset, in one piece: without opponents there is nothing to give way between. */
  *resetSteps(seed?: number | string): Generator<void, void> {
    this.reset(seed);
  }

  /** step, in one piece. */
  *stepSteps(action: number, rewards: Float32Array, offset: number): Generator<void, number> {
    return this.step(action, rewards, offset);
  }

  /**
   * The state holding the last episode this table reported as ended (null when it is not kept;
   * episodes reset with `unseen` do not count): a hand
   * episode's session goes on in the current state, which then holds the hands it finished; a
   * new session starts with none, and the finished one is `endedState` like every session's.
   */
  get endedEpisodeState(): KratzenState | null {
    return this.endedInCurrentSession ? this.state : this.endedState;
  }

  /**
   * Applies `action` for the seat to act, writes every seat's reward since the last step into
   * `rewards` at `offset`, and returns RUNNING, TERMINATED or TRUNCATED.
   */
  step(action: number, rewards: Float32Array, offset: number): number {
    const outcome = this.applyStep(action, rewards, offset);
    this.episodeEnded = outcome !== RUNNING;
    return outcome;
  }

  private applyStep(action: number, rewards: Float32Array, offset: number): number {
    const state = this.state;
    const seat = state.currentSeat;
    // `apply` checks legality itself (throwing with the reason, the state unchanged); only the
    // terminate policy needs to know first.
    if (illegalActionEndsEpisode(this.config) && seat >= 0 && !state.isLegal(action)) {
      this.lastActor = seat;
      if (this.byPot) this.potFactor[seat] = this.currentPotFactor();
      // What every seat had pending (the deal's antes, at an episode's first decision) still
      // comes with the penalty: it was dropped, and the episode's rewards no longer summed to the
      // chips it moved.
      this.writeRewards(rewards, offset);
      rewards[offset + seat]! -= this.config.illegalActionPenalty * (this.byPot ? this.potFactor[seat]! : this.config.rewardScale);
      this.illegalActionSeat = seat;
      return TERMINATED;
    }
    this.lastActor = seat;
    if (this.byPot) this.potFactor[seat] = this.currentPotFactor();
    const settledBefore = state.numResults;
    let outcome = RUNNING;
    try {
      state.apply(action);
    } catch (e) {
      if (!(e instanceof AmountOverflowError)) throw e;
      // An amount would pass 2^53 units: the session stops there (docs/rules.md §3, Ledger), so
      // the episode ends cut short, like one that ran out of steps. A settlement that overflowed
      // moved nothing; one that went through before the next deal's stakes overflowed is paid.
      outcome = TRUNCATED;
      if (state.numResults === settledBefore) {
        this.steps++;
        this.writeRewards(rewards, offset);
        return outcome;
      }
    }
    this.steps++;
    this.writeRewards(rewards, offset);
    if (outcome === TRUNCATED) return TRUNCATED;
    if (state.phase === 'over' || state.phase === 'deal') return TERMINATED;
    if (this.config.maxSteps > 0 && this.steps >= this.config.maxSteps) return TRUNCATED;
    return RUNNING;
  }

  /** Writes each seat's chip change since its last reward (scaled) at `offset`, and takes it as paid. */
  private writeRewards(rewards: Float32Array, offset: number): void {
    const state = this.state;
    const n = this.game.numPlayers;
    if (this.byPot) {
      const perChip = 1 / this.game.unitsPerChip;
      for (let s = 0; s < n; s++) {
        const balance = state.balance(s);
        rewards[offset + s] = (balance - this.baseline[s]!) * perChip * this.potFactor[s]!;
        this.baseline[s] = balance;
      }
    } else {
      for (let s = 0; s < n; s++) {
        const balance = state.balance(s);
        rewards[offset + s] = (balance - this.baseline[s]!) * this.rewardPerUnit;
        this.baseline[s] = balance;
      }
    }
  }

  /** The seat whose observation is shown: the seat to act, or the last actor once it is over. */
  get observer(): number {
    const seat = this.state.currentSeat;
    return seat >= 0 ? seat : this.lastActor;
  }
}
