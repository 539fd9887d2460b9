// Duplicate tournaments: every deal (a seeded session, so the same cards in the same order) is
// replayed once for every rotation of the agents over the seats, so the luck of the cards
// cancels. Agents are cycled over the seats (3 agents at 4 seats: A B C A); rotation r seats
// agent assignment[(s + r) % n] at seat s.
//
// For each deal and agent: chips won per seat-hand over all rotations. The deals are the
// independent samples behind every confidence interval. Results depend only on the seed: every
// agent is created afresh for each deal with a seed derived from (seed, deal, rotation, seat), and
// deals are reassembled in order whatever the number of workers.

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { AmountOverflowError, ValidationError, createGame } from '../env/rules/index.js';
import { createAgent, playSession, type Agent, type AgentContext } from '../agents/index.js';
import { bradleyTerryElo, meanCi, type MeanCi } from './stats.js';
import { builtModule } from '../env/built-module.js';
import { CheckpointError, type CheckpointErrorCode } from '../checkpoints/errors.js';
import { isBuiltinAgent } from '../agents/registry.js';
import { checkpointFolderOf } from '../checkpoints/store.js';
import { namesPath } from '../checkpoints/agent-loader.js';
import { pinCheckpoints } from './pinned-checkpoints.js';

/**
 * What a tournament worker posts when it stops: bad input keeps its field across the thread, and
 * a session whose amounts pass 2^53 - 1 units its hand (docs/rules.md §3), as on one thread.
 */
export interface WorkerFailure {
  error: string;
  invalid?: { error: string; field: string; reason: string };
  /** A checkpoint that cannot be used, as the loader named it (in a worker it was "evaluation failed"). */
  checkpoint?: { code: CheckpointErrorCode; path: string; reason: string };
  overflowHand?: number;
}

/**
 * Makes and disposes the agent `spec` names, so that a spec no agent comes from fails before any
 * deal is played. A spec naming a path that exists is a checkpoint: loaded (for these rules) only
 * with `loadCheckpoint`, else left to the run. Says whether the spec is a checkpoint.
 */
export async function checkAgentSpec(spec: string, rules: unknown, loadCheckpoint?: AgentContext['loadCheckpoint']): Promise<boolean> {
  // A link that leads to nothing is a path too: its loader says so (it was "unknown agent").
  const isCheckpoint = !isBuiltinAgent(spec) && namesPath(spec);
  if (isCheckpoint && !loadCheckpoint) return true;
  (await createAgent(spec, { rules, seed: 0, ...(isCheckpoint ? { loadCheckpoint } : {}) })).dispose?.();
  return isCheckpoint;
}

/** The error a worker's failure stands for, as the same work on one thread would throw it. */
function workerError(failure: WorkerFailure): Error {
  if (failure.invalid) return new ValidationError(failure.invalid.error, failure.invalid.field, failure.invalid.reason);
  if (failure.checkpoint) return new CheckpointError(failure.checkpoint.code, failure.checkpoint.path, failure.checkpoint.reason);
  if (failure.overflowHand !== undefined) return new AmountOverflowError(failure.overflowHand);
  return new Error(failure.error);
}

export interface TournamentConfig {
  /** Agent specs (see agents/registry.ts): `random`, `heuristic`, `pimc[:opts]`, a checkpoint dir. */
  agents: string[];
  /** The table's rule set; `players` seats (3-6). */
  rules: Record<string, unknown>;
  /** Deals to play; each is played once per rotation (so seats x deals sessions in all). */
  deals: number;
  seed: number | string;
  /** Worker threads; 0 or 1 runs in this thread. */
  workers?: number;
}

export interface DealResult {
  deal: number;
  /** Chips per seat-hand for each agent in this deal (over all rotations). */
  chipsPerHand: number[];
  /** Hands played over all rotations. */
  hands: number;
}

export interface AgentSummary {
  name: string;
  meanChipsPerHand: number;
  /** Half-width of the 95% confidence interval of meanChipsPerHand. */
  ci95: number;
  rating: number;
}

export interface HeadToHead {
  a: string;
  b: string;
  /** Mean of (a's chips per hand - b's) over deals, with its 95% CI half-width. */
  meanDifference: number;
  ci95: number;
  /** Deals in which a did better than b, a tie counting half (as the rating fit counts them). */
  aWins: number;
  /** Deals in which a and b did equally well (in aWins as halves). */
  ties: number;
  deals: number;
}

/**
 * "better in 30 of 40 deals, tied in 2": the deals a did strictly better in, and the ties apart
 * (printed as half wins, a match of one agent against itself read "better in 1.5 of 3 deals").
 */
export function dealsBetterText(h: HeadToHead): string {
  return `better in ${dealsBetter(h)} of ${h.deals} deals${h.ties > 0 ? `, tied in ${h.ties}` : ''}`;
}

/** The deals a did strictly better in than b (aWins counts each tie as half). */
export function dealsBetter(h: HeadToHead): number {
  return h.aWins - h.ties / 2;
}

export interface TournamentResult {
  config: {
    agents: string[];
    rules: Record<string, unknown>;
    deals: number;
    seed: number | string;
    players: number;
    /** For agents given as a checkpoint store or a training run's folder: the checkpoint its `latest` named, which every deal played. */
    checkpoints?: Record<string, string>;
  };
  agents: AgentSummary[];
  headToHead: HeadToHead[];
  ratingMethod: string;
  hands: number;
  deals: DealResult[];
}

/** The agent seated at seat s in rotation r. */
export function seating(numAgents: number, numSeats: number, rotation: number): number[] {
  return Array.from({ length: numSeats }, (_, s) => ((s + rotation) % numSeats) % numAgents);
}

export type CheckpointLoader = NonNullable<AgentContext['loadCheckpoint']>;

/** Plays one deal under every rotation. `cache` keeps checkpoint agents (stateless, greedy). */
export async function playDeal(
  config: TournamentConfig,
  deal: number,
  loadCheckpoint: CheckpointLoader | undefined,
  cache: Map<string, Agent>,
): Promise<DealResult> {
  const game = createGame(config.rules);
  const n = game.numPlayers;
  const k = config.agents.length;
  // Summed in the engine's units, whole numbers: tavern5's fifths of a chip summed as floats
  // made equal results differ in the last bit, and ties of identical agents counted as wins.
  const units = new Array<number>(k).fill(0);
  const seatHands = new Array<number>(k).fill(0);
  let hands = 0;
  const sessionSeed = `${config.seed}/deal${deal}`;
  for (let rotation = 0; rotation < n; rotation++) {
    const assignment = seating(k, n, rotation);
    const agents: Agent[] = [];
    for (let s = 0; s < n; s++) {
      const spec = config.agents[assignment[s]!]!;
      const cached = cache.get(spec);
      if (cached) {
        agents.push(cached);
        continue;
      }
      const context: AgentContext = { rules: config.rules, seed: `${sessionSeed}/r${rotation}/s${s}`, loadCheckpoint };
      const agent = await createAgent(spec, context);
      // Only checkpoints (every spec that is no built-in agent) are shared across seats and deals:
      // a file named `random` beside the run cached the seeded random agent, and changed the
      // results (and made them depend on --workers).
      if (!isBuiltinAgent(spec)) cache.set(spec, agent);
      agents.push(agent);
    }
    const state = playSession(agents, { rules: config.rules, seed: sessionSeed });
    hands += state.results.length;
    for (let s = 0; s < n; s++) {
      units[assignment[s]!]! += state.balance(s);
      seatHands[assignment[s]!]! += state.results.length;
    }
  }
  return { deal, chipsPerHand: units.map((u, a) => game.toChips(u) / seatHands[a]!), hands };
}

/**
 * The most hands one deal of playDeal can play under `rules`: a session in each seat rotation,
 * each its regular hands and at most one tie-break deal where the profile has them (docs/rules.md
 * §4); sessions that stop early play fewer.
 */
export function maxDealHands(rules: Record<string, unknown>): number {
  const game = createGame(rules);
  return game.numPlayers * (game.rules.hands + (game.profile.tieBreaks ? 1 : 0));
}

function workerScript(): URL {
  return builtModule(new URL('./tournament-worker.js', import.meta.url), new URL('../dist/training/tournament-worker.js', import.meta.url));
}

export interface RunOptions {
  loadCheckpoint?: CheckpointLoader;
  /** Module that exports `loadCheckpoint` for workers (they cannot receive functions). */
  checkpointModule?: string;
  onDeal?: (done: number, total: number) => void;
  /** Agents already in memory, by the name used in `agents` (one worker only: they cannot move). */
  preloaded?: Map<string, Agent>;
  /**
   * Checked after every deal; true ends the tournament at once (workers are terminated) and it
   * rejects with a TournamentStopped. Ctrl-C in a training run's final evaluation sets it.
   */
  shouldStop?: () => boolean;
}

/** What `runTournament` rejects with when its `shouldStop` said so: the deals played are dropped. */
export class TournamentStopped extends Error {
  constructor(readonly dealsPlayed: number) {
    super(`the tournament was stopped after ${dealsPlayed} deals`);
    this.name = 'TournamentStopped';
  }
}

/** Most deals of one tournament (each keeps its per-deal results; 10^6 deals are a few hundred MB). */
export const MAX_TOURNAMENT_DEALS = 1_000_000;
/** Most worker threads of one tournament (each loads its own agents and TF.js). */
export const MAX_TOURNAMENT_WORKERS = 64;

/**
 * The deals (at least 2, for intervals) that play about `hands` hands: each deal is a session of
 * `handsPerSession` hands in each of `numPlayers` seat rotations. Errors name `hands`.
 */
export function dealsForHands(hands: number, numPlayers: number, handsPerSession: number): number {
  if (!Number.isInteger(hands) || hands < 1) throw new ValidationError('invalid arguments', 'hands', 'hands must be an integer of at least 1');
  const deals = Math.max(2, Math.ceil(hands / (numPlayers * handsPerSession)));
  if (deals > MAX_TOURNAMENT_DEALS) {
    throw new ValidationError('invalid arguments', 'hands', `${hands} hands would be ${deals} deals; at most ${MAX_TOURNAMENT_DEALS} (${MAX_TOURNAMENT_DEALS * numPlayers * handsPerSession} hands here)`);
  }
  return deals;
}

/** Runs a tournament, in worker threads when `workers > 1`. */
export async function runTournament(config: TournamentConfig, options: RunOptions = {}): Promise<TournamentResult> {
  if (config.agents.length < 2) throw new Error('a tournament needs at least two agents');
  const seats = createGame(config.rules).numPlayers;
  // Seating cycles the agents over the seats: more agents than seats would leave some unplayed.
  if (config.agents.length > seats) throw new ValidationError('invalid arguments', 'agents', `${config.agents.length} agents for ${seats} seats: at most one agent per seat`);
  if (!Number.isInteger(config.deals) || config.deals < 2) throw new Error('a tournament needs at least two deals (for intervals)');
  if (config.deals > MAX_TOURNAMENT_DEALS) throw new ValidationError('invalid arguments', 'deals', `a tournament plays at most ${MAX_TOURNAMENT_DEALS} deals`);
  if (config.workers !== undefined && (!Number.isInteger(config.workers) || config.workers < 1 || config.workers > MAX_TOURNAMENT_WORKERS)) {
    throw new ValidationError('invalid arguments', 'workers', `workers must be an integer 1..${MAX_TOURNAMENT_WORKERS}`);
  }
  const game = createGame(config.rules);
  const workers = Math.max(1, Math.min(config.workers ?? 1, config.deals));
  if (options.preloaded && workers > 1) throw new Error('preloaded agents need workers: 1');
  // A store's or a run's `latest` moves while that run trains: read once here, every deal (and
  // every worker) plays the same checkpoint, a copy of it (pinned-checkpoints.ts). Each worker
  // read it for itself at its first deal, and one agent name covered two policies.
  const pins = options.preloaded ? null : await pinCheckpoints(config.agents, async (spec) => (await latestCheckpoints([spec])).get(spec));
  try {
    const playing: TournamentConfig = !pins || pins.playing.size === 0 ? config : { ...config, agents: config.agents.map((spec) => pins.playing.get(spec) ?? spec) };
    const results = await playDeals(config, playing, workers, options);
    return summarize(config, game.numPlayers, results, pins?.latest);
  } catch (e) {
    throw pins ? pins.describe(e) : e;
  } finally {
    await pins?.dispose();
  }
}

/** Every deal of `playing` (`config` with the checkpoints it plays), in `workers` threads. */
async function playDeals(config: TournamentConfig, playing: TournamentConfig, workers: number, options: RunOptions): Promise<DealResult[]> {
  const results: DealResult[] = new Array(config.deals);
  let done = 0;
  if (workers === 1) {
    const cache = new Map<string, Agent>(options.preloaded ?? []);
    for (let deal = 0; deal < config.deals; deal++) {
      results[deal] = await playDeal(playing, deal, options.loadCheckpoint, cache);
      options.onDeal?.(++done, config.deals);
      if (options.shouldStop?.()) throw new TournamentStopped(done);
    }
  } else {
    const running: Worker[] = [];
    let stopped: TournamentStopped | null = null;
    try {
      await Promise.all(
        Array.from({ length: workers }, (_, w) => {
          const deals = Array.from({ length: config.deals }, (_, d) => d).filter((d) => d % workers === w);
          return new Promise<void>((resolve, reject) => {
            const worker = new Worker(workerScript(), { workerData: { config: playing, deals, checkpointModule: options.checkpointModule } });
            running.push(worker);
            worker.on('message', (message: DealResult | WorkerFailure) => {
              if (stopped) return;
              if ('error' in message) return reject(workerError(message));
              results[message.deal] = message;
              options.onDeal?.(++done, config.deals);
              if (options.shouldStop?.()) {
                stopped = new TournamentStopped(done);
                reject(stopped);
              }
            });
            worker.on('error', reject);
            worker.on('exit', (code) => (code === 0 ? resolve() : reject(stopped ?? new Error(`tournament worker exited with ${code}`))));
          });
        }),
      );
    } finally {
      // A stopped or failed tournament's other workers would play on for nobody.
      await Promise.all(running.map((worker) => worker.terminate()));
    }
  }
  return results;
}

/**
 * The checkpoint folder each agent given as a checkpoint store or a run's folder plays now (its
 * `latest`, checked); specs that are a checkpoint folder themselves, built-in agents, and paths
 * that name no checkpoint (left for the agent's own error) are not listed. A damaged pointer is
 * the CheckpointError loading the store gives.
 */
export async function latestCheckpoints(specs: readonly string[]): Promise<Map<string, string>> {
  const latest = new Map<string, string>();
  for (const spec of specs) {
    if (isBuiltinAgent(spec) || latest.has(spec) || !existsSync(spec)) continue;
    const folder = await checkpointFolderOf(spec);
    if (folder !== null && folder !== spec) latest.set(spec, folder);
  }
  return latest;
}

/**
 * The agents' names in a result: their specs, numbered where one is given more than once
 * (`random #1`, `random #2`): the report's head-to-head keyed them by name, and lost pairs.
 * A number another agent's spec already is is skipped (a checkpoint folder named `heuristic #1`
 * beside two heuristics made two agents `heuristic #1`).
 */
export function agentNames(specs: readonly string[]): string[] {
  const taken = new Set(specs);
  const counters = new Map<string, number>();
  return specs.map((spec) => {
    if (specs.indexOf(spec) === specs.lastIndexOf(spec)) return spec;
    let k = counters.get(spec) ?? 0;
    let name: string;
    do name = `${spec} #${++k}`;
    while (taken.has(name));
    counters.set(spec, k);
    taken.add(name);
    return name;
  });
}

/** The result of `deals`; `latest` names the checkpoint each store or run given as an agent played (latestCheckpoints). */
export function summarize(config: TournamentConfig, players: number, deals: DealResult[], latest: ReadonlyMap<string, string> = new Map()): TournamentResult {
  const names = agentNames(config.agents);
  const k = names.length;
  const perAgent: MeanCi[] = names.map((_, a) => meanCi(deals.map((d) => d.chipsPerHand[a]!)));
  const wins = names.map(() => new Array<number>(k).fill(0));
  const headToHead: HeadToHead[] = [];
  for (let a = 0; a < k; a++) {
    for (let b = a + 1; b < k; b++) {
      const diffs = deals.map((d) => d.chipsPerHand[a]! - d.chipsPerHand[b]!);
      let aWins = 0;
      let ties = 0;
      for (const diff of diffs) {
        if (diff > 0) aWins++;
        else if (diff === 0) ties++;
      }
      aWins += ties / 2;
      wins[a]![b] = aWins;
      wins[b]![a] = diffs.length - aWins;
      const { mean, ci95 } = meanCi(diffs);
      headToHead.push({ a: names[a]!, b: names[b]!, meanDifference: mean, ci95, aWins, ties, deals: diffs.length });
    }
  }
  const ratings = bradleyTerryElo(wins);
  return {
    config: { agents: [...config.agents], rules: config.rules, deals: config.deals, seed: config.seed, players, ...(latest.size > 0 && { checkpoints: Object.fromEntries(latest) }) },
    agents: names.map((name, a) => ({ name, meanChipsPerHand: perAgent[a]!.mean, ci95: perAgent[a]!.ci95, rating: ratings[a]! })),
    headToHead,
    ratingMethod:
      'Bradley-Terry on the Elo scale (mean 1500): each deal is a pairing between every two agents, won by the one with more chips per hand; half a virtual draw per pair keeps ratings finite',
    hands: deals.reduce((sum, d) => sum + d.hands, 0),
    deals,
  };
}
