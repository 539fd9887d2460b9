// `kratzen train` flags: each lands on its config field; a bad value names the flag.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interruptedMessage, trainConfigFromArgs } from './train.js';
import { parseTrainConfig } from '../training/config.js';
import { lastJsonLine } from '../test/helpers/cli-output.js';

describe('kratzen train flags', () => {
  it('map onto the training config, and the config checks them', () => {
    const { config, resume } = trainConfigFromArgs(['--critic', 'oracle', '--initial-policy', 'runs/a/checkpoints', '--lr', '0.0005', '--hidden', '64,32', '--profile', 'tavern5', '--resume', '--name', 'a']);
    expect(config).toMatchObject({ critic: 'oracle', initialPolicy: 'runs/a/checkpoints', learningRate: 0.0005, hiddenSizes: [64, 32], rules: { profile: 'tavern5' } });
    expect(resume).toBe(true);
    expect(parseTrainConfig(config).critic).toBe('oracle');
    expect(() => parseTrainConfig(trainConfigFromArgs(['--critic', 'psychic']).config)).toThrow(/critic/);
    expect(parseTrainConfig(trainConfigFromArgs(['--critic', 'oracle', '--actors', '2']).config)).toMatchObject({ critic: 'oracle', actors: 2 });
    expect(parseTrainConfig(trainConfigFromArgs(['--learner-threads', '1']).config).learnerThreads).toBe(1);
    expect(parseTrainConfig(trainConfigFromArgs(['--learner-threads', '4']).config).learnerThreads).toBe(4);
    expect(() => parseTrainConfig(trainConfigFromArgs(['--learner-threads', '17']).config)).toThrow(/learnerThreads/);
    expect(() => trainConfigFromArgs(['--learner-threads', 'two'])).toThrow(/learner-threads/);
    expect(() => trainConfigFromArgs(['--lr', 'fast'])).toThrow(/lr/);
    expect(parseTrainConfig(trainConfigFromArgs(['--suit-symmetry', 'on']).config).suitSymmetry).toBe(true);
    expect(parseTrainConfig(trainConfigFromArgs(['--suit-symmetry', 'off']).config).suitSymmetry).toBe(false);
    expect(parseTrainConfig(trainConfigFromArgs(['--suit-symmetry', 'holding']).config).suitSymmetry).toBe('holding');
    expect(() => trainConfigFromArgs(['--suit-symmetry', 'yes'])).toThrow(expect.objectContaining({ field: 'suit-symmetry' }));
    expect(() => parseTrainConfig({ suitSymmetry: 'sorted' })).toThrow(/suitSymmetry/);
    // Errors about the runs folder name the flag only when it chose the folder [CLI probe, session 33].
    expect(trainConfigFromArgs(['--runs-dir', 'x']).runsDirField).toBe('runs-dir');
    expect(trainConfigFromArgs([]).runsDirField).toBe('runsDir');
    // Without a name, --resume looked for a run named by this second's clock and said it did not
    // exist [CLI probe, session 38].
    expect(() => trainConfigFromArgs(['--resume'])).toThrow(expect.objectContaining({ field: 'name', reason: expect.stringMatching(/--resume needs the name of the run/) }));
    // An empty --config (an unset variable) trained with the defaults [probe round 6].
    expect(() => trainConfigFromArgs(['--config', ''])).toThrow(expect.objectContaining({ field: 'config', reason: expect.stringMatching(/--config is empty/) }));
    // A config that never ends is refused after 16 MiB instead of being read until memory runs out.
    expect(() => trainConfigFromArgs(['--config', '/dev/zero'])).toThrow(expect.objectContaining({ field: 'config', reason: expect.stringMatching(/larger than/) }));
  });

  it('refuse a config file that is not an object, and a rules field that is not one (probe findings)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-flags-'));
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    for (const text of ['null', '"str"', '42']) {
      expect(() => trainConfigFromArgs(['--config', file('c.json', text)])).toThrow(expect.objectContaining({ field: 'config', reason: expect.stringMatching(/JSON object/) }));
    }
    for (const text of ['{"rules": true}', '{"rules": 5}', '{"rules": "abc"}', '{"rules": [1]}']) {
      expect(() => trainConfigFromArgs(['--config', file('r.json', text), '--players', '4'])).toThrow(expect.objectContaining({ field: 'rules' }));
    }
    expect(trainConfigFromArgs(['--config', file('ok.json', '{"rules": {"profile": "tavern5"}}'), '--players', '5']).config.rules).toEqual({ profile: 'tavern5', players: 5 });
  });

  it('read integers as every other verb does: no hex, no exponents (probe finding)', () => {
    expect(() => trainConfigFromArgs(['--updates', '0x10'])).toThrow(expect.objectContaining({ field: 'updates' }));
    expect(() => trainConfigFromArgs(['--updates', '1e0'])).toThrow(expect.objectContaining({ field: 'updates' }));
    expect(() => trainConfigFromArgs(['--hidden', '64,0x20'])).toThrow(expect.objectContaining({ field: 'hidden' }));
    expect(() => trainConfigFromArgs(['--lr', '0x1'])).toThrow(expect.objectContaining({ field: 'lr' }));
    expect(trainConfigFromArgs(['--updates', '12', '--lr', '3e-4']).config).toMatchObject({ updates: 12, learningRate: 3e-4 });
  });

  it('tell a stopped run how to resume, with --runs-dir when it is not the default', () => {
    expect(interruptedMessage({}, 'runs/a', 3)).toBe('interrupted after update 3; resume with --resume --name a');
    expect(interruptedMessage({ runsDir: '/tmp/my runs' }, '/tmp/my runs/b', 7)).toBe("interrupted after update 7; resume with --resume --name b --runs-dir '/tmp/my runs'");
    // Pasted into a shell, a double-quoted `$HOME` or backtick in the folder was expanded or run.
    const hostile = "/tmp/odd $HOME `x` it's";
    const hint = interruptedMessage({ runsDir: hostile }, `${hostile}/r`, 1);
    const pasted = spawnSync('bash', ['-c', `printf '%s' ${hint.slice(hint.indexOf('--runs-dir ') + 11)}`], { encoding: 'utf8' });
    expect(pasted.stdout).toBe(hostile);
  });
});

describe('kratzen train signals', () => {
  it('SIGTERM stops after the current update with a checkpoint, as Ctrl-C does (it ended the run at once)', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-signal-'));
    const config = join(dir, 'tiny.json');
    writeFileSync(config, JSON.stringify({ rules: { players: 3 }, numEnvs: 6, rolloutSteps: 40, hiddenSizes: [16], minibatchSize: 64, epochs: 1, imitationUpdates: 2, updates: 400, evalEvery: 0, finalEvalDeals: 0, checkpointEvery: 1000 }));
    const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'train', '--config', config, '--name', 'sig', '--runs-dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const metrics = join(dir, 'sig', 'metrics.jsonl');
    let done = 0;
    while ((done = existsSync(metrics) ? readFileSync(metrics, 'utf8').split('\n').length - 1 : 0) < 3) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The signal's exit code, 128 + 15: it exited 0, as a finished run does [cli probe].
    expect(code).toBe(143);
    // After the update in progress, not at the next league snapshot (update 10) [probe round 8].
    const stopped = Number(stderr.match(/interrupted after update (\d+); resume with --resume/)?.[1]);
    expect(stopped).toBeGreaterThanOrEqual(done);
    expect(stopped).toBeLessThanOrEqual(done + 2);
    expect(existsSync(join(dir, 'sig', 'checkpoints', 'latest.json'))).toBe(true);
  });
});

describe('the README\'s training commands', () => {
  it('fine-tuning from a shipped checkpoint runs as written (the policies read cards as dealt; the default suitSymmetry refused it)', { timeout: 120_000 }, () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npx kratzen train') && l.includes('--initial-policy'))!;
    const args = line.replace(/#.*$/, '').trim().split(/\s+/).slice(3);
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-readme-tune-'));
    const run = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'train', ...args, '--runs-dir', dir, '--updates', '1', '--num-envs', '8', '--rollout-steps', '48', '--final-eval-deals', '0'], { encoding: 'utf8', cwd: join(import.meta.dirname, '..') });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(existsSync(join(dir, 'tuned', 'checkpoints', 'latest.json'))).toBe(true);
    expect(run.stdout + run.stderr).toMatch(/TF\.js backend \w+, 1 update$/m); // it said "1 updates"
  });
});

describe('kratzen train output', () => {
  it('a stderr that is gone loses the progress, not the run: train saves its checkpoint, eval its report (exit 7 and exit 1 with nothing before) [probe round 8]', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-stderr-'));
    const full = openSync('/dev/full', 'w');
    const bin = join(import.meta.dirname, '..', 'dist/cli/main.js');
    const train = spawnSync(process.execPath, [bin, 'train', '--runs-dir', dir, '--name', 'quiet', '--players', '3', '--num-envs', '6', '--rollout-steps', '16', '--hidden', '16', '--updates', '2', '--final-eval-deals', '0'], { stdio: ['ignore', 'pipe', full], encoding: 'utf8' });
    expect(train.status).toBe(0);
    expect(existsSync(join(dir, 'quiet', 'checkpoints', 'latest.json'))).toBe(true);
    const evaluation = spawnSync(process.execPath, [bin, 'eval', '--agents', 'random,heuristic', '--hands', '8', '--workers', '1', '--out', join(dir, 'eval')], { stdio: ['ignore', 'pipe', full], encoding: 'utf8' });
    expect(evaluation.status).toBe(0);
    expect(existsSync(join(dir, 'eval', 'result.json'))).toBe(true);
    closeSync(full);
  });

  it('a run file that cannot be written exits 3 with one JSON line naming --runs-dir and the file (it was a stack trace)', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-out-'));
    // The name of the run's metrics file is taken by a folder.
    mkdirSync(join(dir, 'r1', 'metrics.jsonl'), { recursive: true });
    const run = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'train', '--runs-dir', dir, '--name', 'r1', '--players', '3', '--num-envs', '6', '--rollout-steps', '16', '--hidden', '16', '--updates', '1', '--final-eval-deals', '0'], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    const last = run.stderr.trim().split('\n').at(-1)!;
    expect(JSON.parse(last)).toEqual({
      error: 'cannot write output',
      field: 'runs-dir',
      reason: `cannot write the run ${join(dir, 'r1')}: ${join(dir, 'r1', 'metrics.jsonl')}: is a directory (EISDIR)`,
    });
    expect(existsSync(join(dir, 'r1', '.lock'))).toBe(false);
  });
  it('a file where the run folder or its league or checkpoints go is refused before any work, naming --name [probe, session 41]', { timeout: 120_000 }, () => {
    // The run folder was "already exists (EEXIST)", exit 3; a file as league/ failed the run after its first update.
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-shapes-'));
    const small = ['--players', '3', '--num-envs', '6', '--rollout-steps', '16', '--hidden', '16', '--final-eval-deals', '0', '--updates', '1'];
    writeFileSync(join(dir, 'a-file'), 'x');
    for (const inside of ['league', 'checkpoints']) {
      mkdirSync(join(dir, `with-${inside}`));
      writeFileSync(join(dir, `with-${inside}`, inside), 'x');
    }
    for (const name of ['a-file', 'with-league', 'with-checkpoints']) {
      const run = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'train', '--runs-dir', dir, '--name', name, ...small], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(2);
      expect(lastJsonLine(run.stderr)).toMatchObject({ field: 'name', reason: expect.stringMatching(/is there but is not a folder/) });
      expect(run.stderr).not.toMatch(/update 1/);
    }
  });
  it('a FIFO in the run folder (as .lock, config.json, metrics.jsonl) is refused at once: reading it blocked where no signal could stop the trainer [probe round 6]', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-train-fifo-'));
    const train = (...args: string[]) =>
      spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist/cli/main.js'), 'train', '--runs-dir', dir, ...args], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
    const refusal = (run: ReturnType<typeof train>) => (expect(run.status).toBe(2), lastJsonLine(run.stderr));
    const small = ['--players', '3', '--num-envs', '6', '--rollout-steps', '16', '--hidden', '16', '--final-eval-deals', '0'];
    mkdirSync(join(dir, 'locked'));
    spawnSync('mkfifo', [join(dir, 'locked', '.lock')]);
    expect(refusal(train('--name', 'locked', ...small, '--updates', '1'))).toMatchObject({ field: 'name', reason: expect.stringMatching(/\.lock is not a lock file \(not a regular file\)/) });
    mkdirSync(join(dir, 'piped'));
    spawnSync('mkfifo', [join(dir, 'piped', 'config.json')]);
    expect(refusal(train('--name', 'piped', '--resume'))).toMatchObject({ field: 'config.json', reason: expect.stringMatching(/is not a regular file/) });
    // Nor through a symbolic link: one to /etc/passwd was read, its first line quoted [CLI probe, session 32].
    mkdirSync(join(dir, 'linked'));
    symlinkSync('/etc/passwd', join(dir, 'linked', 'config.json'));
    const linked = refusal(train('--name', 'linked', '--resume'));
    expect(linked).toMatchObject({ field: 'config.json', reason: expect.stringMatching(/config\.json is a symbolic link, not a file of the run/) });
    expect(linked.reason).not.toContain('root:');
    // Nor decoded loosely: a seed holding 0xff trained as the seed U+FFFD.
    mkdirSync(join(dir, 'latin1'));
    writeFileSync(join(dir, 'latin1', 'config.json'), Buffer.from('{"name":"latin1","seed":"\xff","rules":{}}', 'latin1'));
    expect(refusal(train('--name', 'latin1', '--resume'))).toMatchObject({ field: 'config.json', reason: expect.stringMatching(/config\.json is not UTF-8 text/) });
    // A constant learning rate: the run may be resumed for more updates.
    writeFileSync(join(dir, 'constant.json'), '{"learningRateDecay":"none"}');
    expect(train('--name', 'run', '--config', join(dir, 'constant.json'), ...small, '--updates', '1').status).toBe(0);
    rmSync(join(dir, 'run', 'metrics.jsonl'));
    spawnSync('mkfifo', [join(dir, 'run', 'metrics.jsonl')]);
    expect(refusal(train('--name', 'run', '--resume', '--updates', '2'))).toMatchObject({ field: 'metrics.jsonl', reason: expect.stringMatching(/is not a regular file/) });
  });
});
