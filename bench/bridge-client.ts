// `node dist/bench/bridge-client.js <url> [numEnvs] [seconds] [rounds]`: batched env steps per
// second of the TypeScript client against a running server, one JSON line
// {"stepsPerSec": [per round]}; the Python bench (bridge/python/kratzen_bridge/bench.py) runs it
// against the same server to compare clients. A server's token comes from KRATZEN_BRIDGE_TOKEN.

import { clientBatchedRate } from './bridge.js';

const [url, numEnvs = '256', seconds = '2', rounds = '5'] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: node dist/bench/bridge-client.js <ws-url> [numEnvs] [seconds] [rounds]\n');
  process.exit(2);
}
console.log(JSON.stringify({ stepsPerSec: await clientBatchedRate(url, Number(numEnvs), Number(seconds), Number(rounds), process.env.KRATZEN_BRIDGE_TOKEN || undefined) }));
process.exit(0);
