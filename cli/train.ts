// `kratzen train`: flags and an optional JSON config file into the trainer. Ctrl-C saves a
// checkpoint after the current update and exits with the signal's code (130); a second Ctrl-C
// exits at once (on Redis, once the update's queued jobs are taken back).

import { basename } from 'node:path';
import { ValidationError, isJsonObject } from '../env/rules/index.js';
import { train } from '../training/trainer.js';
import { MAX_CONFIG_BYTES } from '../training/config.js';
import { OutputError } from '../checkpoints/durable-fs.js';
import { integerFlag, outputFolderFlag, parseFlags, redisFlag, rulesFromFlags, seedFlag, suitSymmetryFlag } from './flags.js';
import { repeatedKeyIn, readInputText } from './read-input.js';
import { repeatedKeyReason } from '../env/json-scan.js';
import { redactedUrl } from '../training/distributed/redis.js';
import { STOP_SIGNALS, signalExitCode } from './signals.js';
import { printable, shellQuoted } from './output.js';

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
  'learner-threads': { type: 'string' },
  critic: { type: 'string' },
  'suit-symmetry': { type: 'string' },
  'initial-policy': { type: 'string' },
  redis: { type: 'string' },
  resume: { type: 'boolean' },
} as const;

/** A decimal number (`3e-4`, `0.001`); hex and other forms Number() reads are refused, as elsewhere. */
function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) || !Number.isFinite(Number(value))) {
    throw new ValidationError('invalid arguments', flag, `--${flag} must be a number, got "${value}"`);
  }
  return Number(value);
}

/** Builds the config object from a file and flags (flags win). */
export function trainConfigFromArgs(args: string[]): { config: Record<string, unknown>; resume: boolean; redis?: string; runsDirField: 'runs-dir' | 'runsDir' } {
  const { values } = parseFlags({ args, options: FLAGS });
  let config: Record<string, unknown> = {};
  // An empty --config (an unset shell variable) was taken as none: the defaults trained silently.
  if (values.config === '') throw new ValidationError('invalid training config', 'config', '--config is empty: name a JSON file, or - for stdin');
  if (values.config) {
    const text = readInputText(values.config, 'config', MAX_CONFIG_BYTES, 'invalid training config');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ValidationError('invalid training config', 'config', `${values.config} is not JSON: ${(e as Error).message}`);
    }
    if (!isJsonObject(parsed)) throw new ValidationError('invalid training config', 'config', `${values.config} must hold a JSON object of config fields`);
    const twice = repeatedKeyIn(text);
    if (twice !== null) throw new ValidationError('invalid training config', twice.field, `${values.config}: ${repeatedKeyReason(twice)}`);
    config = parsed;
  }
  // The file's rules are checked before the rule flags are merged into them: merging would
  // silently drop a `rules` that is not an object (true, 5) and name a string's characters.
  if (config.rules !== undefined && !isJsonObject(config.rules)) {
    throw new ValidationError('invalid training config', 'rules', 'must be a rule set object ({"profile": "didactic4", ...})');
  }
  config.rules = {
    ...(config.rules ?? {}),
    ...rulesFromFlags({ variant: values.variant, profile: values.profile, players: values.players }),
  };
  const set = (key: string, value: unknown) => value !== undefined && (config[key] = value);
  set('name', values.name);
  set('runsDir', values['runs-dir']);
  set('seed', values.seed === undefined ? undefined : seedFlag(values.seed));
  set('updates', integerFlag(values.updates, 'updates'));
  set('backend', values.backend);
  set('numEnvs', integerFlag(values['num-envs'], 'num-envs'));
  set('rolloutSteps', integerFlag(values['rollout-steps'], 'rollout-steps'));
  set('hiddenSizes', values.hidden?.split(',').map((h) => integerFlag(h, 'hidden')));
  set('learningRate', number(values.lr, 'lr'));
  set('evalEvery', integerFlag(values['eval-every'], 'eval-every'));
  set('finalEvalDeals', integerFlag(values['final-eval-deals'], 'final-eval-deals'));
  set('actors', integerFlag(values.actors, 'actors'));
  set('learnerThreads', integerFlag(values['learner-threads'], 'learner-threads'));
  set('critic', values.critic);
  set('suitSymmetry', suitSymmetryFlag(values['suit-symmetry'], 'suit-symmetry'));
  set('initialPolicy', values['initial-policy']);
  // Errors about the runs folder name the flag when it chose the folder, else the config field.
  const runsDirField = values['runs-dir'] !== undefined ? 'runs-dir' : 'runsDir';
  // Without a name a run is named by the clock: --resume then looked for a run made this second,
  // and said that fresh name did not exist.
  if (values.resume && config.name === undefined) throw new ValidationError('invalid arguments', 'name', '--resume needs the name of the run to go on with: --resume --name <name> (as an interrupted run says)');
  return { config, resume: values.resume ?? false, redis: values.redis, runsDirField };
}

/** What a stopped run tells its user: the flags that resume it, --runs-dir too when not the default. */
export function interruptedMessage(config: Record<string, unknown>, runDir: string, updates: number): string {
  const runsDir = typeof config.runsDir === 'string' && config.runsDir !== 'runs' ? ` --runs-dir ${shellQuoted(config.runsDir)}` : '';
  return printable(`interrupted after update ${updates}; resume with --resume --name ${shellQuoted(basename(runDir))}${runsDir}`);
}

/** How long a run on Redis stopped a second time may take to withdraw its queued jobs before it exits. */
const WITHDRAW_GRACE_MS = 6000;

export async function runTrain(args: string[]): Promise<void> {
  const { config, resume, redis: url, runsDirField } = trainConfigFromArgs(args);
  // Before any work: a run whose folder cannot be written would fail at its first checkpoint.
  outputFolderFlag(typeof config.runsDir === 'string' ? config.runsDir : 'runs', runsDirField, runsDirField === 'runsDir' ? { label: "the config's runsDir", error: 'invalid training config' } : undefined);
  const redis = url === undefined ? undefined : redisFlag(url);
  // Said at once, as eval says it: with no worker running the run waited without a word.
  if (url !== undefined) process.stderr.write(`train: rollouts go to Redis at ${redactedUrl(url)}; \`kratzen worker --redis <url>\` processes play them (until one takes them, this waits)\n`);
  let stoppedBy: NodeJS.Signals | null = null;
  // Ctrl-C, a kill or a closed terminal save a checkpoint after the current update, as `kratzen
  // play` saves its record; the same signal again ends the process at once. Either way the exit
  // code is the signal's (128 + its number, as a shell reports it): a stopped run exited 0, so
  // `train && eval` went on as if it had finished.
  const interrupt = new AbortController();
  const onStopSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy) {
      // On Redis the update's queued jobs are taken back first (workers played them for
      // nobody), within WITHDRAW_GRACE_MS: a rollout waiting for workers ends with them.
      if (!redis || interrupt.signal.aborted) process.exit(signalExitCode(signal));
      process.stderr.write('taking the queued rollout jobs back, then quitting...\n');
      interrupt.abort(signal);
      setTimeout(() => process.exit(signalExitCode(signal)), WITHDRAW_GRACE_MS);
      return;
    }
    stoppedBy = signal;
    process.stderr.write('\nstopping after this update, or this deal of the final evaluation (Ctrl-C again to quit at once)...\n');
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStopSignal);
  try {
    const result = await train(config, { resume, redis, shouldStop: () => stoppedBy !== null, interrupt: interrupt.signal });
    if (result.interrupted) {
      process.stderr.write(`${interruptedMessage(config, result.runDir, result.updates)}\n`);
      process.exitCode = signalExitCode(stoppedBy ?? 'SIGINT');
    }
  } catch (e) {
    if (interrupt.signal.aborted) process.exit(signalExitCode(interrupt.signal.reason as NodeJS.Signals));
    // The trainer names its config field; the flag, when it chose the folder.
    if (e instanceof OutputError && e.field === 'runsDir') throw new OutputError(runsDirField, e.reason);
    throw e;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onStopSignal);
  }
}
