// Duplicate tournaments: rotations, fairness, significance, reproducibility.
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bradleyTerryElo, dealsBetterText, meanCi, runTournament, seating, t975, writeTournamentReport } from './index.js';
import { TournamentStopped, checkAgentSpec, maxDealHands } from './tournament.js';
import { randomSession } from '../env/rules/index.js';
import { PolicyAgent, selectBackend } from '../agents/index.js';
import { CheckpointStore } from '../checkpoints/index.js';

/** A checkpoint store in a new temp folder (`dir`/store) with one small policy saved at each of `steps`; `newest` is the last. */
async function storeOfSteps(prefix: string, steps: number[]): Promise<{ dir: string; rules: { profile: string; players: number }; newest: string }> {
  await selectBackend('wasm');
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const rules = { profile: 'didactic4', players: 4 };
  const store = new CheckpointStore(join(dir, 'store'), { rules });
  const agent = new PolicyAgent({ architecture: { hiddenSizes: [8] }, seed: 1 });
  let newest = '';
  for (const step of steps) newest = (await store.save(agent, { step })).dir;
  agent.dispose();
  return { dir, rules, newest };
}

describe('seating', () => {
  it.each([
    [2, 4],
    [3, 4],
    [2, 3],
    [4, 6],
  ])('over all rotations, %i agents at %i seats each sit at every seat', (agents, seats) => {
    const counts = Array.from({ length: agents }, () => new Array<number>(seats).fill(0));
    for (let r = 0; r < seats; r++) seating(agents, seats, r).forEach((a, s) => counts[a]![s]!++);
    for (const row of counts) expect(new Set(row).size).toBe(1); // the same number of times at every seat
    for (const row of counts) expect(row[0]).toBeGreaterThan(0);
  });
});

describe('duplicate tournaments', () => {
  it('plays every deal in every rotation', async () => {
    const result = await runTournament({ agents: ['heuristic', 'random'], rules: { players: 4 }, deals: 3, seed: 1 });
    // didactic4, 4 players: a session is 4 hands; 4 rotations per deal.
    expect(result.deals.map((d) => d.hands)).toEqual([16, 16, 16]);
    expect(result.hands).toBe(48);
  });

  it('identical agents come out equal within the interval', async () => {
    const result = await runTournament({ agents: ['random', 'random'], rules: { players: 4 }, deals: 30, seed: 2 });
    const [h2h] = result.headToHead;
    expect(Math.abs(h2h!.meanDifference)).toBeLessThanOrEqual(h2h!.ci95);
    const same = await runTournament({ agents: ['heuristic', 'heuristic'], rules: { players: 3 }, deals: 4, seed: 2 });
    expect(same.headToHead[0]!.meanDifference).toBe(0);
    // Every deal a tie: counted apart, not printed as half wins ("better in 2 of 4 deals") [probe].
    expect(same.headToHead[0]).toMatchObject({ ties: 4, aWins: 2, deals: 4 });
    expect(dealsBetterText(same.headToHead[0]!)).toBe('better in 0 of 4 deals, tied in 4');
    const [mixed] = result.headToHead;
    expect(mixed!.aWins).toBe(result.deals.filter((d) => d.chipsPerHand[0]! > d.chipsPerHand[1]!).length + mixed!.ties / 2);
    expect(mixed!.ties).toBe(result.deals.filter((d) => d.chipsPerHand[0] === d.chipsPerHand[1]).length);
  });

  it('identical agents tie every deal in tavern5 too, whose fifths of a chip are no binary fractions [CLI probe]', async () => {
    // Summed as floats, 9 of 16 deals differed in the last bit (-0.16000000000000006 against
    // -0.16000000000000003): counted as wins, two copies of the heuristic rated 1469 and 1531.
    const same = await runTournament({ agents: ['heuristic', 'heuristic'], rules: { profile: 'tavern5', players: 5, hands: 4 }, deals: 16, seed: 1 });
    expect(same.headToHead[0]).toMatchObject({ meanDifference: 0, ties: 16, deals: 16 });
    expect(same.agents.map((a) => a.rating)).toEqual([1500, 1500]);
    for (const d of same.deals) expect(d.chipsPerHand[0]).toBe(d.chipsPerHand[1]);
  });

  it('the heuristic beats random significantly', async () => {
    const result = await runTournament({ agents: ['heuristic', 'random'], rules: { profile: 'tavern5', players: 4 }, deals: 30, seed: 3 });
    const [h2h] = result.headToHead;
    expect(h2h!.meanDifference - h2h!.ci95).toBeGreaterThan(0);
    expect(result.agents[0]!.rating).toBeGreaterThan(result.agents[1]!.rating);
  });

  it('results depend only on the seed, not on the number of workers', async () => {
    const config = { agents: ['pimc:samples=2', 'heuristic', 'random'], rules: { players: 4 }, deals: 4, seed: 'w' };
    const inline = await runTournament({ ...config, workers: 1 });
    const parallel = await runTournament({ ...config, workers: 2 });
    expect(parallel).toEqual(inline);
    const other = await runTournament({ ...config, seed: 'other' });
    expect(other.deals).not.toEqual(inline.deals);
  });

  it('stops after the deal at which shouldStop says so, on one thread or several, and its workers end', async () => {
    // Ctrl-C in a training run's final evaluation: the tournament played every deal before.
    const config = { agents: ['heuristic', 'random'], rules: { players: 3 }, deals: 40, seed: 's' };
    for (const workers of [1, 2]) {
      let dealsSeen = 0;
      const stopped = runTournament({ ...config, workers }, { onDeal: (done) => (dealsSeen = done), shouldStop: () => dealsSeen >= 2 });
      await expect(stopped).rejects.toBeInstanceOf(TournamentStopped);
      const played = dealsSeen;
      expect(played).toBeGreaterThanOrEqual(2);
      expect(played).toBeLessThan(config.deals);
      // Terminated workers report nothing more.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(dealsSeen).toBe(played);
    }
    const whole = await runTournament({ ...config, deals: 2, workers: 2 }, { shouldStop: () => false });
    expect(whole.deals).toHaveLength(2);
  });

  it('a session past 2^53 - 1 units stops the tournament with amount overflow, on one thread or several (docs/rules.md §3)', async () => {
    // The antes overflow within a few hands: no session ends, so no deal has a result to count.
    // Workers passed the message alone, and the CLI blamed --agents.
    const config = { agents: ['heuristic', 'random'], rules: { profile: 'tavern5', players: 4, ante: 4e14 }, deals: 2, seed: 1 };
    for (const workers of [1, 2]) {
      await expect(runTournament({ ...config, workers })).rejects.toMatchObject({ name: 'AmountOverflowError', hand: expect.any(Number) });
    }
  });

  it('plays the checkpoint a store\'s latest names when it starts, in every worker (each read latest for itself, and a live run moved it between them) [eval probe, session 37]', async () => {
    const { dir, rules, newest } = await storeOfSteps('kratzen-tournament-latest-', [1, 2]);
    const log = join(dir, 'loads.log');
    process.env.KRATZEN_TEST_LOAD_LOG = log;
    const config = { agents: [join(dir, 'store'), 'random'], rules, deals: 4, seed: 1, workers: 2 };
    const result = await runTournament(config, { checkpointModule: new URL('../test/fixtures/recording-loader.mjs', import.meta.url).href });
    // Each worker loads the folder it was given, read once before they started: a copy of it,
    // removed afterwards.
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    expect(loaded).toHaveLength(2);
    expect(loaded[1]).toBe(loaded[0]);
    expect(loaded[0]).not.toBe(newest);
    expect(existsSync(loaded[0]!)).toBe(false);
    expect(result.config.checkpoints).toEqual({ [join(dir, 'store')]: newest });
    expect(result.agents[0]!.name).toBe(join(dir, 'store'));
    // A checkpoint folder given as itself is played as itself, and not listed.
    const direct = await runTournament({ ...config, agents: [newest, 'random'], workers: 1 }, { loadCheckpoint: async (d, c) => (await import('../checkpoints/agent-loader.js')).loadCheckpoint(d, c) });
    expect(direct.config.checkpoints).toBeUndefined();
    expect(direct.deals).toEqual(result.deals);
    // latest.json's record of the manifest is checked, as loading the store checks it (the
    // folder it names loaded without that check) [review, session 37].
    const pointer = join(dir, 'store', 'latest.json');
    writeFileSync(pointer, readFileSync(pointer, 'utf8').replace(/"manifestSha256": ?"[0-9a-f]{64}"/, `"manifestSha256":"${'0'.repeat(64)}"`));
    await expect(runTournament(config, { checkpointModule: new URL('../test/fixtures/recording-loader.mjs', import.meta.url).href })).rejects.toMatchObject({ name: 'CheckpointError', code: 'bad-pointer' });
  });

  it('plays the checkpoint latest named at the start though the run prunes it before a worker loads it [CLI probe]', async () => {
    // A run training on beside `eval --agents runs/x` pruned the step folder the workers were
    // given: "unknown agent" with --workers 2, every time.
    const { dir, rules, newest } = await storeOfSteps('kratzen-tournament-pruned-', [1]);
    process.env.KRATZEN_TEST_LOAD_LOG = join(dir, 'loads.log');
    process.env.KRATZEN_TEST_PRUNE = newest;
    try {
      const config = { agents: [join(dir, 'store'), 'random'], rules, deals: 4, seed: 1, workers: 2 };
      const result = await runTournament(config, { checkpointModule: new URL('../test/fixtures/recording-loader.mjs', import.meta.url).href });
      expect(existsSync(newest)).toBe(false);
      expect(result.config.checkpoints).toEqual({ [join(dir, 'store')]: newest });
      expect(result.deals).toHaveLength(4);
    } finally {
      delete process.env.KRATZEN_TEST_PRUNE;
    }
    // A damaged checkpoint is named as itself, not as the tournament's copy of it.
    const { dir: damaged } = await new CheckpointStore(join(dir, 'other'), { rules }).save(new PolicyAgent({ architecture: { hiddenSizes: [8] }, seed: 2 }), { step: 1 });
    const weights = join(damaged, 'weights.bin');
    writeFileSync(weights, Buffer.alloc(readFileSync(weights).length, 7));
    const failed = runTournament({ agents: [join(dir, 'other'), 'random'], rules, deals: 2, seed: 1, workers: 2 }, { checkpointModule: new URL('../test/fixtures/recording-loader.mjs', import.meta.url).href });
    await expect(failed).rejects.toMatchObject({ name: 'CheckpointError', path: expect.stringContaining(damaged) });
    await expect(failed).rejects.toThrow(damaged);
  });

  it('writes a JSON result and an HTML report with an SVG chart', async () => {
    const result = await runTournament({ agents: ['heuristic', 'random'], rules: { players: 4 }, deals: 2, seed: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-eval-'));
    const path = writeTournamentReport(result, dir);
    expect(readFileSync(path, 'utf8')).toMatch(/<svg[\s\S]*heuristic/);
    expect(JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')).agents[0].name).toBe('heuristic');
  });

  it('rejects unknown agents and too few deals with clear errors', async () => {
    await expect(runTournament({ agents: ['heuristic', 'grandmaster'], rules: {}, deals: 2, seed: 1 })).rejects.toThrow(/unknown agent "grandmaster"/);
    await expect(runTournament({ agents: ['heuristic', 'random'], rules: {}, deals: 1, seed: 1 })).rejects.toThrow(/two deals/);
    await expect(runTournament({ agents: ['pimc:depth=3', 'random'], rules: {}, deals: 2, seed: 1 })).rejects.toThrow(/unknown option depth/);
  });
});

describe('maxDealHands', () => {
  it('bounds the hands of a deal: a session per rotation, its hands and one tie-break deal in tavern5 [D-11]', () => {
    expect(maxDealHands({ profile: 'didactic4', players: 4 })).toBe(16);
    expect(maxDealHands({ profile: 'tavern5', players: 5, hands: 3 })).toBe(20);
    // Random sessions reach the bound per session, never pass it (a distributed run refuses a deal past it).
    for (const [rules, perSession] of [[{ profile: 'didactic4', players: 4, hands: 2 }, 2], [{ profile: 'tavern5', players: 3, hands: 2 }, 3]] as const) {
      let most = 0;
      for (let seed = 0; seed < 300; seed++) most = Math.max(most, randomSession(rules, seed).numResults);
      expect(most).toBe(perSession);
      expect(maxDealHands(rules)).toBe(rules.players * perSession);
    }
  });
});

describe('statistics', () => {
  it('meanCi uses Student t for small samples', () => {
    const { mean, ci95 } = meanCi([1, 2, 3, 4]);
    expect(mean).toBe(2.5);
    expect(ci95).toBeCloseTo(3.182 * Math.sqrt(5 / 3) / 2, 6);
  });
  it('meanCi uses Student t past 30 degrees of freedom too (1.96 made 32 deals\' intervals 4% too narrow) [eval probe, session 37]', () => {
    // Quantiles by bisection on Simpson's rule over the t density (20,000 intervals).
    for (const [df, quantile] of [[30, 2.042 /* the table's, to 3 places */], [31, 2.039513], [40, 2.021075], [63, 1.998341], [99, 1.984217], [1599, 1.961449], [1e6, 1.959966]] as const) {
      expect(t975(df)).toBeCloseTo(quantile, 5);
    }
    const samples = Array.from({ length: 32 }, (_, i) => (i * 7) % 5);
    const { ci95 } = meanCi(samples);
    const mean = samples.reduce((a, b) => a + b) / 32;
    const sd = Math.sqrt(samples.reduce((a, b) => a + (b - mean) ** 2, 0) / 31);
    expect(ci95).toBeCloseTo((2.039513 * sd) / Math.sqrt(32), 5);
  });
  it('Bradley-Terry ratings order the players and stay finite when one is unbeaten', () => {
    const elo = bradleyTerryElo([
      [0, 9, 10],
      [1, 0, 7],
      [0, 3, 0],
    ]);
    expect(elo[0]).toBeGreaterThan(elo[1]!);
    expect(elo[1]).toBeGreaterThan(elo[2]!);
    expect(elo.every(Number.isFinite)).toBe(true);
    expect(elo.reduce((a, b) => a + b, 0) / 3).toBeCloseTo(1500, 6);
  });
});

describe('checkAgentSpec [probe, session 47]', () => {
  it('takes a symbolic link that leads to nothing as a checkpoint path, which its loader refuses as such (it said "unknown agent")', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-spec-'));
    const loop = join(dir, 'loop');
    symlinkSync(loop, loop);
    const rules = { profile: 'didactic4', players: 4 };
    const { loadCheckpoint } = await import('../checkpoints/agent-loader.js');
    expect(await checkAgentSpec(loop, rules)).toBe(true);
    await expect(checkAgentSpec(loop, rules, loadCheckpoint)).rejects.toMatchObject({ code: 'bad-file', path: loop });
    await expect(checkAgentSpec(join(dir, 'absent'), rules, loadCheckpoint)).rejects.toThrow(/^unknown agent /);
    expect(await checkAgentSpec('random', rules, loadCheckpoint)).toBe(false);
  });
});
