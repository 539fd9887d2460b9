// `kratzen train`: flags and an optional JSON config file into the trainer. Ctrl-C saves a
// checkpoint after the current update and exits cleanly; a second Ctrl-C exits at once.

import { parseArgs } from 'node:util';
import { ValidationError } from '../env/rules/index.js';
import { train } from '../training/trainer.js';
import { outputFolderFlag, rulesFromFlags, seedFlag } from './flags.js';
import { MAX_CONFIG_BYTES, readInputText } from './read-input.js';
import { parseRedisUrl } from '../training/distributed/redis.js';

const FLAGS = {
  config: { type: 'string' },
  name: { type: 'string' },
  'runs-dir': { type: 'string' },
  seed: { type: 'string' },
  updates: { type: 'string' },
  profile: { type: 'string' },
  players: { type: 'string' },
  variant: { type: 'string' },
  backend: { type: 'string' },
  'num-envs': { type: 'string' },
  'rollout-steps': { type: 'string' },
  hidden: { type: 'string' },
  lr: { type: 'string' },
  'eval-every': { type: 'string' },
  'final-eval-deals': { type: 'string' },
  actors: { type: 'string' },
  critic: { type: 'string' },
  'initial-policy': { type: 'string' },
  redis: { type: 'string' },
  resume: { type: 'boolean' },
} as const;

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ValidationError('invalid arguments', flag, `--${flag} must be a number, got "${value}"`);
  return n;
}

/** Builds the config object from a file and flags (flags win). */
export function trainConfigFromArgs(args: string[]): { config: Record<string, unknown>; resume: boolean; redis?: string } {
  const { values } = parseArgs({ args, options: FLAGS });
  let config: Record<string, unknown> = {};
  if (values.config) {
    const text = readInputText(values.config, 'config', MAX_CONFIG_BYTES, 'invalid training config');
    try {
      config = JSON.parse(text);
    } catch (e) {
      throw new ValidationError('invalid training config', 'config', `${values.config} is not JSON: ${(e as Error).message}`);
    }
  }
  const rules = {
    ...((config.rules as Record<string, unknown>) ?? {}),
    ...rulesFromFlags({ variant: values.variant, profile: values.profile, players: values.players }),
  };
  config.rules = rules;
  const set = (key: string, value: unknown) => value !== undefined && (config[key] = value);
  set('name', values.name);
  set('runsDir', values['runs-dir']);
  set('seed', values.seed === undefined ? undefined : seedFlag(values.seed));
  set('updates', number(values.updates, 'updates'));
  set('backend', values.backend);
  set('numEnvs', number(values['num-envs'], 'num-envs'));
  set('rolloutSteps', number(values['rollout-steps'], 'rollout-steps'));
  set('hiddenSizes', values.hidden?.split(',').map((h) => number(h, 'hidden')));
  set('learningRate', number(values.lr, 'lr'));
  set('evalEvery', number(values['eval-every'], 'eval-every'));
  set('finalEvalDeals', number(values['final-eval-deals'], 'final-eval-deals'));
  set('actors', number(values.actors, 'actors'));
  set('critic', values.critic);
  set('initialPolicy', values['initial-policy']);
  return { config, resume: values.resume ?? false, redis: values.redis };
}

export async function runTrain(args: string[]): Promise<void> {
  const { config, resume, redis: url } = trainConfigFromArgs(args);
  // Before any work: a run whose folder cannot be written would fail at its first checkpoint.
  outputFolderFlag(typeof config.runsDir === 'string' ? config.runsDir : 'runs', 'runs-dir');
  const redis = url === undefined ? undefined : parseRedisUrl(url);
  let stopRequested = false;
  const onSigint = () => {
    if (stopRequested) process.exit(130);
    stopRequested = true;
    process.stderr.write('\nstopping after this update (Ctrl-C again to quit at once)...\n');
  };
  process.on('SIGINT', onSigint);
  try {
    const result = await train(config, { resume, redis, shouldStop: () => stopRequested });
    if (result.interrupted) process.stderr.write(`interrupted after update ${result.updates}; resume with --resume --name ${result.runDir.split('/').pop()}\n`);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
