// Tournaments over Redis (training/distributed/): a real redis-server on a loopback port, two
// `kratzen worker` processes from the build, results equal to one machine's for the same seed,
// and a worker killed with SIGKILL mid-run costing nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../checkpoints/agent-loader.js';
import { runTournament, type TournamentConfig } from '../tournament.js';
import { Queue, Worker, type SandboxedJob } from 'bullmq';
import { Redis } from 'ioredis';
import { BLOB_CACHE_ENV, BlobStore, CONNECTION_ENV, KEY_PREFIX, ROLLOUT_QUEUE, TOURNAMENT_QUEUE, parseRedisUrl, sha256 } from './redis.js';
import { RedisActors, type RolloutBlock, type RolloutReply } from './rollout-jobs.js';
import processRollout, { rolloutActorsKept } from './rollout-processor.js';
import processBlock, { tournamentAgentsKept } from './tournament-processor.js';
import type { TournamentBlock } from './tournament-jobs.js';
import type { DealResult } from '../tournament.js';
import { writeCheckpoint } from '../../checkpoints/checkpoint.js';
import { PolicyAgent, selectBackend } from '../../agents/index.js';
import { weightsOf } from '../actors.js';
import { parseTrainConfig } from '../config.js';
import { decodeArrays, encodeArrays } from './arrays.js';
import type { ActorSetup, RolloutRequest } from '../actors.js';
import { materializeCheckpoint, uploadCheckpoint } from './checkpoint-blobs.js';
import { runTournamentOnRedis } from './tournament-jobs.js';
import { startWorkers } from './worker.js';
import { haveRedisServer, startLocalRedis, startWorkerProcess } from './local-cluster.js';
import { train, withoutTimings } from '../trainer.js';
import { CheckpointStore } from '../../checkpoints/store.js';
import type { RulesInput } from '../../checkpoints/checkpoint.js';
import { lastJsonLine } from '../../test/helpers/cli-output.js';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'dist/cli/main.js');
const CHECKPOINT = join(ROOT, 'checkpoints/pretrained/didactic4-p4/checkpoint');
const haveRedis = haveRedisServer();
const IN_CI = process.env.CI === 'true';
const suite = haveRedis || IN_CI ? describe : describe.skip;

suite('tournaments on Redis with BullMQ', () => {
  let redis: ChildProcess;
  let url: string;
  const workers: { child: ChildProcess }[] = [];

  const startWorker = async () => {
    const entry = { child: await startWorkerProcess(BIN, url, { lockSeconds: 2 }) };
    workers.push(entry);
    return entry;
  };

  beforeAll(async () => {
    expect(haveRedis, 'CI must install redis-server').toBe(true);
    ({ url, process: redis } = await startLocalRedis());
    await Promise.all([startWorker(), startWorker()]);
  }, 60_000);

  afterAll(() => {
    for (const { child } of workers) child.kill('SIGKILL');
    redis?.kill('SIGKILL');
  });

  const config: TournamentConfig = { agents: [CHECKPOINT, 'heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals: 40, seed: 'redis' };

  /**
   * Another user's checkpoint under the cache's old fixed name, `$TMPDIR/kratzen-blobs/<index
   * hash>/`: the shipped policy with its weights zeroed (a manifest that matches them), which
   * loads and plays, but not as the named checkpoint does.
   */
  async function plantDecoy(): Promise<void> {
    const blobs = new BlobStore(parseRedisUrl(url));
    await blobs.connect();
    const hash = await uploadCheckpoint(CHECKPOINT, blobs);
    await blobs.close();
    const decoy = join(tmpdir(), 'kratzen-blobs', hash);
    mkdirSync(join(decoy, '..'), { recursive: true });
    cpSync(CHECKPOINT, decoy, { recursive: true });
    const weights = new Uint8Array(readFileSync(join(decoy, 'weights.bin')).length);
    writeFileSync(join(decoy, 'weights.bin'), weights);
    const manifest = JSON.parse(readFileSync(join(decoy, 'manifest.json'), 'utf8'));
    manifest.files['weights.bin'].sha256 = createHash('sha256').update(weights).digest('hex');
    writeFileSync(join(decoy, 'manifest.json'), JSON.stringify(manifest));
  }

  it('gives the single-machine result for the same seed, a checkpoint fetched through Redis into a cache no other user can fill first', async () => {
    await plantDecoy();
    const local = await runTournament(config, { loadCheckpoint });
    const progress: number[] = [];
    const distributed = await runTournamentOnRedis(config, { connection: parseRedisUrl(url), blockDeals: 3, onDeal: (done) => progress.push(done) });
    expect(distributed).toEqual(local);
    expect(progress[progress.length - 1]).toBe(config.deals);
  }, 120_000);

  it('names the checkpoint a store played in the result, as a local run does (the field was missing) [docs probe, session 37]', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'kratzen-redis-store-')), 'store');
    cpSync(CHECKPOINT, join(store, 'step-000000000007'), { recursive: true });
    await new CheckpointStore(store, { rules: config.rules as RulesInput }).setLatest('step-000000000007');
    const small = { ...config, agents: [store, 'random'], deals: 4 };
    const local = await runTournament(small, { loadCheckpoint });
    const distributed = await runTournamentOnRedis(small, { connection: parseRedisUrl(url), blockDeals: 2 });
    expect(local.config.checkpoints).toEqual({ [store]: join(store, 'step-000000000007') });
    expect(distributed).toEqual(local);
  }, 120_000);

  it('finishes with the same result when a worker is killed (-9) mid-run: its job is retried, no deal lost or doubled', async () => {
    const slow: TournamentConfig = { ...config, agents: ['pimc:samples=2', 'heuristic'], deals: 24, seed: 'kill' };
    const local = await runTournament(slow);
    let killed = false;
    const victim = workers.find((w) => w.child.exitCode === null)!;
    const distributed = await runTournamentOnRedis(slow, {
      connection: parseRedisUrl(url),
      blockDeals: 4,
      onDeal: (done) => {
        if (!killed && done >= 2) {
          killed = true;
          victim.child.kill('SIGKILL');
        }
      },
    });
    expect(killed).toBe(true);
    expect(distributed).toEqual(local);
    expect(distributed.deals.map((d) => d.deal)).toEqual([...Array(24).keys()]);
    await startWorker();
  }, 180_000);

  const trainConfig = (runsDir: string, name: string) => ({
    name,
    runsDir,
    rules: { players: 3 },
    seed: 21,
    imitationUpdates: 1,
    updates: 4,
    numEnvs: 8,
    // Long enough for hands to finish in every rollout: shorter ones would learn from nothing.
    rolloutSteps: 40,
    hiddenSizes: [16],
    minibatchSize: 64,
    epochs: 2,
    evalEvery: 0,
    finalEvalDeals: 0,
    league: { snapshotEvery: 2 },
    actors: 2,
  });

  it('self-play with rollouts on the workers gives the metrics of local actor threads, a worker killed (-9) mid-run included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-redis-train-'));
    const local = await train(trainConfig(dir, 'local'), { verbose: false });
    let updates = 0;
    const victim = workers.find((w) => w.child.exitCode === null)!;
    const queue = new Queue(ROLLOUT_QUEUE, { connection: parseRedisUrl(url), prefix: KEY_PREFIX });
    let activeWhenKilled = 0;
    // After the second update, the next rollout's two blocks are watched (update 3's or, overlapped
    // with update 3, update 4's): once both are active
    // (one on each single-thread worker) one worker dies mid-job; its block is retried on the other.
    let trained = false;
    const killMidJob = async () => {
      while (!trained) {
        const active = await queue.getActiveCount();
        if (active >= 2) {
          activeWhenKilled = active;
          victim.child.kill('SIGKILL');
          return;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    let watcher: Promise<void> | undefined;
    const remote = await train(trainConfig(dir, 'remote'), {
      verbose: false,
      redis: parseRedisUrl(url),
      shouldStop: () => {
        if (++updates === 2) watcher = killMidJob();
        return false;
      },
    });
    trained = true;
    await watcher;
    await queue.close();
    expect(activeWhenKilled).toBe(2);
    expect(victim.child.signalCode).toBe('SIGKILL');
    for (const line of local.metrics) expect(line.batchSize as number).toBeGreaterThan(0);
    expect(remote.metrics.map(withoutTimings)).toEqual(local.metrics.map(withoutTimings));
    // Every rollout batch was taken out of Redis with its result: each stayed 7 days as a shared
    // blob, about 19 MB per update of the default config [scale-out probe, session 37]. The
    // blobs left hold weights (float32 arrays only) or checkpoint indexes (JSON).
    const raw = new Redis(parseRedisUrl(url));
    const left = await raw.keys(`${KEY_PREFIX}:blob:*`);
    const batches = [];
    for (const key of left) {
      const data = await raw.getBuffer(key);
      let decoded: ArrayLike<number>[] = [];
      try {
        decoded = decodeArrays(data!);
      } catch {
        continue; // a checkpoint index or file
      }
      if (decoded.some((a) => !(a instanceof Float32Array))) batches.push(key);
    }
    await raw.quit();
    expect(batches).toEqual([]);
    await startWorker();
  }, 240_000);

  it('names the field of a bad or unreachable Redis and a bad agent, and enqueues nothing', async () => {
    expect(() => parseRedisUrl('http://x')).toThrow(/redis:\/\//);
    await expect(runTournamentOnRedis(config, { connection: parseRedisUrl('redis://127.0.0.1:1') })).rejects.toMatchObject({ field: 'redis' });
    // A worker does not wait for an unreachable server forever (BullMQ alone would retry without end).
    await expect(startWorkers({ connection: parseRedisUrl('redis://127.0.0.1:1') })).rejects.toMatchObject({ field: 'redis' });
    await expect(runTournamentOnRedis({ ...config, agents: ['heuristic', 'nobody'] }, { connection: parseRedisUrl(url) })).rejects.toThrow(/nobody/);
    // A database the server does not have: it ran on database 0 after a stack trace [probe round 6].
    const missingDb = { field: 'redis', reason: expect.stringMatching(/has no database 99/) };
    await expect(runTournamentOnRedis(config, { connection: parseRedisUrl(`${url}/99`) })).rejects.toMatchObject(missingDb);
    await expect(startWorkers({ connection: parseRedisUrl(`${url}/99`) })).rejects.toMatchObject(missingDb);
  }, 30_000);
});

suite('a worker that returns results of no deal [probe round 6]', () => {
  let redis: ChildProcess;
  let url: string;
  beforeAll(async () => {
    ({ url, process: redis } = await startLocalRedis());
  }, 60_000);
  afterAll(() => redis?.kill('SIGKILL'));

  it('takes a job\'s result from the job, not from a line added to the events stream, repairs a damaged blob, and stores a league snapshot Redis lost again', async () => {
    const connection = parseRedisUrl(url);
    const raw = new Redis(connection);
    const config: TournamentConfig = { agents: ['heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals: 2, seed: 'events' };
    const rogue = new Worker(TOURNAMENT_QUEUE, async (job) => {
      // Slow enough for the forged event to come first.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const { from, to } = job.data as { from: number; to: number };
      return Array.from({ length: to - from }, (_, k) => ({ deal: from + k, chipsPerHand: [1, -1], hands: 16 }));
    }, { connection, prefix: KEY_PREFIX });
    try {
      const running = runTournamentOnRedis(config, { connection, attempts: 1 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const jobId = (await raw.keys(`${KEY_PREFIX}:${TOURNAMENT_QUEUE}:*-0`))[0]!.split(':').at(-1)!;
      await raw.xadd(`${KEY_PREFIX}:${TOURNAMENT_QUEUE}:events`, '*', 'event', 'completed', 'jobId', jobId, 'returnvalue', JSON.stringify([0, 1].map((deal) => ({ deal, chipsPerHand: [100, -100], hands: 16 }))));
      const result = await running;
      expect(result.agents.map((a) => a.meanChipsPerHand)).toEqual([1, -1]);
    } finally {
      await rogue.close();
    }
    // A blob damaged in Redis was kept by every later upload (SET NX), and every run then failed.
    const blobs = new BlobStore(connection);
    await blobs.connect();
    const hash = await blobs.put('checkpoint bytes');
    await raw.set(`${KEY_PREFIX}:blob:${hash}`, 'tampered');
    await expect(blobs.get(hash)).rejects.toThrow(/does not match its hash/);
    expect(await blobs.put('checkpoint bytes')).toBe(hash);
    expect((await blobs.get(hash)).toString()).toBe('checkpoint bytes');
    await blobs.close();
    // A league snapshot's blob is uploaded once; one Redis lost (its TTL passed, or evicted) failed
    // every later rollout job. Each collect stores it again [session 33].
    const actors = await RedisActors.start({ league: { maxSnapshots: 4 } } as unknown as ActorSetup, 1, connection);
    try {
      const snapshot = [Float32Array.of(1, 2, 3)];
      await actors.addSnapshot('snapshot-1', snapshot);
      const snapshotKey = `${KEY_PREFIX}:blob:${sha256(encodeArrays(snapshot))}`;
      expect(await raw.ttl(snapshotKey)).toBeGreaterThan(0);
      await raw.del(snapshotKey);
      await actors.refreshSnapshots();
      expect(await raw.getBuffer(snapshotKey)).toEqual(encodeArrays(snapshot));
      await raw.expire(snapshotKey, 5);
      await actors.refreshSnapshots();
      expect(await raw.ttl(snapshotKey)).toBeGreaterThan(3600);
      // One damaged in Redis (another length) is stored again too, not kept alive.
      await raw.set(snapshotKey, 'damaged');
      await actors.refreshSnapshots();
      expect(await raw.getBuffer(snapshotKey)).toEqual(encodeArrays(snapshot));
      // Weights that no longer hold numbers are the learner's divergence, as on one machine (their
      // batches of NaN were blamed on Redis); no job is queued.
      await expect(actors.collect([Float32Array.of(1, Number.NaN)], { seed: 'nan', steps: 4, gamma: 0.99, lambda: 0.95 } as RolloutRequest)).rejects.toMatchObject({ error: 'training diverged', field: 'learningRate' });
    } finally {
      await actors.close();
    }
    raw.disconnect();
  }, 60_000);

  it('fails the tournament naming the job and the field (NaN, 1e308, missing agents, string hands gave a NaN or "0many" summary and exit 0)', async () => {
    const connection = parseRedisUrl(url);
    const config: TournamentConfig = { agents: ['heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals: 4, seed: 'rogue' };
    const forgeries: [(deal: number) => unknown, RegExp][] = [
      [(deal) => ({ deal, chipsPerHand: ['NaN', null], hands: 16 }), /chipsPerHand \["NaN",null\]: expected 2 numbers within/],
      [(deal) => ({ deal, chipsPerHand: [1], hands: 16 }), /chipsPerHand \[1\]: expected 2 numbers within/],
      // Each finite, their sum over the deals was Infinity [session 33].
      [(deal) => ({ deal, chipsPerHand: [1e308, -1e308], hands: 16 }), /chipsPerHand \[1e\+308,-1e\+308\]: expected 2 numbers within/],
      [(deal) => ({ deal, chipsPerHand: [1, -1], hands: '0many' }), /hands "0many": expected an integer from 1 to/],
      [(deal) => ({ deal, chipsPerHand: [1, -1], hands: -20 }), /hands -20: expected an integer from 1 to/],
      // Four rotations of a 4-hand session (the default; didactic4 has no tie-break deal): 16.
      [(deal) => ({ deal, chipsPerHand: [1, -1], hands: 17 }), /hands 17: expected an integer from 1 to 16/],
      [(deal) => ({ deal, chipsPerHand: [1, -1], hands: 2 ** 53 - 1 }), /hands 9007199254740991: expected an integer from 1 to 16/],
    ];
    // A reply that is no list was told as "returned 9 deals" (the string's length) [scale-out probe, session 42].
    const replies: [(from: number, to: number) => unknown, RegExp][] = [
      ...forgeries.map(([forge, reason]): [(from: number, to: number) => unknown, RegExp] => [(from, to) => Array.from({ length: to - from }, (_, k) => forge(from + k)), reason]),
      [() => 'not deals', /returned "not deals", not a list of \d+ deals/],
    ];
    for (const [reply, reason] of replies) {
      const rogue = new Worker(TOURNAMENT_QUEUE, async (job) => {
        const { from, to } = job.data as { from: number; to: number };
        return reply(from, to);
      }, { connection, prefix: KEY_PREFIX });
      try {
        await expect(runTournamentOnRedis(config, { connection, attempts: 1 }), String(reason)).rejects.toThrow(reason);
      } finally {
        await rogue.close();
      }
    }
  }, 60_000);

  // A forged index naming one 4 MB blob under 250 names made each job write 1 GB into the
  // worker's cache, kept for its life once a manifest.json was among them [scale-out probe, session 42].
  it('fetches a checkpoint from Redis as its manifest lists it: the policy files only, sizes checked before reading, a forged index written nowhere', async () => {
    const blobs = new BlobStore(parseRedisUrl(url));
    await blobs.connect();
    const cache = mkdtempSync(join(tmpdir(), 'kratzen-forged-'));
    try {
      const real = JSON.parse((await blobs.get(await uploadCheckpoint(CHECKPOINT, blobs))).toString('utf8'));
      const junk = await blobs.put(Buffer.alloc(4 << 20, 7));
      const forge = async (files: Record<string, string>) => blobs.put(JSON.stringify({ kind: 'kratzen-checkpoint', files }));
      const fanOut = Object.fromEntries(Array.from({ length: 250 }, (_, k) => [`f${k}.bin`, junk]));
      // The real checkpoint with 250 extra names: only what a policy reads is written.
      const padded = await materializeCheckpoint(await forge({ ...real.files, ...fanOut }), blobs, cache);
      expect(readdirSync(padded).sort()).toEqual(['manifest.json', 'model.json', 'weights.bin']);
      expect((await loadCheckpoint(padded, { rules: { profile: 'didactic4', players: 4 }, seed: 0 })).name).toBeTruthy();
      // A weights.bin that is not the manifest's, a manifest of 4 MB, a manifest that is no
      // manifest: refused, nothing kept.
      const refusals: [Record<string, string>, RegExp][] = [
        [{ ...real.files, 'weights.bin': junk }, /weights\.bin is not the one the manifest lists/],
        [{ ...real.files, 'manifest.json': junk }, /has 4194304 bytes, more than 1048576/],
        [{ ...real.files, 'manifest.json': await blobs.put('{"kind":"nothing"}') }, /^checkpoint index [0-9a-f]{64}: bad manifest\.json: /],
        [fanOut, /has no manifest\.json/],
      ];
      for (const [files, reason] of refusals) await expect(materializeCheckpoint(await forge(files), blobs, cache)).rejects.toThrow(reason);
      expect(readdirSync(cache)).toEqual([padded.split('/').at(-1)]);
    } finally {
      await blobs.close();
    }
  }, 60_000);

  // Each job naming another setup built an actor before its weights were fetched, and every actor
  // was kept: forged jobs grew a worker to gigabytes, then its wasm memory ran out for real jobs
  // too [scale-out probe, session 42].
  it('a rollout job fetches its weights before it builds an actor, and a worker thread keeps at most two actors', async () => {
    process.env[CONNECTION_ENV] = JSON.stringify(parseRedisUrl(url));
    await selectBackend('wasm');
    const blobs = new BlobStore(parseRedisUrl(url));
    await blobs.connect();
    try {
      const setup: ActorSetup = {
        rules: { players: 4 }, numEnvs: 2, rolloutSteps: 8, rewardScale: 0.1, rewardNormalization: 'pot', hiddenSizes: [16], suitSymmetry: false,
        backend: 'wasm', league: parseTrainConfig({}).league, imitationTeacher: 'heuristic', teacherSamples: 4, numPlayers: 4,
      };
      const request: RolloutRequest = { seed: 'kept', steps: 8, gamma: 1, lambda: 0.95, imitating: false, recordOtherHands: false };
      const job = (data: RolloutBlock, id: string) => ({ data, id }) as unknown as SandboxedJob<RolloutBlock, RolloutReply>;
      const missing = sha256('weights nobody uploaded');
      await expect(processRollout(job({ setup: { ...setup, hiddenSizes: [4096, 4096] }, weights: missing, snapshots: [], request }, 'forged'))).rejects.toThrow(/not in Redis/);
      expect(rolloutActorsKept()).toBe(0);
      const weights = await blobs.put(encodeArrays(weightsOf(new PolicyAgent({ architecture: { hiddenSizes: [16] }, seed: 3 }))));
      for (const numEnvs of [2, 3, 4, 2]) {
        const reply = await processRollout(job({ setup: { ...setup, numEnvs }, weights, snapshots: [], request }, `kept-${numEnvs}`));
        expect(reply.batch).toMatch(/^[0-9a-f]{64}$/);
        expect(rolloutActorsKept()).toBeLessThanOrEqual(2);
      }
    } finally {
      await blobs.close();
    }
  }, 60_000);

  it('a worker thread keeps at most eight checkpoint agents beyond those of the job it plays (every one was kept)', async () => {
    process.env[CONNECTION_ENV] = JSON.stringify(parseRedisUrl(url));
    process.env[BLOB_CACHE_ENV] = mkdtempSync(join(tmpdir(), 'kratzen-kept-'));
    await selectBackend('wasm');
    const blobs = new BlobStore(parseRedisUrl(url));
    await blobs.connect();
    try {
      const rules = { profile: 'didactic4', players: 4 };
      const hashes: string[] = [];
      for (let k = 0; k < 11; k++) {
        const dir = join(mkdtempSync(join(tmpdir(), 'kratzen-kept-ck-')), 'checkpoint');
        const agent = new PolicyAgent({ architecture: { hiddenSizes: [4] }, seed: k, mode: 'greedy' });
        await writeCheckpoint(dir, { agent, rules, step: k });
        agent.dispose();
        hashes.push(await uploadCheckpoint(dir, blobs));
      }
      const block = (checkpoints: Record<string, string>) =>
        ({ data: { run: 'kept', config: { agents: [...Object.keys(checkpoints), 'random'], rules, deals: 1, seed: 'kept' }, from: 0, to: 1, checkpoints }, updateProgress: async () => undefined }) as unknown as SandboxedJob<TournamentBlock, DealResult[]>;
      for (const hash of hashes) {
        expect(await processBlock(block({ ck: hash }))).toHaveLength(1);
        expect(tournamentAgentsKept()).toBeLessThanOrEqual(9);
      }
      // A job naming more than the cap keeps all of its own while it plays.
      const many = Object.fromEntries(hashes.map((hash, k) => [`ck${k}`, hash]));
      expect(await processBlock(block(many))).toHaveLength(1);
      expect(tournamentAgentsKept()).toBe(11);
    } finally {
      await blobs.close();
    }
  }, 120_000);

  it('names TMPDIR when the worker cannot make its checkpoint cache there (it blamed --redis) [probe round 8]', async () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = '/nonexistent/kratzen';
    try {
      await expect(startWorkers({ connection: parseRedisUrl(url) })).rejects.toMatchObject({ field: 'TMPDIR', reason: expect.stringMatching(/^cannot make the checkpoint cache in \/nonexistent\/kratzen/) });
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  }, 30_000);

  it('says at once that an eval on Redis waits for workers (with none running it printed nothing); last: its jobs stay queued', () => {
    const run = spawnSync(process.execPath, [BIN, 'eval', '--agents', 'random,heuristic', '--hands', '8', '--seed', 'quiet', '--redis', url], { encoding: 'utf8', timeout: 4_000, killSignal: 'SIGKILL' });
    expect(run.stderr).toMatch(/^eval: 2 deals go to Redis at redis:\/\/127\.0\.0\.1:\d+; `kratzen worker --redis <url>` processes play them \(until one takes them, this waits\)$/m);
  }, 30_000);
});

suite('a Redis that loses its jobs or stops answering mid-run [probe round 6]', () => {
  const config: TournamentConfig = { agents: ['heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals: 4, seed: 'lost' };

  /** Resolves once the run's first job is in Redis (no worker runs, so it stays queued). */
  async function firstJobQueued(raw: Redis): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      if ((await raw.keys(`${KEY_PREFIX}:${TOURNAMENT_QUEUE}:*-0`)).length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('no job was queued');
  }

  it('fails an eval naming redis when Redis no longer holds its jobs (a restart without its data waited without end)', async () => {
    const { url, process: redis } = await startLocalRedis();
    const raw = new Redis(parseRedisUrl(url));
    try {
      const child = spawn(process.execPath, [BIN, 'eval', '--agents', 'random,heuristic', '--hands', '16', '--seed', 'flushed', '--redis', url, '--out', mkdtempSync(join(tmpdir(), 'kratzen-lost-'))], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stderr!.on('data', (d) => (output += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await firstJobQueued(raw);
      await raw.flushall();
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 20 s'), 20_000))]);
      child.kill('SIGKILL');
      expect(code).toBe(2);
      expect(lastJsonLine(output)).toMatchObject({ error: 'redis failed', field: 'redis', reason: expect.stringMatching(/^job \S+-0 is no longer in Redis \(restarted without its data, or flushed\?\)/) });
    } finally {
      raw.disconnect();
      redis.kill('SIGKILL');
    }
  }, 60_000);

  it('keeps a worker waiting through a Redis restart, each error line once (the two queues alternated a line each retry), then serving', async () => {
    const { url, process: redis } = await startLocalRedis();
    const port = url.split(':').at(-1)!;
    const worker = await startWorkerProcess(BIN, url);
    let stderr = '';
    worker.stderr!.on('data', (d) => (stderr += d));
    let again: ChildProcess | undefined;
    try {
      redis.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 4000));
      again = spawn('redis-server', ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const result = await runTournamentOnRedis(config, { connection: parseRedisUrl(url) });
      expect(result.deals).toHaveLength(config.deals);
      expect(worker.exitCode).toBe(null);
      const lines = stderr.split('\n').filter((line) => line.includes('worker error'));
      // Each line once (a reset of the open connection may come first); without the fix, 7 here.
      expect(lines.length, lines.join('\n')).toBe(new Set(lines).size);
      for (const queue of ['rollout', 'tournament']) expect(lines).toContain(`${queue} worker error: connect ECONNREFUSED 127.0.0.1:${port}`);
    } finally {
      worker.kill('SIGKILL');
      again?.kill('SIGKILL');
      redis.kill('SIGKILL');
    }
  }, 60_000);

  it('a blob written while Redis restarts waits for it: a training run stopped at an outage of a second (3 retries) [scale-out probe, session 37]', async () => {
    const { url, process: redis } = await startLocalRedis();
    const port = url.split(':').at(-1)!;
    const blobs = new BlobStore(parseRedisUrl(url));
    await blobs.connect();
    let again: ChildProcess | undefined;
    try {
      redis.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const written = blobs.put('written while Redis was away');
      const owned = blobs.putOwned(Buffer.from('a batch'), 'job-1');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      again = spawn('redis-server', ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      expect((await blobs.get(await written)).toString()).toBe('written while Redis was away');
      // A batch is taken once.
      const hash = await owned;
      expect((await blobs.take(hash, 'job-1')).toString()).toBe('a batch');
      await expect(blobs.take(hash, 'job-1')).rejects.toThrow(/not in Redis \(expired, taken already/);
      // A job id holds the run's seed, up to 256 characters of it: every job of such a run failed.
      const long = 'u'.repeat(300);
      expect((await blobs.take(await blobs.putOwned(Buffer.from('a long one'), long), long)).toString()).toBe('a long one');
    } finally {
      blobs.disconnect();
      again?.kill('SIGKILL');
      redis.kill('SIGKILL');
    }
  }, 30_000);

  it('fails a tournament naming redis when Redis stops answering while its jobs go in [probe]', async () => {
    // A paused Redis held addBulk, and the silence limit started only after it: no word for good.
    const { url, process: redis } = await startLocalRedis();
    const raw = new Redis(parseRedisUrl(url));
    raw.on('error', () => undefined);
    try {
      await raw.call('CLIENT', 'PAUSE', '30000', 'WRITE');
      const started = Date.now();
      const outcome = await runTournamentOnRedis(config, { connection: parseRedisUrl(url), silenceLimitMs: 1500 }).then(() => 'finished', (e: unknown) => e);
      expect(outcome).toMatchObject({ field: 'redis', reason: expect.stringMatching(/^Redis has not answered for 2 s \(adding the jobs\); the run stops/) });
      // The silence limit, then at most the withdrawal's and the close's graces (the pause lasts 30 s).
      expect(Date.now() - started).toBeLessThan(15_000);
      // A checkpoint's upload waited as long.
      const uploading = Date.now();
      const upload = await runTournamentOnRedis({ ...config, agents: [CHECKPOINT, 'random'] }, { connection: parseRedisUrl(url), silenceLimitMs: 1500 }).then(() => 'finished', (e: unknown) => e);
      expect(upload).toMatchObject({ error: 'redis failed', field: 'redis', reason: expect.stringMatching(/timed out/) });
      expect(Date.now() - uploading).toBeLessThan(10_000);
    } finally {
      raw.disconnect();
      redis.kill('SIGKILL');
    }
  }, 60_000);

  it('fails a tournament naming redis when Redis stops answering, and lets go of its connections', async () => {
    const { url, process: redis } = await startLocalRedis();
    const raw = new Redis(parseRedisUrl(url));
    raw.on('error', () => undefined);
    try {
      const running = runTournamentOnRedis(config, { connection: parseRedisUrl(url), silenceLimitMs: 2000 });
      const outcome = running.then(() => 'finished', (e: unknown) => e);
      await firstJobQueued(raw);
      redis.kill('SIGKILL');
      const settled = await Promise.race([outcome, new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 20 s'), 20_000))]);
      expect(settled).toMatchObject({ field: 'redis', reason: expect.stringMatching(/^Redis has not answered for 2 s; the run stops/) });
    } finally {
      raw.disconnect();
      redis.kill('SIGKILL');
    }
  }, 60_000);
});

suite('a coordinator that stops, jobs that fail for good, bad agents [probe round 12]', () => {
  const config: TournamentConfig = { agents: ['heuristic', 'random'], rules: { profile: 'didactic4', players: 4 }, deals: 64, seed: 'stopped' };
  let redis: ChildProcess;
  let url: string;
  let raw: Redis;
  let queue: Queue;
  /** The jobs no worker holds: waiting, delayed (a retry's backoff) or prioritized. */
  const waiting = async () => {
    const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };
  beforeAll(async () => {
    ({ url, process: redis } = await startLocalRedis());
    raw = new Redis(parseRedisUrl(url));
    queue = new Queue(TOURNAMENT_QUEUE, { connection: parseRedisUrl(url), prefix: KEY_PREFIX });
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    raw?.disconnect();
    redis?.kill('SIGKILL');
  });

  it('an eval stopped by Ctrl-C takes its queued jobs back and exits 130 (workers played them for nobody)', async () => {
    const child = spawn(process.execPath, [BIN, 'eval', '--agents', 'random,heuristic', '--hands', '100000', '--seed', 'ctrl-c', '--redis', url], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Interrupted once every job is in (while they go in, the test of that is the next one's).
    let queued = 0;
    for (let tries = 0; tries < 300; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = await waiting();
      if (now > 0 && now === queued) break;
      queued = now;
    }
    expect(queued).toBe(782);
    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000))]);
    child.kill('SIGKILL');
    expect(code).toBe(130);
    expect(await waiting()).toBe(0);
  }, 60_000);

  it('an interrupt while the jobs go in rejects with its reason and takes back those in already (an unhandled rejection ended the process)', async () => {
    const controller = new AbortController();
    const running = runTournamentOnRedis({ ...config, deals: 4000 }, { connection: parseRedisUrl(url), blockDeals: 1, signal: controller.signal });
    const outcome = running.then(() => 'finished', (e: unknown) => e);
    for (let tries = 0; tries < 300 && (await waiting()) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('interrupted by the test'));
    expect(await outcome).toMatchObject({ message: 'interrupted by the test' });
    expect(await waiting()).toBe(0);
  }, 60_000);

  it('an interrupt while many jobs go in takes them all back once they are in (a 5 s bound on the whole left 60,000 of 62,500 queued) [scale-out probe, session 37]', async () => {
    const controller = new AbortController();
    const deals = 40_000;
    const running = runTournamentOnRedis({ ...config, seed: 'many', deals }, { connection: parseRedisUrl(url), blockDeals: 1, signal: controller.signal });
    const outcome = running.then(() => 'finished', (e: unknown) => e);
    for (let tries = 0; tries < 600 && (await waiting()) < 1000; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('interrupted by the test'));
    expect(await outcome).toMatchObject({ message: 'interrupted by the test' });
    expect(await waiting()).toBe(0);
  }, 120_000);

  it('a training run on Redis stopped twice while it waits for workers takes its queued rollout jobs back and exits 130 (they stayed)', async () => {
    const rollouts = new Queue(ROLLOUT_QUEUE, { connection: parseRedisUrl(url), prefix: KEY_PREFIX });
    const runsDir = mkdtempSync(join(tmpdir(), 'kratzen-stopped-'));
    const configFile = join(runsDir, 'tiny.json');
    writeFileSync(configFile, JSON.stringify({ updates: 2, numEnvs: 8, rolloutSteps: 16, imitationUpdates: 0, evalEvery: 0, finalEvalDeals: 0, learnerThreads: 1, hiddenSizes: [16], runsDir }));
    const child = spawn(process.execPath, [BIN, 'train', '--config', configFile, '--actors', '2', '--redis', url], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const queued = async () => Object.values(await rollouts.getJobCounts('wait', 'delayed', 'prioritized')).reduce((a, b) => a + b, 0);
      for (let tries = 0; tries < 300 && (await queued()) < 2; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await queued()).toBe(2);
      child.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 300));
      child.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000))]);
      expect(code).toBe(130);
      expect(await queued()).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await rollouts.close();
    }
  }, 90_000);

  it('a job that fails for good fails the run naming redis and the job\'s error, and the run\'s other jobs are taken back', async () => {
    const failing = new Worker(TOURNAMENT_QUEUE, async () => {
      throw new Error('fake failure');
    }, { connection: parseRedisUrl(url), prefix: KEY_PREFIX, concurrency: 1 });
    try {
      const error = await runTournamentOnRedis(config, { connection: parseRedisUrl(url), blockDeals: 2 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ error: 'redis failed', field: 'redis', reason: expect.stringMatching(/^job \S+ failed after 5 attempts: fake failure; the run stops/) });
    } finally {
      await failing.close();
    }
    expect(await waiting()).toBe(0);
  }, 60_000);

  it('a job whose data in Redis is no JSON fails the run naming it (it cycled between active and stalled, the run waiting for good), the worker saying so in a line (it printed a stack trace)', async () => {
    const running = runTournamentOnRedis({ ...config, deals: 8, seed: 'garbled' }, { connection: parseRedisUrl(url), blockDeals: 4 });
    const outcome = running.then(() => 'finished', (e: unknown) => e);
    // The run's first job, waiting (no worker runs yet); earlier runs' records may share its suffix.
    let jobKey: string | undefined;
    for (let tries = 0; tries < 100 && !jobKey; tries++) {
      const first = (await queue.getWaiting(0, -1)).find((job) => job.id?.endsWith('-0'));
      jobKey = first && `${KEY_PREFIX}:${TOURNAMENT_QUEUE}:${first.id}`;
      if (!jobKey) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await raw.hset(jobKey!, 'data', '{not json');
    let stderr = '';
    const worker = await startWorkerProcess(BIN, url, { lockSeconds: 2, onStderr: (text) => (stderr += text) });
    try {
      const settled = await Promise.race([outcome, new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 30 s'), 30_000))]);
      expect(settled).toMatchObject({ error: 'redis failed', field: 'redis', reason: expect.stringMatching(/^job \S+-0 cannot be read from Redis/) });
      // The worker says what went wrong in a line, without BullMQ's stack trace (no listener heard
      // the error yet); its line may come through the pipe after the coordinator gave up.
      for (let waited = 0; waited < 10_000 && !/^tournament worker error: .*JSON/m.test(stderr); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stderr).toMatch(/^tournament worker error: .*JSON/m);
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      worker.kill('SIGKILL');
    }
    await raw.del(jobKey!);
  }, 60_000);

  it('a checkpoint that cannot play these rules fails before any job is queued, as a local eval does (jobs failed five times each)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'kratzen-empty-'));
    await expect(runTournamentOnRedis({ ...config, agents: [empty, 'random'] }, { connection: parseRedisUrl(url) })).rejects.toMatchObject({ code: 'missing-file' });
    const tavern = join(ROOT, 'checkpoints/pretrained/tavern5-p4/checkpoint');
    await expect(runTournamentOnRedis({ ...config, agents: [tavern, 'random'] }, { connection: parseRedisUrl(url) })).rejects.toMatchObject({ code: 'incompatible-rules' });
    expect(await waiting()).toBe(0);
  }, 60_000);

  it('a worker stopped while Redis is down exits after its grace with its cache removed (it never exited); a wrong password is named', async () => {
    const own = await startLocalRedis();
    // Its own temp folder, to see the checkpoint cache go.
    const temp = mkdtempSync(join(tmpdir(), 'kratzen-worker-tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    let worker: ChildProcess;
    try {
      worker = await startWorkerProcess(BIN, own.url);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(readdirSync(temp)).toHaveLength(1);
    let stderr = '';
    worker.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    own.process.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000))]);
    worker.kill('SIGKILL');
    expect(code).toBe(0);
    expect(stderr).toMatch(/Redis has not answered for 10 s: exiting now/);
    expect(readdirSync(temp)).toEqual([]);
    // A server that wants a password the URL does not give: "Connection is closed." sent operators to the network.
    const locked = await startLocalRedis();
    const admin = new Redis(parseRedisUrl(locked.url));
    try {
      await admin.config('SET', 'requirepass', 'sekret-password');
      const run = spawnSync(process.execPath, [BIN, 'worker', '--redis', locked.url.replace('redis://', 'redis://:wrong@')], { encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(2);
      expect(lastJsonLine(run.stderr)).toMatchObject({ field: 'redis', reason: expect.stringMatching(/WRONGPASS/) });
      // KRATZEN_REDIS_PASSWORD is the password of a URL without one (off the command line, where
      // ps shows it): sent, it is the wrong one here; without it, none is sent at all.
      const fromEnv = spawnSync(process.execPath, [BIN, 'worker', '--redis', locked.url], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, KRATZEN_REDIS_PASSWORD: 'wrong' } });
      expect(lastJsonLine(fromEnv.stderr)).toMatchObject({ field: 'redis', reason: expect.stringMatching(/WRONGPASS/) });
      const withoutEnv = spawnSync(process.execPath, [BIN, 'worker', '--redis', locked.url], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, KRATZEN_REDIS_PASSWORD: '' } });
      expect(withoutEnv.status).toBe(2);
      expect(lastJsonLine(withoutEnv.stderr).reason).not.toMatch(/WRONGPASS/);
    } finally {
      admin.disconnect();
      locked.process.kill('SIGKILL');
    }
  }, 90_000);
});
