// `npm run bench`'s command line: usage on --help, a usage error (exit 2) naming the bad flag,
// nothing measured then; runs the built script as `npm run bench` does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { haveRedisServer } from '../training/distributed/local-cluster.js';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/bench/main.js', import.meta.url));
const bench = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('bench command line', () => {
  it('--help prints the usage, every suite named, and exits 0', () => {
    const run = bench('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/--only SUITES/);
    for (const suite of ['rules', 'env', 'agents', 'bridge', 'train', 'distributed']) expect(run.stdout).toContain(suite);
  });

  it.each([
    [['--seconds', 'abc'], /--seconds: .*"abc"/],
    [['--seconds', '0'], /--seconds: /],
    [['--seconds', '1e9'], /--seconds: /],
    [['--seconds', '-1'], /--seconds/],
    // Measured nothing: every figure 0 and the ratios null.
    [['--seconds', '1e-9'], /--seconds: expected a number of seconds from 0\.01/],
    // The last of a repeated flag won: rules went unmeasured without a word.
    [['--only', 'rules', '--only', 'env'], /'--only' is given more than once/],
    [['--seconds', '1', '--seconds', '0.1'], /'--seconds' is given more than once/],
    [['--only', 'rules,rules'], /--only: "rules" is named twice/],
    [['--only', 'rules,nope'], /--only: unknown suite "nope"/],
    [['--bogus'], /Unknown option '--bogus'/],
  ])('%j is a usage error (exit 2) naming the flag, with no stack trace', (args, message) => {
    const run = bench(...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });

  it.skipIf(!haveRedisServer())('stops its worker processes as Ctrl-C would, so they leave no blob cache folders behind (killed outright, each left one)', () => {
    const temp = mkdtempSync(join(tmpdir(), 'kratzen-bench-dist-'));
    const run = spawnSync(process.execPath, [MAIN, '--only', 'distributed', '--seconds', '0.01', '--json'], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, TMPDIR: temp } });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)['dist.tournament.w2.handsPerSec']).toBeGreaterThan(0);
    expect(readdirSync(temp)).toEqual([]);
  }, 120_000);

  it('measures the chosen suite and prints one JSON object', () => {
    const run = bench('--only', 'rules', '--seconds', '0.02', '--json');
    expect(run.status).toBe(0);
    const metrics = JSON.parse(run.stdout) as Record<string, number>;
    expect(metrics['rules.didactic4.p4.actionsPerSec']).toBeGreaterThan(0);
    expect(Object.keys(metrics).every((k) => k.startsWith('rules.'))).toBe(true);
  });
});
