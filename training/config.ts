// Training configuration: a zod schema with defaults chosen so that learning is visibly fast on a
// 2-core machine (the default run finishes in well under ten minutes). A config file (JSON) and
// command-line flags both go through it; unknown fields are errors that name the field.

import { z } from 'zod';
import { MAX_SEED_LENGTH, RuleSetError, ValidationError, parseRuleSet, rawJsonObject, ruleSetToJson } from '../env/rules/index.js';
import { firstIssue } from '../env/rules/zod-issue.js';
import { hiddenSizesSchema, suitSymmetrySchema } from '../checkpoints/manifest.js';
import { denseWeightCount, policyWeightBytes } from '../agents/policy-agent.js';
import { OBS_SIZE } from '../env/observation.js';
import { ORACLE_SIZE } from '../env/oracle.js';
import { envConfigSchema } from '../env/table.js';
import { LOCAL_AGENT_LIMITS } from '../agents/registry.js';
import { MAX_TOURNAMENT_DEALS } from './tournament.js';

/**
 * Bounds that keep a config from asking for more memory than any machine has (a clear error
 * instead of a crash inside TF.js): the rollout's rows, which hold an observation each
 * (numEnvs x rolloutSteps x OBS_SIZE floats; 262,144 rows are 0.5 GB), and layer widths and
 * depth (hiddenSizesSchema, shared with checkpoint manifests).
 */
export const MAX_ROLLOUT_ROWS = 262_144;
/**
 * Most weights the policy and the oracle critic may hold together: the wasm backend's memory
 * holds the weights several times over in a training step (their gradients, Adam's moments, the
 * tensors of its update). Measured with the default settings: 41.9 million (this bound) trained, a policy of
 * four hidden layers of 4096 (52 million) ran the backend out of memory at the first update.
 */
export const MAX_TRAINED_WEIGHTS = 40 << 20;
/** Most threads one learner update may be split over (`learnerThreads`). */
export const MAX_LEARNER_THREADS = 16;
/** Largest training config read (`--config`, a run's config.json). */
export const MAX_CONFIG_BYTES = 16 << 20;

/**
 * Largest league weight: the weights are summed, and weights of 1e308 summed to Infinity, which
 * left the league drawing nothing but one kind of opponent.
 */
const MAX_LEAGUE_WEIGHT = 1e6;
const leagueWeight = z.number().nonnegative().max(MAX_LEAGUE_WEIGHT);
/**
 * Largest loss coefficient, clip range or gradient norm: a loss weighted by 1e308 is not finite,
 * and the run stopped as "diverged" after its first rollout, blaming the learning rate.
 */
const MAX_COEFFICIENT = 1e3;

const leagueSchema = z.strictObject({
  /** Weight of episodes where the learner plays every seat. @default 0.3 */
  selfPlay: leagueWeight.default(0.3),
  /** Weight of episodes against heuristic players. @default 0.5 */
  heuristic: leagueWeight.default(0.5),
  /** Weight of episodes against random players. @default 0.1 */
  random: leagueWeight.default(0.1),
  /**
   * Weight of episodes against past snapshots of the learner. Until the first snapshot joins
   * (update `snapshotEvery`), the other weights share its episodes, or self-play takes them when
   * they are all 0. @default 0.1
   */
  snapshots: leagueWeight.default(0.1),
  /**
   * Weight of episodes against pimc search players at their default budget (12 samples, about
   * 1.5 ms a decision here: each pimc seat slows the rollout a hundredfold). @default 0
   */
  pimc: leagueWeight.default(0),
  /** A snapshot joins the league every this many updates. @default 10 */
  snapshotEvery: z.number().int().positive().default(10),
  /** The league keeps this many most recent snapshots. @default 4 */
  maxSnapshots: z.number().int().positive().max(64).default(4),
});

export const trainConfigSchema = z.strictObject({
  /** Run name: files go to `<runsDir>/<name>/`. @default train-<time> */
  name: z
    .string()
    .max(100, 'at most 100 characters')
    .regex(/^[\w.-]+$/, 'letters, digits, _ . - only')
    .refine((name) => name !== '.' && name !== '..', 'a folder name, not . or ..')
    .optional(),
  /** @default 'runs' */
  runsDir: z.string().default('runs'),
  /** Rule set of the table. @default {} (didactic4, 4 players) */
  rules: rawJsonObject('a rule set').default({}),
  seed: z.union([z.number().int(), z.string().max(MAX_SEED_LENGTH)]).default(0),
  /** TF.js backend. @default 'auto' */
  backend: z.enum(['auto', 'tensorflow', 'wasm', 'cpu']).default('auto'),
  /** PPO updates to run (after the imitation updates). @default 150 */
  updates: z.number().int().positive().default(150),
  /**
   * Tables stepped together. Fewer, larger updates learn more from the same environment steps:
   * over 12 seeds, 128 envs x 120 updates beat the heuristic by +0.65 chips/hand on average on the
   * same 1600 deals where 64 x 240 scored +0.42 (+0.23 +- 0.11 seed for seed; README, Training).
   * @default 128
   */
  numEnvs: z.number().int().positive().max(MAX_ROLLOUT_ROWS).default(128),
  /** Vector-env steps per update (every table, every seat's turn). @default 64 */
  rolloutSteps: z.number().int().positive().max(MAX_ROLLOUT_ROWS).default(64),
  /** Hidden layer widths of the policy/value MLP. @default [128, 128] */
  hiddenSizes: hiddenSizesSchema.default([128, 128]),
  /**
   * The policy (and the oracle critic) read the cards with the suits relabelled so that trump is
   * suit 0 (`true`), and with `'holding'` the three plain suits ordered by what the observer
   * holds of each, and map their actions back (env/suit-symmetry.ts): what they learn about one
   * trump suit holds for all four. Kept in the checkpoint; a run from `initialPolicy` must use that
   * policy's setting. Measured seed for seed over 12 seeds (README, Training), in chips/hand over
   * the heuristic: `true` with `entropyCoef` 0.02 gained +0.069 +- 0.053 (95%) against the plain
   * policy at 0.01, and `'holding'` +0.104 +- 0.065 against `true`. @default 'holding'
   */
  suitSymmetry: suitSymmetrySchema.default('holding'),
  /** Adam's step size; above 1 every step overshoots. @default 1e-3 */
  learningRate: z.number().positive().max(1).default(1e-3),
  /**
   * `linear`: PPO update u of U steps with learningRate x (1 - (u - 1) / U), so the last ones
   * refine instead of jumping (imitation updates keep learningRate); such a run cannot be resumed
   * with more updates. Over 8 seeds on the same 1600 deals it beat the heuristic by +0.725
   * chips/hand on average where a constant rate scored +0.661 (README, Training). @default 'linear'
   */
  learningRateDecay: z.enum(['none', 'linear']).default('linear'),
  epochs: z.number().int().positive().max(1000).default(4),
  minibatchSize: z.number().int().positive().max(MAX_ROLLOUT_ROWS).default(1024),
  clip: z.number().positive().max(MAX_COEFFICIENT).default(0.2),
  gamma: z.number().min(0).max(1).default(1),
  lambda: z.number().min(0).max(1).default(0.95),
  valueCoef: z.number().nonnegative().max(MAX_COEFFICIENT).default(0.1),
  /**
   * Where the advantages' values come from. `shared`: the policy's own value head. `oracle`: a
   * separate critic that also sees every other seat's hand (training/critic.ts, PerfectDou's
   * perfect-information critic); `oracle-head`: the same inputs through a head on the policy's
   * last hidden layer. The policy still acts on its observation alone, and the exported
   * checkpoint is the policy alone; actors record the other hands, the learner values them.
   * Measured here (64 envs x 240 updates, otherwise the default run; 1600 final-evaluation deals,
   * chips/hand over the heuristic): seed 0 `shared` +0.536,
   * `oracle` +0.757 ([128, 128]) and +0.850 ([64, 64]), `oracle-head` +0.749; seed 1 `shared`
   * +0.112, `oracle` [64, 64] +0.248 (each +-0.25 to 0.29). @default 'oracle'
   */
  critic: z.enum(['shared', 'oracle', 'oracle-head']).default('oracle'),
  /** Hidden layer widths of the oracle critic. @default [64, 64] (`oracle`), [64] (`oracle-head`) */
  criticHiddenSizes: hiddenSizesSchema.optional(),
  /**
   * The first this many PPO updates train only the oracle critic, the policy held still: for a
   * run that starts from `initialPolicy`, whose fresh critic would otherwise feed it noise. @default 0
   */
  criticWarmupUpdates: z.number().int().nonnegative().default(0),
  /**
   * A checkpoint directory (or a store, or a training run's folder: its latest checkpoint) whose
   * policy weights the learner starts from (fine-tuning; same rules, same hiddenSizes). Only the
   * weights: optimizer and league start fresh. @default none
   */
  initialPolicy: z.string().min(1).optional(),
  /**
   * Weight of the entropy bonus. A policy that relabels suits clones the heuristic more exactly
   * and leaves imitation surer of itself (policy entropy about half of a plain one's); twice the
   * old 0.01 keeps it exploring. @default 0.02
   */
  entropyCoef: z.number().nonnegative().max(MAX_COEFFICIENT).default(0.02),
  maxGradNorm: z.number().positive().max(MAX_COEFFICIENT).default(5),
  /** Rewards are chips times this. @default 0.1 */
  rewardScale: envConfigSchema.shape.rewardScale.unwrap().default(0.1),
  /**
   * `pot`: the learner's rewards in a hand are chips divided by the pot (in chips) at its
   * decisions (`rewardScale` then does not apply). The pot is in the observation and stays put
   * from the antes to the settlement (tavern5 exchange fees aside), so each decision's return is
   * scaled by a positive constant the policy can see: the best action in every state is unchanged,
   * but hands with escalated pots no longer swamp the gradient. Measured here (default run,
   * seeds 0 and 1, 400 deals): +1.02 +- 0.55 and +0.73 +- 0.50 chips/hand over the heuristic
   * with `pot`; -0.26 +- 1.14 (80 deals) with `chips`. `chips`: rewards as the env gives them.
   * @default 'pot'
   */
  rewardNormalization: z.enum(['chips', 'pot']).default('pot'),
  /**
   * Updates of behaviour cloning from the heuristic before PPO (0 = none). Measured here: PPO
   * alone needs far longer than a few minutes to reach the heuristic; cloned first, it passes it.
   * The clone matches 98% of the heuristic's actions by about update 10, so 10 of them and 150 PPO
   * updates beat 40 and 120 (in the same time: a cloning update costs about one and a half PPO
   * updates) by +0.198 +- 0.085 chips/hand (95%) over 12 seeds, seed for seed (README, Training).
   * A run from `initialPolicy` would clone the heuristic over the policy it loaded, so there the
   * default is 0. @default 10, or 0 with `initialPolicy`
   */
  imitationUpdates: z.number().int().nonnegative().default(10),
  /**
   * Who is cloned: the heuristic, or pimc for the bidding decisions (declarations, discards,
   * exchange, trump) with the heuristic for trick play. @default 'heuristic'
   */
  imitationTeacher: z.enum(['heuristic', 'pimc-bidding']).default('heuristic'),
  /** Samples per decision of the pimc teacher, at most what a local pimc agent takes (100,000). @default 8 */
  teacherSamples: z.number().int().positive().max(LOCAL_AGENT_LIMITS.maxPimcSamples).default(8),
  league: leagueSchema.default(leagueSchema.parse({})),
  /** Evaluate (duplicate, vs random and vs heuristic) every this many updates; 0 = never. @default 40 */
  evalEvery: z.number().int().nonnegative().default(40),
  /**
   * Deals per periodic evaluation, per opponent. 100 deals (1,600 didactic4 hands, ~1.5 s per
   * opponent here) give intervals of about +-1 chip per hand: wide, but they separate a policy
   * that beats the heuristic from one that does not. @default 100
   */
  evalDeals: z.number().int().min(2).max(MAX_TOURNAMENT_DEALS).default(100),
  /**
   * Deals of the final evaluation, per opponent; 0 skips it. 1600 deals (25,600 hands) narrow the
   * 95% interval to about +-0.3 chips/hand in didactic4, enough to tell the default run's edge
   * over the heuristic from none, where 400 deals give about +-0.55 and 100 about +-1.
   * @default 1600
   */
  finalEvalDeals: z.number().int().nonnegative().max(MAX_TOURNAMENT_DEALS).refine((d) => d !== 1, 'needs 0 or at least 2 deals').default(1600),
  /** Save a checkpoint every this many updates (and always at the end). @default 40 */
  checkpointEvery: z.number().int().positive().default(40),
  /** The newest checkpoints kept (latest among them), and best besides when it is older. @default 3 */
  keepCheckpoints: z.number().int().positive().default(3),
  /**
   * Worker threads collecting each rollout, `numEnvs / actors` envs each (training/actors.ts); 0
   * collects in the learner's thread. Runs are reproducible for a given seed and `actors`; a
   * different `actors` splits the envs differently and so plays other hands. @default 0
   */
  actors: z.number().int().min(0).max(32).default(0),
  /**
   * Threads that differentiate each minibatch: with K > 1, K - 1 helper threads each take one of
   * K consecutive parts of every minibatch while the learner's thread takes the first, and the
   * parts' gradients are averaged, weighted by rows (training/gradient-helper.ts). With 2 on two
   * free cores the update takes ~0.6 of one thread's time; more threads than free cores gain
   * nothing. Runs are reproducible for a given seed and `learnerThreads`; different counts round
   * differently, so their runs part from the first update on. `kratzen exploit` keeps one
   * thread. @default 2
   */
  learnerThreads: z.number().int().min(1).max(MAX_LEARNER_THREADS).default(2),
  /**
   * With actors: each update's rollout is collected while the learner runs the update before it,
   * with the weights that update started from (one version stale, as in APPO; PPO's ratio is
   * taken against the policy that acted). Both cores then work at once. `false`: the learner
   * waits for each rollout of its current weights. @default true
   */
  overlapRollouts: z.boolean().default(true),
});

export type TrainConfigInput = z.input<typeof trainConfigSchema>;
export type TrainConfig = z.output<typeof trainConfigSchema> & { name: string };

/** `imitationUpdates` defaults to 0 when the run starts from a trained policy (see the field). */
function withImitationDefault(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const fields = input as Record<string, unknown>;
  return fields.initialPolicy !== undefined && fields.imitationUpdates === undefined ? { ...fields, imitationUpdates: 0 } : input;
}

/** The oracle critic's hidden layer widths (`criticHiddenSizes`, else its default for `critic`); null for `shared`. */
export function criticHiddenSizesOf(config: Pick<TrainConfig, 'critic' | 'criticHiddenSizes'>): readonly number[] | null {
  if (config.critic === 'shared') return null;
  return config.criticHiddenSizes ?? (config.critic === 'oracle-head' ? [64] : [64, 64]);
}

/** The width of what the oracle critic reads beside the other hands: the observation, or the policy's last hidden layer (`oracle-head`). */
export function criticInputSizeOf(config: Pick<TrainConfig, 'critic' | 'hiddenSizes'>): number {
  return config.critic === 'oracle-head' ? config.hiddenSizes[config.hiddenSizes.length - 1]! : OBS_SIZE;
}

/** Refuses networks that together hold more than MAX_TRAINED_WEIGHTS, naming the larger one's field. */
function checkTrainedWeights(config: Pick<TrainConfig, 'hiddenSizes' | 'critic' | 'criticHiddenSizes'>): void {
  const policy = policyWeightBytes(config) / 4;
  const criticHidden = criticHiddenSizesOf(config);
  const critic = criticHidden ? denseWeightCount(criticInputSizeOf(config) + ORACLE_SIZE, criticHidden, 1) : 0;
  if (policy + critic <= MAX_TRAINED_WEIGHTS) return;
  const field = critic > policy ? 'criticHiddenSizes' : 'hiddenSizes';
  throw new ValidationError(
    'invalid training config',
    field,
    `the policy (${policy} weights) and the critic (${critic}) would hold ${policy + critic} weights, more than the ${MAX_TRAINED_WEIGHTS} a training thread's memory holds with their gradients and optimizer state: use narrower or fewer hidden layers`,
  );
}

/** Validates a config; the error names the first bad field (`league.selfPlay`, `rules.players`). */
export function parseTrainConfig(input: unknown, now: Date = new Date()): TrainConfig {
  const parsed = trainConfigSchema.safeParse(withImitationDefault(input ?? {}));
  if (!parsed.success) {
    const { field, reason } = firstIssue(parsed.error);
    throw new ValidationError('invalid training config', field, reason);
  }
  let rules;
  try {
    rules = parseRuleSet(parsed.data.rules);
  } catch (e) {
    if (e instanceof RuleSetError) throw new ValidationError('invalid training config', e.field ? `rules.${e.field}` : 'rules', e.reason);
    throw e;
  }
  const { league } = parsed.data;
  if (league.selfPlay + league.heuristic + league.random + league.snapshots + league.pimc <= 0) {
    throw new ValidationError('invalid training config', 'league', 'the league weights must not all be zero');
  }
  if (parsed.data.actors > 0 && parsed.data.numEnvs % parsed.data.actors !== 0) {
    throw new ValidationError('invalid training config', 'actors', `numEnvs (${parsed.data.numEnvs}) must be a multiple of actors (${parsed.data.actors})`);
  }
  const rows = parsed.data.numEnvs * parsed.data.rolloutSteps;
  if (rows > MAX_ROLLOUT_ROWS) {
    throw new ValidationError('invalid training config', 'rolloutSteps', `numEnvs x rolloutSteps (${rows}) must be at most ${MAX_ROLLOUT_ROWS} rows, each holding an observation`);
  }
  if (parsed.data.critic === 'shared' && parsed.data.criticWarmupUpdates > 0) {
    throw new ValidationError('invalid training config', 'criticWarmupUpdates', 'a warm-up needs an oracle critic (critic "oracle" or "oracle-head")');
  }
  // The shared critic is the policy's own value head: widths given for another critic built
  // nothing, and the run said nothing of it.
  if (parsed.data.critic === 'shared' && parsed.data.criticHiddenSizes !== undefined) {
    throw new ValidationError('invalid training config', 'criticHiddenSizes', 'the shared critic is the policy\'s value head, with no layers of its own: criticHiddenSizes needs critic "oracle" or "oracle-head"');
  }
  checkTrainedWeights(parsed.data);
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return { ...parsed.data, rules: ruleSetToJson(rules), name: parsed.data.name ?? `train-${stamp}` };
}
