// Tournaments through Redis: a redis-server on a loopback port and `kratzen worker` processes
// from the build play heuristic vs random deals. `dist.tournament.w1` and `.w2` are hands per
// second with one and two single-thread worker processes (8-deal jobs), `dist.tournament.local`
// the same tournament in this thread, all in this run; `dist.jobOverheadMs` is the time a
// one-deal job costs beyond the deal itself (one worker, one deal per job, against local).
// `dist.rollout.*` are rollout steps per second of the default training config in two blocks:
// two local actor threads against the two workers through Redis.
// Skipped, with a note, where redis-server is not installed.

import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runTournament, type TournamentConfig } from '../training/tournament.js';
import { parseRedisUrl } from '../training/distributed/redis.js';
import { runTournamentOnRedis } from '../training/distributed/tournament-jobs.js';
import { haveRedisServer, startLocalRedis, startWorkerProcess, stopProcess } from '../training/distributed/local-cluster.js';
import { RedisActors } from '../training/distributed/rollout-jobs.js';
import { ActorPool, actorSetup, weightsOf, type RolloutActors } from '../training/actors.js';
import { parseTrainConfig } from '../training/config.js';
import { PolicyAgent, selectBackend } from '../agents/index.js';

const BIN = fileURLToPath(new URL('../cli/main.js', import.meta.url));

export async function benchDistributed(seconds: number): Promise<Record<string, number>> {
  if (!haveRedisServer()) {
    process.stderr.write('distributed bench: redis-server is not installed; skipped\n');
    return {};
  }
  const workers: ChildProcess[] = [];
  const startWorker = async () => workers.push(await startWorkerProcess(BIN, url));
  const { url, process: redis } = await startLocalRedis();
  const connection = parseRedisUrl(url);
  try {
    // Sized so each figure takes about `seconds` at one worker (~2,000 hands/s here).
    const deals = Math.max(16, Math.round((seconds * 2000) / 16 / 8) * 8);
    const config: TournamentConfig = { agents: ['heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals, seed: 'bench' };
    const rate = async (run: () => Promise<{ hands: number }>) => {
      const started = performance.now();
      const { hands } = await run();
      return { handsPerSec: hands / ((performance.now() - started) / 1000), seconds: (performance.now() - started) / 1000 };
    };
    await startWorker();
    // Warm-up of the same size on both sides: with 8 deals the worker thread's JIT was still cold
    // and one worker measured at half the local speed.
    await runTournament(config);
    await runTournamentOnRedis(config, { connection });
    const local = await rate(() => runTournament(config));
    const w1 = await rate(() => runTournamentOnRedis(config, { connection, blockDeals: 8 }));
    const perDealJobs = await rate(() => runTournamentOnRedis(config, { connection, blockDeals: 1 }));
    await startWorker();
    await runTournamentOnRedis(config, { connection, blockDeals: 8 });
    const w2 = await rate(() => runTournamentOnRedis(config, { connection, blockDeals: 8 }));
    // Rollouts of the default training config in two blocks: two local actor threads against
    // the two workers through Redis (weights and batches as blobs).
    await selectBackend('auto');
    const train = parseTrainConfig({ actors: 2 });
    const setup = actorSetup(train, 4);
    const learner = new PolicyAgent({ architecture: { hiddenSizes: train.hiddenSizes }, seed: 1, suitSymmetry: train.suitSymmetry });
    const weights = weightsOf(learner);
    const rollouts = async (actors: RolloutActors) => {
      const request = { steps: train.rolloutSteps, gamma: 1, lambda: 0.95, imitating: false };
      await actors.collect(weights, { ...request, seed: 'bench/warm' });
      let steps = 0;
      const started = performance.now();
      for (let u = 0; u === 0 || performance.now() - started < seconds * 1000; u++) steps += (await actors.collect(weights, { ...request, seed: `bench/${u}` })).stats.envSteps;
      await actors.close();
      return steps / ((performance.now() - started) / 1000);
    };
    const rolloutLocal = await rollouts(await ActorPool.start(setup, 2));
    const rolloutRedis = await rollouts(await RedisActors.start(setup, 2, connection));
    learner.dispose();
    return {
      'dist.tournament.local.handsPerSec': Math.round(local.handsPerSec),
      'dist.tournament.w1.handsPerSec': Math.round(w1.handsPerSec),
      'dist.tournament.w2.handsPerSec': Math.round(w2.handsPerSec),
      'dist.ratio.w2OverW1': Math.round((w2.handsPerSec / w1.handsPerSec) * 1000) / 1000,
      'dist.ratio.w1OverLocal': Math.round((w1.handsPerSec / local.handsPerSec) * 1000) / 1000,
      'dist.rollout.local.a2.stepsPerSec': Math.round(rolloutLocal),
      'dist.rollout.redis.w2.stepsPerSec': Math.round(rolloutRedis),
      'dist.ratio.rolloutRedisOverLocal': Math.round((rolloutRedis / rolloutLocal) * 1000) / 1000,
      'dist.jobOverheadMs': Math.round(((perDealJobs.seconds - local.seconds) / deals) * 1000 * 100) / 100,
    };
  } finally {
    // Workers first, while Redis still answers them.
    for (const worker of workers) await stopProcess(worker);
    await stopProcess(redis);
  }
}
