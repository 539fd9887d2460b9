// Runs the Python client's unittest suite (bridge/python/tests) against a real `kratzen serve`
// from dist/ (npm test builds it first). Skipped, saying why, when /usr/bin/python3 lacks
// websockets/numpy (CI installs python3-websockets and python3-numpy) or dist/ is not built.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const PYTHON = '/usr/bin/python3';
const root = fileURLToPath(new URL('..', import.meta.url));

function skipReason(): string | null {
  if (!existsSync(PYTHON)) return `${PYTHON} not found`;
  const probe = spawnSync(PYTHON, ['-c', 'import websockets, numpy'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${PYTHON} cannot import websockets/numpy (apt-get install python3-websockets python3-numpy)`;
  if (!existsSync(`${root}dist/cli/serve.js`)) return 'dist/cli/serve.js is missing (npm run build)';
  return null;
}

const reason = skipReason();
if (reason) console.warn(`skipping the Python bridge tests: ${reason}`);

// CI installs the packages (.ci/run), so there a missing one is a failure, not a skip.
it.runIf(reason !== null && process.env.CI === 'true')('CI has what the Python bridge tests need', () => {
  expect(reason).toBeNull();
});

it.skipIf(reason !== null)('the Python client passes its unittest suite against a live server', () => {
  const run = spawnSync(PYTHON, ['-B', '-m', 'unittest', 'discover', '-s', 'bridge/python/tests', '-v'], { cwd: root, encoding: 'utf8', timeout: 240_000 });
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
}, 300_000);
