// `npm run bench [-- --json] [-- --only rules,env] [-- --seconds S]`: throughput figures of every layer.
// `--json` prints one JSON object mapping metric names to numbers; `--help` the usage.

import { parseFlags } from '../cli/flags.js';
import { benchAgents } from './agents.js';
import { benchBridge } from './bridge.js';
import { benchEnv } from './env.js';
import { benchRules } from './rules.js';
import { benchTrain } from './train.js';
import { benchDistributed } from './distributed.js';

const SUITES: Record<string, (seconds: number) => Record<string, number> | Promise<Record<string, number>>> = {
  rules: benchRules,
  env: benchEnv,
  agents: benchAgents,
  bridge: benchBridge,
  train: (seconds: number) => benchTrain(Math.max(seconds * 5, 5)),
  distributed: (seconds: number) => benchDistributed(Math.max(seconds * 3, 3)),
};

const USAGE = `npm run bench -- [--only SUITES] [--seconds S] [--json]

Throughput figures of every layer, measured on this machine now. Its speed drifts between runs:
compare ratios taken in one run (the bridge.ratio.* and train.utilisation figures), not figures
of different runs.

  --only SUITES   comma-separated, from: ${Object.keys(SUITES).join(', ')} (default: all)
  --seconds S     measuring time per figure, in seconds from 0.01 to 600 (default 1);
                  the train suite runs 5 S (at least 5 s), distributed 3 S (at least 3 s)
  --json          print one JSON object mapping metric names to numbers
  --help          print this text`;

const MIN_SECONDS = 0.01;

/** Exits 2 with a usage error naming the bad flag. */
function usageError(message: string): never {
  console.error(`bench: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseOptions(): { json: boolean; suites: string[]; seconds: number } {
  let values;
  try {
    // A flag given twice ran with the last value: `--only rules --only env` measured env alone.
    values = parseFlags({
      options: { json: { type: 'boolean' }, only: { type: 'string' }, seconds: { type: 'string', default: '1' }, help: { type: 'boolean' } },
    }).values;
  } catch (e) {
    usageError((e as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const seconds = Number(values.seconds);
  // Under MIN_SECONDS a figure could count no work at all: it printed 0, and its ratios null.
  if (!/^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(values.seconds!) || !Number.isFinite(seconds) || seconds < MIN_SECONDS || seconds > 600) {
    usageError(`--seconds: expected a number of seconds from ${MIN_SECONDS} to 600, got ${JSON.stringify(values.seconds!.slice(0, 64))}`);
  }
  const suites = values.only !== undefined ? values.only.split(',') : Object.keys(SUITES);
  for (const [k, name] of suites.entries()) {
    if (!Object.hasOwn(SUITES, name)) usageError(`--only: unknown suite ${JSON.stringify(name.slice(0, 64))}; known: ${Object.keys(SUITES).join(', ')}`);
    if (suites.indexOf(name) !== k) usageError(`--only: ${JSON.stringify(name)} is named twice`);
  }
  return { json: values.json ?? false, suites, seconds };
}

async function main(): Promise<void> {
  const values = parseOptions();
  const { seconds } = values;
  const metrics: Record<string, number> = {};
  for (const name of values.suites) {
    const result = await SUITES[name]!(seconds);
    Object.assign(metrics, result);
    if (!values.json) for (const [k, v] of Object.entries(result)) console.log(`${k.padEnd(44)} ${v.toLocaleString('en-US')}`);
  }
  // Ratios of figures measured in this same run: the machine's speed drifts between runs.
  const ratio = (name: string, over: string, under: string) => {
    if (metrics[over] === undefined || metrics[under] === undefined) return;
    metrics[name] = Math.round((metrics[over]! / metrics[under]!) * 1000) / 1000;
    if (!values.json) console.log(`${name.padEnd(44)} ${metrics[name]}`);
  };
  ratio('bridge.ratio.batchedOverVecN256', 'bridge.batched.n256.stepsPerSec', 'env.vec.n256.stepsPerSec');
  if (values.json) console.log(JSON.stringify(metrics));
}

await main();
