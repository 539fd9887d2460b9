// Agents by name: `random`, `heuristic`, `pimc`, with options after a colon
// (`pimc:samples=24,rollout=random`, `heuristic:caution=0.2`), or a checkpoint directory (a
// checkpoint, a store or a training run's folder, whose latest checkpoint plays).
// Tournaments, training leagues, the bridge and the CLI all seat agents through here.

import type { Agent } from './agent.js';
import { HeuristicAgent } from './heuristic.js';
import { MAX_PIMC_SAMPLES, MAX_PIMC_TIME_BUDGET_MS, PimcAgent, type PimcOptions } from './pimc.js';
import { RandomAgent } from './random.js';
import { checkSeed } from '../env/rules/index.js';

/** How much work one agent may be asked to do; a spec beyond a limit is refused, naming it. */
export interface AgentLimits {
  /** Most sampled deals per pimc decision. */
  maxPimcSamples: number;
  /** Longest pimc time budget per decision, in milliseconds. */
  maxPimcTimeBudgetMs: number;
  /** Most actions a pimc decision simulates, by samples or by time (PimcOptions.maxSimulatedActions). */
  maxPimcSimulatedActions: number;
  /**
   * Largest policy network a checkpoint agent may hold, in bytes of weights (weights.bin): the
   * largest architecture a manifest allows holds 479 MB, and a few clients loading it took a
   * server to gigabytes.
   */
  maxModelBytes: number;
}

/** The bridge's defaults (a server's clients share its CPU): see `kratzen serve --help`. */
export const DEFAULT_AGENT_LIMITS: AgentLimits = { maxPimcSamples: 64, maxPimcTimeBudgetMs: 100, maxPimcSimulatedActions: 4_000, maxModelBytes: 64 << 20 };

/** For local use (tournaments, training): only what keeps a decision finite. */
export const LOCAL_AGENT_LIMITS: AgentLimits = { maxPimcSamples: MAX_PIMC_SAMPLES, maxPimcTimeBudgetMs: MAX_PIMC_TIME_BUDGET_MS, maxPimcSimulatedActions: Infinity, maxModelBytes: Infinity };

export interface AgentContext {
  /** The table's rule set. */
  rules: unknown;
  seed: number | string;
  /** Loads a checkpoint directory as an agent (set by modules that can: see checkpoints/). */
  loadCheckpoint?: (path: string, context: AgentContext) => Promise<Agent>;
  /** @default LOCAL_AGENT_LIMITS */
  limits?: AgentLimits;
}

export const BUILTIN_AGENTS = ['random', 'heuristic', 'pimc'] as const;

/** Whether `spec` names a built-in agent (`pimc:samples=8`); anything else is a checkpoint path. */
export function isBuiltinAgent(spec: string): boolean {
  return BUILTIN_AGENTS.includes(spec.split(':', 1)[0] as never);
}

function parseOptions(text: string | undefined, spec: string): Record<string, string> {
  // No prototype: a key such as `__proto__` or `constructor` is an unknown option, not a field.
  const options: Record<string, string> = Object.create(null);
  if (text === undefined) return options;
  for (const pair of text.split(',')) {
    const [key, value, extra] = pair.split('=');
    if (!key || !value || extra !== undefined) throw new Error(`agent "${spec}": options are key=value pairs separated by commas, got "${pair}"`);
    if (key in options) throw new Error(`agent "${spec}": option ${key} is given twice`);
    options[key] = value;
  }
  return options;
}

/** A decimal number as people write one (`0.5`, `-2`, `12`): not `0x5`, `1e1`, `Infinity` or ``. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

function numberOption(options: Record<string, string>, key: string, spec: string): number | undefined {
  if (options[key] === undefined) return undefined;
  if (!DECIMAL.test(options[key])) throw new Error(`agent "${spec}": ${key} must be a decimal number, got "${options[key]}"`);
  const value = Number(options[key]);
  if (!Number.isFinite(value)) throw new Error(`agent "${spec}": ${key} must be a number`);
  return value;
}

/** An integer option in 1..max (or undefined when absent). */
function boundedOption(options: Record<string, string>, key: string, spec: string, max: number, limitName: string): number | undefined {
  const value = numberOption(options, key, spec);
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new Error(`agent "${spec}": ${key} must be a positive integer`);
  if (value > max) throw new Error(`agent "${spec}": ${key} may be at most ${max} here (${limitName})`);
  return value;
}

/** The agent `make` builds; the class's refusal of an option's value (a caution past ±10) named by the spec. */
function namedBySpec(spec: string, make: () => Agent): Agent {
  try {
    return make();
  } catch (e) {
    throw new Error(`agent "${spec}": ${(e as Error).message}`);
  }
}

/**
 * Whether the agent `spec` names decides by the clock (pimc with timeBudgetMs): its play then
 * depends on the machine's speed and load, not on the seed alone. For a spec createAgent took.
 */
export function agentDependsOnTime(spec: string): boolean {
  if (!isBuiltinAgent(spec)) return false;
  const [kind, optionText] = spec.split(/:(.*)/s, 2) as [string, string | undefined];
  return kind === 'pimc' && parseOptions(optionText, spec).timeBudgetMs !== undefined;
}

/** Creates an agent from its spec; throws an error naming the spec when it is not one. */
export async function createAgent(spec: string, context: AgentContext): Promise<Agent> {
  if (typeof spec !== 'string') throw new TypeError(`an agent spec is a string (random, heuristic, pimc[:options] or a checkpoint folder), got ${String(spec).slice(0, 40)}`);
  if (context === null || typeof context !== 'object') throw new TypeError('createAgent needs a context: { rules, seed }');
  // Objects were all the seed "[object Object]", and NaN the seed "NaN".
  checkSeed(context.seed);
  const [kind, optionText] = spec.split(/:(.*)/s, 2) as [string, string | undefined];
  const options = isBuiltinAgent(spec) ? parseOptions(optionText, spec) : {};
  const allowed: Record<string, string[]> = { random: [], heuristic: ['caution'], pimc: ['samples', 'timeBudgetMs', 'rollout'] };
  if (allowed[kind]) {
    for (const key of Object.keys(options)) {
      if (!allowed[kind]!.includes(key)) throw new Error(`agent "${spec}": unknown option ${key} (allowed: ${allowed[kind]!.join(', ') || 'none'})`);
    }
  }
  switch (kind) {
    case 'random':
      return new RandomAgent({ seed: context.seed });
    case 'heuristic': {
      const caution = numberOption(options, 'caution', spec);
      return namedBySpec(spec, () => new HeuristicAgent({ caution }));
    }
    case 'pimc': {
      const limits = context.limits ?? LOCAL_AGENT_LIMITS;
      const samples = boundedOption(options, 'samples', spec, limits.maxPimcSamples, 'maxPimcSamples');
      const timeBudgetMs = boundedOption(options, 'timeBudgetMs', spec, limits.maxPimcTimeBudgetMs, 'maxPimcTimeBudgetMs');
      // Samples alone do not bound a decision's work (six players, long hands).
      const maxSimulatedActions = limits.maxPimcSimulatedActions;
      return namedBySpec(spec, () => new PimcAgent({ seed: context.seed, samples, timeBudgetMs, maxSimulatedActions, rollout: options.rollout as PimcOptions['rollout'] }));
    }
  }
  // Whether a path names a checkpoint is the loader's to say: the bridge's answers the same for
  // every path it will not load, so the registry must not probe the filesystem first.
  if (!context.loadCheckpoint) throw unknownAgent(spec);
  return context.loadCheckpoint(spec, context);
}

export function unknownAgent(spec: string): Error {
  return new Error(`unknown agent "${spec}": use ${BUILTIN_AGENTS.join(', ')} or a checkpoint directory (a checkpoint, a store or a training run's folder)`);
}
