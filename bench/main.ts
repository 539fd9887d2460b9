// `npm run bench [-- --json] [-- --only rules,env] [-- --seconds S]`: throughput figures of every layer.
// `--json` prints one JSON object mapping metric names to numbers.

import { parseArgs } from 'node:util';
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { json: { type: 'boolean' }, only: { type: 'string' }, seconds: { type: 'string', default: '1' } },
  });
  const chosen = values.only ? values.only.split(',') : Object.keys(SUITES);
  const seconds = Number(values.seconds);
  const metrics: Record<string, number> = {};
  for (const name of chosen) {
    const suite = SUITES[name];
    if (!suite) throw new Error(`unknown bench suite "${name}"; known: ${Object.keys(SUITES).join(', ')}`);
    const result = await suite(seconds);
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
