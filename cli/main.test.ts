// The `kratzen` command end to end: replay and random through the built bin, as a user runs them.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJsonLine } from '../test/helpers/cli-output.js';
import { HAS_TFJS_NODE } from '../test/helpers/tfjs-node.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'dist/cli/main.js');
const FIXTURES = join(ROOT, 'test/fixtures/records');
const tmp = mkdtempSync(join(tmpdir(), 'kratzen-cli-'));

function kratzen(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: run.status, json: run.stdout ? JSON.parse(run.stdout) : errorReport(run), stderr: run.stderr };
}

/** The error report a command wrote to stderr (results are on stdout): its last line. */
function errorReport(run: { status: number | null; stderr: string }): any {
  if (run.status === 0) return null;
  return lastJsonLine(run.stderr);
}

function writeTmp(name: string, value: unknown): string {
  const path = join(tmp, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

describe('kratzen replay', () => {
  it('prints the section-6 result of a record', () => {
    const { code, json } = kratzen('replay', join(FIXTURES, 'd4_normal_seed_example.record.json'));
    expect(code).toBe(0);
    expect(json).toEqual(JSON.parse(readFileSync(join(FIXTURES, 'd4_normal_seed_example.expected.json'), 'utf8')));
  });
  it('exits 1 with hand, action index, seat and reason on an illegal action', () => {
    const { code, json } = kratzen('replay', join(FIXTURES, 'd4_illegal_must_head.record.json'));
    expect(code).toBe(1);
    expect(json).toMatchObject({ error: 'illegal action', hand: 0, action: 7, seat: 3 });
    expect(json.reason).toMatch(/head/);
  });
  it('exits 2 naming the field of a malformed record or invalid rule set', () => {
    expect(kratzen('replay', join(FIXTURES, 'd4_invalid_rules_players.record.json'))).toMatchObject({
      code: 2,
      json: { error: 'invalid rule set', field: 'rules.players' },
    });
    // A fault of the whole text names the record, as too large or not UTF-8 do (the field was "") [docs audit, session 42].
    expect(kratzen('replay', writeTmp('bad.json', '{"rules": {}, '))).toMatchObject({ code: 2, json: { error: 'malformed record', field: 'record', reason: expect.stringMatching(/^not JSON/) } });
    expect(kratzen('replay', writeTmp('noseat.json', { rules: {}, seed: 1, hands: [{ actions: [{ action: 'in' }] }] }))).toMatchObject({
      code: 2,
      json: { error: 'malformed record', field: 'hands[0].actions[0].seat' },
    });
    expect(kratzen('replay', writeTmp('norules.json', { seed: 1 }))).toMatchObject({ code: 2, json: { field: 'rules' } });
    expect(kratzen('replay', join(tmp, 'missing.json')).code).toBe(2);
  });
  it('stops reading an input that never ends, and refuses a directory, naming the record', () => {
    // /dev/zero used to be read until memory ran out.
    expect(kratzen('replay', '/dev/zero')).toMatchObject({ code: 2, json: { error: 'malformed record', field: 'record', reason: expect.stringMatching(/larger than/) } });
    expect(kratzen('replay', tmp)).toMatchObject({ code: 2, json: { field: 'record', reason: expect.stringMatching(/directory/) } });
  });
  it('refuses JSON packed with more objects and arrays than a record holds, before parsing it (250 MB of [] took 6.6 GB)', () => {
    const record = JSON.parse(readFileSync(join(FIXTURES, 'd4_normal_seed_example.record.json'), 'utf8'));
    const dense = `${JSON.stringify(record).slice(0, -1)},"junk":[${'[],'.repeat(200_000)}[]]}`;
    const { code, json } = kratzen('replay', writeTmp('dense.json', dense));
    expect(code).toBe(2);
    expect(json).toMatchObject({ error: 'malformed record', field: 'record', reason: expect.stringMatching(/objects and arrays/) });
    // A real record, written compactly, is far from the bound: 500 tavern5 hands at 6 players.
    const played = spawnSync(process.execPath, [BIN, 'random', '--seed', '3', '--profile', 'tavern5', '--players', '6', '--hands', '500'], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
    expect(kratzen('replay', writeTmp('compact.json', JSON.stringify(JSON.parse(played)))).code).toBe(0);
  });
  it('quotes at most 64 characters of a bad action (a 50 MB one was echoed whole)', () => {
    const record = JSON.parse(readFileSync(join(FIXTURES, 'd4_normal_seed_example.record.json'), 'utf8'));
    record.hands[0].actions[0].action = 'x'.repeat(100_000);
    const { code, json } = kratzen('replay', writeTmp('long-action.json', record));
    expect(code).toBe(2);
    expect(json).toMatchObject({ field: 'hands[0].actions[0].action' });
    expect(json.reason.length).toBeLessThan(200);
    expect(json.reason).toMatch(/100000 characters/);
  });
  it('refuses a record or training config that gives a key twice, naming it (JSON.parse kept the last) [probe round 6 left]', () => {
    const record = readFileSync(join(FIXTURES, 'd4_forced_muss.record.json'), 'utf8');
    const doubled = record.replace('"pot": 4,', '"pot": 4, "pot": 40,');
    expect(doubled).not.toBe(record);
    expect(kratzen('replay', writeTmp('doubled-pot.json', doubled))).toMatchObject({
      code: 2,
      json: { error: 'malformed record', field: 'start.pot', reason: '"pot" is given twice in one object (JSON would keep only the last)' },
    });
    const config = writeTmp('doubled-config.json', '{"updates": 2, "rules": {"players": 4, "players": 5}}');
    expect(kratzen('train', '--config', config, '--runs-dir', join(tmp, 'never'))).toMatchObject({ code: 2, json: { error: 'invalid training config', field: 'rules.players' } });
    // A config file's empty runsDir is named as the file's field, not as a flag nobody gave [CLI probe, session 33].
    const emptyRunsDir = writeTmp('empty-runs-dir.json', '{"runsDir": ""}');
    expect(kratzen('train', '--config', emptyRunsDir)).toMatchObject({ code: 2, json: { error: 'invalid training config', field: 'runsDir', reason: "the config's runsDir is empty" } });
    expect(kratzen('train', '--config', emptyRunsDir, '--runs-dir', '')).toMatchObject({ code: 2, json: { error: 'invalid arguments', field: 'runs-dir', reason: '--runs-dir is empty' } });
  });

  it('reads a record saved with a UTF-8 byte-order mark (as Windows editors save it)', () => {
    const text = readFileSync(join(FIXTURES, 'd4_normal_seed_example.record.json'), 'utf8');
    const path = join(tmp, 'bom.json');
    writeFileSync(path, `\uFEFF${text}`);
    expect(kratzen('replay', path)).toEqual(kratzen('replay', join(FIXTURES, 'd4_normal_seed_example.record.json')));
  });

  it('refuses a record or a training config that is not UTF-8 (a 0xff byte replayed as U+FFFD)', () => {
    const record = JSON.parse(readFileSync(join(FIXTURES, 'd4_normal_seed_example.record.json'), 'utf8'));
    record.seed = 'SEED';
    const path = join(tmp, 'latin1.json');
    writeFileSync(path, Buffer.from(JSON.stringify(record).replace('SEED', '\xff'), 'latin1'));
    expect(kratzen('replay', path)).toMatchObject({ code: 2, json: { error: 'malformed record', field: 'record', reason: `${path} is not UTF-8 text` } });
    const config = join(tmp, 'latin1-config.json');
    writeFileSync(config, Buffer.from('{"name": "r\xe9sum\xe9"}', 'latin1'));
    const runs = join(tmp, 'latin1-runs');
    expect(kratzen('train', '--config', config, '--runs-dir', runs)).toMatchObject({ code: 2, json: { error: 'invalid training config', field: 'config' } });
    expect(existsSync(runs)).toBe(false);
  });
});

describe('kratzen random', () => {
  it('prints a record with explicit 33-card decks that replays to a complete session', () => {
    const first = kratzen('random', '--profile', 'tavern5', '--players', '5', '--seed', '11', '--variant', '{"exchange":{},"bettler":{}}');
    expect(first.code).toBe(0);
    expect(first.json.rules).toMatchObject({ profile: 'tavern5', players: 5, exchange: { maxCards: 2, feePerCard: 1 } });
    for (const hand of first.json.hands) expect(new Set(hand.deck).size).toBe(33);
    // Another engine would replay it from the decks alone: drop the seed.
    const { seed: _seed, ...withoutSeed } = first.json;
    const replay = kratzen('replay', writeTmp('random.json', withoutSeed));
    expect(replay.code).toBe(0);
    expect(replay.json.final.complete).toBe(true);
    expect(replay.json.hands.length).toBeGreaterThanOrEqual(5);
    expect(kratzen('random', '--profile', 'tavern5', '--players', '5', '--seed', '11', '--variant', '{"exchange":{},"bettler":{}}').json).toEqual(first.json);
  });
  it('honours --hands and the didactic4 default', () => {
    const { code, json } = kratzen('random', '--seed', '3', '--hands', '2');
    expect(code).toBe(0);
    expect(json.rules).toEqual({ profile: 'didactic4', players: 4, hands: 2 });
    expect(json.hands.length).toBe(2);
  });
  it('rejects bad flags with an error naming the field', () => {
    expect(kratzen('random', '--seed', '1', '--players', '9')).toMatchObject({ code: 2, json: { field: 'players' } });
    expect(kratzen('random', '--seed', '1', '--variant', '{"dealerChoice":"Oder"}')).toMatchObject({ code: 2, json: { field: 'dealerChoice' } });
    expect(kratzen('random', '--seed', '1', '--variant', 'nope')).toMatchObject({ code: 2, json: { field: 'variant' } });
    expect(kratzen('random')).toMatchObject({ code: 2, json: { field: 'seed' } });
  });
  it('reports an amount overflow at the first deal as JSON, exit 1 (it was a stack trace)', () => {
    const huge = ['--profile', 'tavern5', '--variant', '{"ante":1e15}'];
    expect(kratzen('random', '--seed', '1', ...huge)).toMatchObject({ code: 1, json: { error: 'amount overflow', hand: 0 } });
    expect(kratzen('eval', '--agents', 'random,heuristic', '--hands', '8', '--workers', '1', '--out', join(tmp, 'overflow'), ...huge)).toMatchObject({ code: 1, json: { error: 'amount overflow' } });
  });
  it('refuses a session too long to hold in memory before playing it (1e9 hands ran until out of memory)', () => {
    expect(kratzen('random', '--seed', '1', '--hands', '1000000000')).toMatchObject({ code: 2, json: { field: 'hands' } });
    expect(kratzen('demo', '--variant', '{"hands":200000}')).toMatchObject({ code: 2, json: { field: 'hands' } });
  });
});

describe('kratzen eval', () => {
  it('--json prints agents with meanChipsPerHand and ci95, the head-to-head table and ratings', () => {
    const out = join(tmp, 'eval');
    const { code, json, stderr } = kratzen('eval', '--agents', 'heuristic,random', '--hands', '96', '--seed', '5', '--workers', '1', '--json', '--out', out);
    expect(code).toBe(0);
    expect(json.agents.map((a: { name: string }) => a.name)).toEqual(['heuristic', 'random']);
    for (const a of json.agents) {
      expect(typeof a.meanChipsPerHand).toBe('number');
      expect(a.ci95).toBeGreaterThan(0);
      expect(typeof a.rating).toBe('number');
    }
    expect(json.headToHead[0]).toMatchObject({ a: 'heuristic', b: 'random' });
    expect(json.config.deals).toBe(6);
    expect(stderr).toMatch(/report: .*report\.html/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(/<svg/);
  });
  // Each Ctrl-C of `eval --agents runs/x` left the tournament's copy of the run's checkpoint (up
  // to 256 MiB) in the temp folder [probe, session 44].
  it.each([['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const)('stopped by %s, it removes its copies of checkpoints and exits %i', async (signal, exitCode) => {
    const temp = mkdtempSync(join(tmpdir(), 'kratzen-eval-stop-'));
    const store = join(temp, 'store');
    const step = join(store, 'step-000000000001');
    cpSync(join(ROOT, 'checkpoints/pretrained/didactic4-p4/checkpoint'), step, { recursive: true });
    const manifestSha256 = createHash('sha256').update(readFileSync(join(step, 'manifest.json'))).digest('hex');
    writeFileSync(join(store, 'latest.json'), JSON.stringify({ checkpoint: 'step-000000000001', step: 1, manifestSha256 }));
    const copies = join(temp, 'tmp');
    mkdirSync(copies);
    const child = spawn(process.execPath, [BIN, 'eval', '--agents', `${store},random`, '--hands', '400000', '--workers', '2', '--out', join(temp, 'out')], { env: { ...process.env, TMPDIR: copies }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Stopped once its deals are under way (the bar has counted some), when the copy exists.
    while (!/eval \[[^\]]*\] +[1-9]/.test(stderr) && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    expect(readdirSync(copies).filter((name) => name.startsWith('kratzen-tournament-'))).toHaveLength(1);
    child.kill(signal);
    expect(await exited, stderr.slice(-400)).toBe(exitCode);
    expect(stderr).toMatch(/stopping after the deals in play/);
    expect(readdirSync(copies)).toEqual([]);
    rmSync(temp, { recursive: true, force: true });
  }, 60_000);
  it('says how many hands it played when --hands rounds up to whole duplicate deals', () => {
    const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', 'heuristic,random', '--hands', '7', '--workers', '1', '--out', join(tmp, 'eval7')], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^2 deals x 4 seatings: 32 hands \(--hands 7: whole deals, at least 2, plus any tie-break hands\)$/m);
    // The paired comparison of each two agents, as result.json's headToHead has it.
    expect(run.stdout).toMatch(/^heuristic - random: [+-]\d+\.\d{3} ±\d+\.\d{3} chips\/hand, heuristic better in \d of 2 deals(, tied in \d)?$/m);
  });
  it('plays the same whatever files lie in the working directory, and reports a checkpoint error alike with one worker or two [probe round 9]', () => {
    // A file named `random` beside the run cached the seeded random agent across seats and deals.
    const clean = mkdtempSync(join(tmpdir(), 'kratzen-eval-clean-'));
    const cluttered = mkdtempSync(join(tmpdir(), 'kratzen-eval-cluttered-'));
    writeFileSync(join(cluttered, 'random'), '');
    const evalIn = (cwd: string, workers: string) =>
      spawnSync(process.execPath, [BIN, 'eval', '--agents', 'random,heuristic', '--hands', '24', '--seed', '4', '--workers', workers, '--json', '--out', join(cwd, 'out')], { encoding: 'utf8', cwd }).stdout;
    const reference = JSON.parse(evalIn(clean, '1'));
    for (const [cwd, workers] of [[cluttered, '1'], [cluttered, '2']] as const) expect(JSON.parse(evalIn(cwd, workers)).agents, `${workers} workers`).toEqual(reference.agents);
    const tavern = join(ROOT, 'checkpoints/pretrained/tavern5-p4/checkpoint');
    for (const workers of ['1', '2']) {
      const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', `${tavern},random`, '--hands', '8', '--workers', workers, '--out', join(clean, `w${workers}`)], { encoding: 'utf8' });
      expect(run.status, workers).toBe(2);
      expect(errorReport(run), workers).toMatchObject({ error: 'checkpoint error', field: 'checkpoint', code: 'incompatible-rules' });
    }
  });

  it('shows control characters of an agent\'s name as escapes: a checkpoint folder named with a newline and a terminal escape broke the table\'s lines and cleared the screen', () => {
    const evil = join(mkdtempSync(join(tmpdir(), 'kratzen-eval-names-')), 'evil\n\u001b[2Jname');
    cpSync(join(ROOT, 'checkpoints/pretrained/didactic4-p4/checkpoint'), evil, { recursive: true });
    const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', `${evil},random`, '--hands', '8', '--workers', '1', '--out', join(tmp, 'evalNames')], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5); // deals, two agents, their head-to-head, report
    expect(lines[1]).toContain('evil\\u000a\\u001b[2Jname ');
    expect(run.stdout).not.toContain('\u001b');
  });

  it('refuses an empty --seed in every verb that takes one (an unset variable ran with the seed "")', () => {
    const empty = { code: 2, json: { error: 'invalid arguments', field: 'seed', reason: expect.stringContaining('--seed is empty') } };
    for (const args of [['random', '--seed='], ['demo', '--seed='], ['eval', '--agents', 'random,heuristic', '--seed='], ['exploit', '--target', 'random', '--seed='], ['train', '--seed=', '--updates', '1']]) {
      expect(kratzen(...args), args.join(' ')).toMatchObject(empty);
    }
    expect(kratzen('random', '--seed', 'x')).toMatchObject({ code: 0, json: { seed: 'x' } });
  });

  it('names a bad agent as invalid arguments, as play and exploit do (eval called it "evaluation failed")', () => {
    const unknown = { code: 2, json: { error: 'invalid arguments', field: 'agents', reason: expect.stringMatching(/^unknown agent "nobody"/) } };
    expect(kratzen('eval', '--agents', 'heuristic,nobody', '--hands', '32', '--workers', '1')).toMatchObject(unknown);
    expect(kratzen('eval', '--agents', 'heuristic,nobody', '--hands', '32', '--workers', '2')).toMatchObject(unknown);
    const badOption = { error: 'invalid arguments', reason: 'agent "pimc:samples=0": samples must be a positive integer' };
    expect(kratzen('eval', '--agents', 'pimc:samples=0,random', '--hands', '32')).toMatchObject({ code: 2, json: { ...badOption, field: 'agents' } });
    expect(kratzen('exploit', '--target', 'pimc:samples=0')).toMatchObject({ code: 2, json: { ...badOption, field: 'target' } });
  });
  it('says before the run that a pimc agent with timeBudgetMs makes results depend on the machine, not the seed alone [eval probe, session 37]', () => {
    const out = join(tmp, 'eval-time');
    const timed = kratzen('eval', '--agents', 'pimc:timeBudgetMs=1,random', '--hands', '16', '--workers', '1', '--json', '--out', out);
    expect(timed.code).toBe(0);
    expect(timed.stderr).toContain("eval: pimc:timeBudgetMs=1 searches for a time: its results depend on this machine's speed and load, not only on --seed");
    const counted = kratzen('eval', '--agents', 'pimc:samples=2,random', '--hands', '16', '--workers', '1', '--json', '--out', out);
    expect(counted.stderr).not.toContain('searches for a time');
  });
  it('refuses more workers or deals than it can hold, before starting any (1000 threads were started before)', () => {
    for (const workers of ['0', '1000']) expect(kratzen('eval', '--agents', 'heuristic,random', '--workers', workers)).toMatchObject({ code: 2, json: { field: 'workers' } });
    expect(kratzen('eval', '--agents', 'heuristic,random', '--hands', '100000000000')).toMatchObject({ code: 2, json: { field: 'hands' } });
    expect(kratzen('eval', '--agents', 'heuristic,random', '--hands=-5')).toMatchObject({ code: 2, json: { field: 'hands' } });
    expect(kratzen('exploit', '--target', 'random', '--hands', '1000000000000')).toMatchObject({ code: 2, json: { field: 'hands' } });
  });
  it('refuses more agents than seats, empty entries, and an --out it cannot write, before playing (it ranked unplayed agents; /proc spun forever)', () => {
    expect(kratzen('eval', '--agents', 'random,random,random,random,random', '--hands', '32')).toMatchObject({ code: 2, json: { field: 'agents' } });
    expect(kratzen('eval', '--agents', 'random,,heuristic', '--hands', '32')).toMatchObject({ code: 2, json: { field: 'agents' } });
    const file = writeTmp('not-a-folder', 'x');
    for (const out of ['/proc/kratzen-out', join(file, 'sub'), join(tmp, 'x'.repeat(300))]) {
      const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', 'random,random', '--hands', '32', '--workers', '1', '--out', out], { encoding: 'utf8', timeout: 20_000 });
      expect(run.status, out).toBe(2);
      expect(errorReport(run)).toMatchObject({ field: 'out' });
    }
  });
  it('prints its results even when the report cannot be written, then exits 3 naming --out (a finished evaluation printed nothing) [probe]', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kratzen-eval-lost-')), 'out');
    const child = spawn(process.execPath, [BIN, 'eval', '--agents', 'random,heuristic', '--hands', '8000', '--workers', '1', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    // Once play has begun (the bar's first line), the output folder becomes a file.
    child.stderr!.on('data', (d) => {
      if (stderr === '') {
        rmSync(out, { recursive: true, force: true });
        writeFileSync(out, 'not a folder');
      }
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(3);
    expect(stdout).toMatch(/^random - heuristic: [+-]\d+\.\d{3} ±\d+\.\d{3} chips\/hand, random better in \d+ of \d+ deals/m);
    expect(stdout).not.toContain('report:');
    expect(stderr).toContain('"error":"cannot write output","field":"out"');
  }, 120_000);
});

describe('scale-out flags', () => {
  it('refuse values no worker or evaluation can use, naming the flag, before connecting [probe round 3]', () => {
    // A lock of 58 days overflowed Node's timers: the worker renewed it every millisecond.
    for (const seconds of ['0', '86401', '99999999999999']) {
      expect(kratzen('worker', '--redis', 'redis://127.0.0.1:1', '--lock-seconds', seconds), seconds).toMatchObject({ code: 2, json: { field: 'lock-seconds' } });
    }
    // A block of 0 or -1 deals was taken as 1; without --redis the flag was ignored.
    for (const deals of ['0', '-1']) {
      expect(kratzen('eval', '--agents', 'random,heuristic', '--hands', '8', '--redis', 'redis://127.0.0.1:1', `--block-deals=${deals}`), deals).toMatchObject({
        code: 2,
        json: { field: 'block-deals', reason: expect.stringMatching(/at least 1/) },
      });
    }
    expect(kratzen('eval', '--agents', 'random,heuristic', '--hands', '8', '--block-deals', '4')).toMatchObject({ code: 2, json: { field: 'block-deals', reason: expect.stringMatching(/needs --redis/) } });
    // An empty --redis (an unset variable) ran locally without a word; --workers went unused, unchecked [probe round 12].
    expect(kratzen('eval', '--agents', 'random,heuristic', '--hands', '8', '--redis', '')).toMatchObject({ code: 2, json: { field: 'redis' } });
    // A malformed escape in the password: a URIError's stack trace (worker, train) or "field agents" (eval) [probe].
    const malformed = { code: 2, json: { error: 'invalid arguments', field: 'redis', reason: expect.stringMatching(/password holds a malformed percent-escape/) } };
    for (const verb of [['eval', '--agents', 'random,heuristic', '--hands', '8'], ['worker'], ['train', '--updates', '1', '--actors', '2', '--runs-dir', join(tmp, 'runs')]]) {
      const run = kratzen(...verb, '--redis', 'redis://:s3cret%ZZ@127.0.0.1:1');
      expect(run, verb[0]).toMatchObject(malformed);
      expect(JSON.stringify(run), verb[0]).not.toContain('s3cret');
    }
    for (const workers of ['0', '999', '2']) {
      expect(kratzen('eval', '--agents', 'random,heuristic', '--hands', '8', '--redis', 'redis://127.0.0.1:1', '--workers', workers), workers).toMatchObject({
        code: 2,
        json: { field: 'workers', reason: expect.stringMatching(/kratzen worker/) },
      });
    }
  });
});

describe('eval report that cannot be written', () => {
  it('is refused before the evaluation, naming the folder in the way (exit 3 once all deals were played, before) [CLI probe, session 32]', () => {
    const out = mkdtempSync(join(tmpdir(), 'kratzen-eval-out-'));
    mkdirSync(join(out, 'report.html')); // the report's name is taken by a folder: its rename would fail
    const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', 'random,random', '--hands', '800000', '--workers', '1', '--out', out], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(errorReport(run)).toMatchObject({ error: 'invalid arguments', field: 'out', reason: `cannot write the report: ${join(out, 'report.html')} is a folder, where the report's report.html goes` });
    expect(run.stderr).not.toMatch(/eval \[/); // no deal was played
    expect(readdirSync(out)).toEqual(['report.html']);
  }, 60_000);

  it('one that fails after the evaluation says so in one line, exit 3, and leaves no half of the report (a stack trace and a lone result.json before) [probe round 2]', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kratzen-eval-out-'));
    const run = spawn(process.execPath, [BIN, 'eval', '--agents', 'random,random', '--hands', '20000', '--workers', '1', '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let taken = false;
    run.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // Once deals are played, past the check up front, a folder takes the report's name: its rename fails.
      if (!taken && /eval \[/.test(stderr)) {
        taken = true;
        mkdirSync(join(out, 'report.html'));
      }
    });
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    expect(taken).toBe(true);
    expect(code).toBe(3);
    const lines = stderr.trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ error: 'cannot write output', field: 'out', reason: expect.stringMatching(/EISDIR/) });
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(readdirSync(out)).toEqual(['report.html']);
  }, 60_000);
});

describe('output to a reader that stops early', () => {
  it('ends quietly, exit 0 (an EPIPE stack trace before)', () => {
    const run = spawnSync('/bin/sh', ['-c', `"${process.execPath}" "${BIN}" random --seed 1 --hands 2000 | head -c 10 >/dev/null; echo "status $?"`], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('status 0\n');
  });

  it.runIf(existsSync('/dev/full'))('says so in one line on stderr when the output cannot be written, exit 3 (a stack trace before)', () => {
    const run = spawnSync('/bin/sh', ['-c', `"${process.execPath}" "${BIN}" random --seed 1 > /dev/full; echo "status $?"`], { encoding: 'utf8' });
    expect(run.stdout).toBe('status 3\n');
    expect(JSON.parse(run.stderr)).toMatchObject({ error: 'cannot write output', field: 'stdout', reason: expect.stringMatching(/ENOSPC/) });
  });
});

describe('output cut short by a full disk', () => {
  // `ulimit -f` makes the write past 8 KiB short, then fail with EFBIG, as a disk that fills up
  // does with ENOSPC (Node ignores SIGXFSZ). Node's own file stdout dropped the rest silently.
  const limited = (command: string) =>
    spawnSync('/bin/sh', ['-c', `ulimit -f 8; ${command}; echo "status $?"`], { encoding: 'utf8' });

  it('a printed record or replay result that does not fit exits 3 with one line on stderr, not 0 with a cut file [probe round 3]', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-cut-'));
    const record = join(dir, 'record.json');
    writeFileSync(record, spawnSync(process.execPath, [BIN, 'random', '--seed', '2', '--hands', '200'], { encoding: 'utf8' }).stdout);
    for (const args of [`random --seed 1 --hands 50`, `replay "${record}"`, `demo --seed 1 --hands 500`]) {
      const run = limited(`"${process.execPath}" "${BIN}" ${args} > "${join(dir, 'out')}"`);
      expect(run.stdout, args).toBe('status 3\n');
      expect(JSON.parse(run.stderr), args).toEqual({ error: 'cannot write output', field: 'stdout', reason: 'the file would pass the size limit (EFBIG)' });
    }
  });

  it.runIf(existsSync('/dev/full'))('a bad-input report that cannot reach stdout goes to stderr, with its own exit code (it was lost) [probe round 3]', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-cut-'));
    writeFileSync(join(dir, 'bad.json'), '{}');
    for (const args of ['random', `replay "${join(dir, 'bad.json')}"`]) {
      const run = spawnSync('/bin/sh', ['-c', `"${process.execPath}" "${BIN}" ${args} > /dev/full; echo "status $?"`], { encoding: 'utf8' });
      expect(run.stdout, args).toBe('status 2\n');
      expect(JSON.parse(run.stderr), args).toMatchObject({ error: expect.any(String), field: expect.any(String) });
    }
  });
});

describe('play with its output lost', () => {
  it.runIf(existsSync('/dev/full'))('plays on and saves its record, then exits 3 with one JSON line on stderr (it exited at once, the record lost) [probe round 3]', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-play-full-'));
    const record = join(dir, 'p.json');
    const run = spawnSync('/bin/sh', ['-c', `printf '1\\n1\\nquit\\n' | "${process.execPath}" "${BIN}" play --seed 1 --opponents random --record "${record}" > /dev/full; echo "status $?"`], { encoding: 'utf8' });
    expect(run.stdout).toBe('status 3\n');
    expect(JSON.parse(run.stderr.trim().split('\n')[0]!)).toMatchObject({ error: 'cannot write output', field: 'stdout', reason: expect.stringMatching(/ENOSPC/) });
    const replay = spawnSync(process.execPath, [BIN, 'replay', record], { encoding: 'utf8' });
    expect(replay.status).toBe(0);
    expect(JSON.parse(readFileSync(record, 'utf8')).hands[0].actions.length).toBeGreaterThan(0);
  });
});

describe('the package', () => {
  it("can be imported as 'kratzen-gym'", () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', "import { createGame, NUM_ACTIONS } from 'kratzen-gym'; console.log(NUM_ACTIONS, createGame({}).numPlayers)"], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.stdout.trim()).toBe('74 4');
  });
});

// On stdout an error went into the file a command's output was redirected to: `random ... >
// session.json` wrote it there, and replaying that file blamed a record without rules [CLI probe, session 38].
describe('error reports', () => {
  it.each([
    ['random', '--seed', '7', '--players', '7'],
    ['demo', '--hands', '0'],
    ['replay', join(FIXTURES, 'missing.json')],
    ['eval', '--agents', 'random'],
    ['serve', '--port', 'x'],
    ['play', '--seat', '9'],
    ['train', '--updates', '0'],
  ])('%s: one JSON line on stderr, nothing on stdout', (...args) => {
    const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ error: expect.any(String), field: expect.any(String), reason: expect.any(String) });
  });
  it('replay\'s report of an illegal action too', () => {
    const record = writeTmp('illegal-one-line.json', { rules: {}, seed: 1, hands: [{ actions: [{ seat: 0, action: 'play Ac' }] }] });
    const run = spawnSync(process.execPath, [BIN, 'replay', record], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ error: 'illegal action', hand: 0, action: 0 });
  });
});

describe('kratzen <verb> --help', () => {
  const usage = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout;
  const verbs = [...usage.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!);
  it('the usage lists the verbs', () => {
    expect(verbs).toEqual(expect.arrayContaining(['replay', 'random', 'demo', 'train', 'play', 'serve', 'eval']));
  });
  it.each(verbs)('%s --help prints its options and exits 0 without doing the work', (verb) => {
    const run = spawnSync(process.execPath, [BIN, verb, '--help'], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^kratzen ${verb}\\b`));
    expect(run.stdout.split('\n').length).toBeGreaterThan(3);
    // Paragraphs are wrapped by hand: two ran on to 146 and 150 columns.
    for (const line of run.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
  });
  it('no verb prints the usage on stderr and exits 2 (it exited 0: `kratzen $VERB` with an empty variable looked like success)', () => {
    const run = spawnSync(process.execPath, [BIN], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(usage);
  });
  // `kratzen help eval` printed the overview, and `kratzen help bogus` exited 0 [CLI probe, session 38].
  it('help <verb> prints that verb\'s help; help of no verb is refused', () => {
    expect(verbs.length).toBe(9);
    for (const verb of verbs) {
      const run = spawnSync(process.execPath, [BIN, 'help', verb], { encoding: 'utf8', timeout: 20_000 });
      expect(run.status, verb).toBe(0);
      expect(run.stdout, verb).toBe(spawnSync(process.execPath, [BIN, verb, '--help'], { encoding: 'utf8', timeout: 20_000 }).stdout);
    }
    expect(kratzen('help', 'bogus')).toMatchObject({ code: 2, json: { field: 'verb', reason: expect.stringMatching(/unknown verb "bogus"/) } });
    for (const asked of [[], ['--help'], ['-h']]) expect(spawnSync(process.execPath, [BIN, 'help', ...asked], { encoding: 'utf8' }).stdout).toBe(usage);
  });
  // `play --record --help` and `serve --port --help` were refused as a missing value, where
  // the other verbs printed their help [CLI probe, session 41].
  it.each([
    ['random', '--seed'],
    ['demo', '--seed'],
    ['train', '--seed'],
    ['eval', '--seed'],
    ['exploit', '--seed'],
    ['worker', '--redis'],
    ['play', '--record'],
    ['serve', '--port'],
  ])('%s %s --help prints the help: --help right after a flag that takes a value is still help', (verb, flag) => {
    const run = spawnSync(process.execPath, [BIN, verb, flag, '--help'], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^kratzen ${verb}\\b`));
  });
  // `random --help=x` said "Unknown option '--help'", as if the verb had no help [CLI probe, session 43].
  it.each(verbs)('%s --help=x is refused as help given a value, in the same words for every verb', (verb) => {
    const run = spawnSync(process.execPath, [BIN, verb, '--help=x'], { encoding: 'utf8', timeout: 20_000, input: '' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr)).toEqual({ error: 'invalid arguments', field: 'help', reason: "Option '--help' takes no value: give --help (or -h) alone" });
  });
  it('an unknown verb is a JSON error naming the verb, as other bad arguments are (it was plain text)', () => {
    expect(kratzen('bogusverb')).toMatchObject({ code: 2, json: { error: 'invalid arguments', field: 'verb', reason: expect.stringMatching(/bogusverb/) } });
  });
  it('an unknown flag is an error that names it', () => {
    const { code, json } = kratzen('eval', '--agents', 'random,heuristic', '--bogus', '1');
    expect(code).toBe(2);
    expect(json.reason).toMatch(/--bogus/);
  });
});

describe('kratzen exploit', () => {
  it('--json prints target, edge, ci95, deals and updates; --out keeps the whole result with its settings', () => {
    const out = join(tmp, 'exploit-out');
    const run = spawnSync(process.execPath, [BIN, 'exploit', '--target', 'random', '--updates', '1', '--imitation-updates', '0', '--hands', '64', '--seed', '3', '--json', '--out', out], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(Object.keys(json).sort()).toEqual(['ci95', 'deals', 'edge', 'target', 'updates']);
    expect(json).toMatchObject({ target: 'random', deals: 4, updates: 1 });
    expect(Number.isFinite(json.edge) && json.ci95 > 0).toBe(true);
    // The printed figures only reached the terminal: a run of minutes kept nothing.
    const saved = JSON.parse(readFileSync(join(out, 'result.json'), 'utf8'));
    expect(saved).toMatchObject({ ...json, hands: 64, imitationUpdates: 0, config: { target: 'random', seed: 3, updates: 1, imitationUpdates: 0, hands: 64, rules: { profile: 'didactic4', players: 4 } } });
    // The backend it ran on, not "auto".
    expect(['tensorflow', 'wasm', 'cpu']).toContain(saved.config.backend);
    expect(run.stderr).toContain(`result: ${join(out, 'result.json')}`);
    // A folder in the result's place is refused before any training.
    mkdirSync(join(tmp, 'exploit-blocked', 'result.json'), { recursive: true });
    expect(kratzen('exploit', '--target', 'random', '--updates', '1', '--out', join(tmp, 'exploit-blocked'))).toMatchObject({ code: 2, json: { field: 'out', reason: expect.stringMatching(/is a folder/) } });
  }, 120_000);
  it("shows control characters of the target's name as escapes, as eval does (a terminal escape in a checkpoint folder's name reached the terminal) [probe]", () => {
    const evil = join(mkdtempSync(join(tmpdir(), 'kratzen-exploit-names-')), 'evil\u001b]0;pwn\u0007name');
    cpSync(join(ROOT, 'checkpoints/pretrained/didactic4-p4/checkpoint'), evil, { recursive: true });
    const run = spawnSync(process.execPath, [BIN, 'exploit', '--target', evil, '--updates', '1', '--hands', '8', '--seed', '1'], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('best response vs ');
    expect(run.stdout).toContain('evil\\u001b]0;pwn\\u0007name');
    expect(run.stdout).not.toContain('\u001b');
  }, 120_000);
  it('prints its figures even when result.json cannot be written, then exits 3 naming --out (a finished run printed nothing) [probe]', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kratzen-exploit-lost-')), 'out');
    const child = spawn(process.execPath, [BIN, 'exploit', '--target', 'random', '--updates', '1', '--imitation-updates', '0', '--hands', '256', '--seed', '3', '--json', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    // Once training is done, the output folder becomes a file: the result can no longer be written.
    child.stderr!.on('data', (d) => {
      if (!stderr.includes('best response') && `${stderr}${d}`.includes('best response')) {
        rmSync(out, { recursive: true, force: true });
        writeFileSync(out, 'not a folder');
      }
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(3);
    expect(JSON.parse(stdout)).toMatchObject({ target: 'random', deals: 16, updates: 1 });
    expect(stderr).toContain('"error":"cannot write output","field":"out"');
  }, 120_000);
  it('warns that a target searching for a time does not repeat from its seed, as eval does [probe]', () => {
    const run = spawnSync(process.execPath, [BIN, 'exploit', '--target', 'pimc:timeBudgetMs=1', '--updates', '1', '--imitation-updates', '0', '--hands', '8', '--seed', '1', '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain("exploit: pimc:timeBudgetMs=1 searches for a time: its results depend on this machine's speed and load, not only on --seed");
    const counted = spawnSync(process.execPath, [BIN, 'exploit', '--target', 'pimc:samples=2', '--updates', '1', '--imitation-updates', '0', '--hands', '8', '--seed', '1', '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(counted.status, counted.stderr).toBe(0);
    expect(counted.stderr).not.toContain('searches for a time');
  }, 120_000);
  it('names a bad target or flag', () => {
    expect(kratzen('exploit', '--target', 'nobody', '--updates', '1')).toMatchObject({ code: 2, json: { field: 'target' } });
    expect(kratzen('exploit', '--target', 'random', '--updates', 'many')).toMatchObject({ code: 2, json: { field: 'updates' } });
    expect(kratzen('exploit')).toMatchObject({ code: 2, json: { field: 'target' } });
  }, 60_000);
});

describe('flags given twice', () => {
  it('are refused naming the flag, by every verb: the last one won, so a bad first value went unreported [probe round 6]', () => {
    const cases = [
      ['random', '--seed', '1', '--players', '9', '--players', '4'],
      ['eval', '--agents', 'random,heuristic', '--hands', '2', '--players', '9', '--players', '4'],
      ['demo', '--hands', '1', '--hands', '2'],
      ['train', '--updates', '1', '--updates', '2'],
      ['exploit', '--target', 'random', '--target', 'heuristic'],
      ['worker', '--redis', 'redis://127.0.0.1:1', '--redis', 'redis://127.0.0.1:2'],
      ['serve', '--port', '0', '--port', '1'],
      ['play', '--seat', '1', '--seat', '2'],
    ];
    for (const args of cases) {
      const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 30_000 });
      const repeated = [...args].reverse().find((a) => a.startsWith('--'))!.slice(2);
      const report = JSON.parse((run.stdout.trim() || run.stderr.trim()).split('\n').filter((l) => l.startsWith('{') || l.startsWith(' ') || l.startsWith('}')).join('\n'));
      expect(run.status, args.join(' ')).toBe(2);
      expect(report, args.join(' ')).toMatchObject({ error: 'invalid arguments', field: repeated, reason: expect.stringMatching(/given more than once/) });
    }
    // Flags that take several values still do.
    const serve = spawnSync(process.execPath, [BIN, 'serve', '--allow-origin', 'http://a.example', '--allow-origin', 'http://b.example', '--port', '-1'], { encoding: 'utf8', timeout: 30_000 });
    expect(serve.stdout + serve.stderr).not.toMatch(/more than once/);
  });
});


describe('a TF.js backend that cannot load', () => {
  it.skipIf(HAS_TFJS_NODE)('is refused naming --backend by train and exploit (it was an uncaught stack trace, exit 1) [probe round 6]', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-backend-'));
    for (const args of [['train', '--updates', '1', '--runs-dir', dir], ['exploit', '--target', 'random', '--updates', '1', '--hands', '8']]) {
      const run = spawnSync(process.execPath, [BIN, ...args, '--backend', 'tensorflow'], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, args[0]).toBe(2);
      expect(errorReport(run), args[0]).toMatchObject({ field: 'backend', reason: expect.stringMatching(/TF\.js backend 'tensorflow' is not available/) });
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
