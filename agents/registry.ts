// Agents by name: `random`, `heuristic`, `pimc`, with options after a colon
// (`pimc:samples=24,rollout=random`, `heuristic:caution=0.2`), or a checkpoint directory.
// Tournaments, training leagues, the bridge and the CLI all seat agents through here.

import { existsSync } from 'node:fs';
import type { Agent } from './agent.js';
import { HeuristicAgent } from './heuristic.js';
import { PimcAgent } from './pimc.js';
import { RandomAgent } from './random.js';

export interface AgentContext {
  /** The table's rule set. */
  rules: unknown;
  seed: number | string;
  /** Loads a checkpoint directory as an agent (set by modules that can: see checkpoints/). */
  loadCheckpoint?: (path: string, context: AgentContext) => Promise<Agent>;
}

export const BUILTIN_AGENTS = ['random', 'heuristic', 'pimc'] as const;

function parseOptions(text: string | undefined, spec: string): Record<string, string> {
  const options: Record<string, string> = {};
  if (!text) return options;
  for (const pair of text.split(',')) {
    const [key, value] = pair.split('=');
    if (!key || value === undefined) throw new Error(`agent "${spec}": options are key=value pairs separated by commas`);
    options[key] = value;
  }
  return options;
}

function numberOption(options: Record<string, string>, key: string, spec: string): number | undefined {
  if (options[key] === undefined) return undefined;
  const value = Number(options[key]);
  if (!Number.isFinite(value)) throw new Error(`agent "${spec}": ${key} must be a number`);
  return value;
}

/** Creates an agent from its spec; throws an error naming the spec when it is not one. */
export async function createAgent(spec: string, context: AgentContext): Promise<Agent> {
  const [kind, optionText] = spec.split(/:(.*)/s, 2) as [string, string | undefined];
  const options = BUILTIN_AGENTS.includes(kind as never) ? parseOptions(optionText, spec) : {};
  const allowed: Record<string, string[]> = { random: [], heuristic: ['caution'], pimc: ['samples', 'timeBudgetMs', 'rollout'] };
  if (allowed[kind]) {
    for (const key of Object.keys(options)) {
      if (!allowed[kind]!.includes(key)) throw new Error(`agent "${spec}": unknown option ${key} (allowed: ${allowed[kind]!.join(', ') || 'none'})`);
    }
  }
  switch (kind) {
    case 'random':
      return new RandomAgent({ seed: context.seed });
    case 'heuristic':
      return new HeuristicAgent({ caution: numberOption(options, 'caution', spec) });
    case 'pimc': {
      const rollout = options.rollout;
      if (rollout !== undefined && rollout !== 'heuristic' && rollout !== 'random') throw new Error(`agent "${spec}": rollout is heuristic or random`);
      return new PimcAgent({
        seed: context.seed,
        samples: numberOption(options, 'samples', spec),
        timeBudgetMs: numberOption(options, 'timeBudgetMs', spec),
        rollout,
      });
    }
  }
  if (existsSync(spec)) {
    if (!context.loadCheckpoint) throw new Error(`agent "${spec}": checkpoints cannot be loaded here`);
    return context.loadCheckpoint(spec, context);
  }
  throw new Error(`unknown agent "${spec}": use ${BUILTIN_AGENTS.join(', ')} or a checkpoint directory`);
}
