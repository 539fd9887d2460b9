// Where the distributed layer meets Redis: the URL a user passes (`--redis redis://HOST:PORT`),
// the BullMQ queue names, and a content-addressed blob store for what workers must fetch
// (checkpoints), so no machine needs a shared filesystem.

import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { ValidationError } from '../../env/rules/index.js';

/** Whether `hash` has the form of a blob's key: 64 lowercase hex digits (sha-256). */
export function isBlobHash(hash: unknown): hash is string {
  return typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash);
}

/** Connection options for ioredis and BullMQ (which passes them to ioredis). */
export interface RedisConnection {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
  /** BullMQ workers require null: a blocked command must wait, not fail after N retries. */
  maxRetriesPerRequest: null;
}

/** Prefix of every key the project writes: queues, blobs. */
export const KEY_PREFIX = 'kratzen';
/** The BullMQ queue of tournament blocks (ranges of deals of one duplicate match). */
export const TOURNAMENT_QUEUE = 'tournament';
/** How a worker process hands its connection to its job threads (they share its environment), never in job data. */
export const CONNECTION_ENV = 'KRATZEN_WORKER_REDIS';
/** How a worker process hands its private checkpoint cache folder to its job threads. */
export const BLOB_CACHE_ENV = 'KRATZEN_WORKER_BLOB_CACHE';
/** The BullMQ queue of rollout blocks (a share of one PPO update's envs, with its weights). */
export const ROLLOUT_QUEUE = 'rollout';

/**
 * `text` with whatever precedes its last `@` (user and password, which may hold an `@` of its
 * own, as URL parsers split at the last one) masked, fit for an error message or a log.
 */
export function redactedUrl(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, (_all, scheme: string | undefined) => `${scheme ?? ''}***@`);
}

/** A percent-encoded part of a Redis URL, decoded; a malformed escape (`p%ZZ`) is refused without showing the part. */
function urlPart(encoded: string, what: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    // It escaped as a URIError with a stack trace (train, worker), or blamed --agents (eval).
    throw new ValidationError('invalid arguments', 'redis', `the --redis URL's ${what} holds a malformed percent-escape (write % as %25)`);
  }
}

/** Parses `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS); the error names `redis`. */
export function parseRedisUrl(text: string): RedisConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError('invalid arguments', 'redis', `--redis must be a URL like redis://127.0.0.1:6379, got "${redactedUrl(text)}"`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ValidationError('invalid arguments', 'redis', `--redis must use redis:// or rediss://, got "${url.protocol}"`);
  }
  const port = url.port ? Number(url.port) : 6379;
  const dbText = url.pathname && url.pathname !== '/' ? url.pathname.slice(1) : '0';
  // Digits only: 1e1 and 0x10 were databases 10 and 16.
  const db = /^\d{1,9}$/.test(dbText) ? Number(dbText) : Number.NaN;
  // redis:///run/redis.sock read as database "run/redis.sock" of no host: a socket path is not taken.
  if (!url.hostname) throw new ValidationError('invalid arguments', 'redis', `--redis needs a host (redis://HOST:PORT[/db]; Unix sockets are not supported), got "${redactedUrl(text)}"`);
  if (url.port === '0') throw new ValidationError('invalid arguments', 'redis', '--redis port must be 1 to 65535, got 0');
  if (!Number.isInteger(db) || db < 0) throw new ValidationError('invalid arguments', 'redis', `--redis database must be a whole number from 0 to 999999999, got "${url.pathname.slice(1, 65)}"`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    db,
    ...(url.username && { username: urlPart(url.username, 'user name') }),
    ...(url.password && { password: urlPart(url.password, 'password') }),
    ...(url.protocol === 'rediss:' && { tls: {} }),
    maxRetriesPerRequest: null,
  };
}

let threadBlobs: Promise<BlobStore> | null = null;

/** The blob store of a worker's job thread: one connection per thread, from CONNECTION_ENV. */
export function workerBlobStore(): Promise<BlobStore> {
  threadBlobs ??= (async () => {
    const blobs = new BlobStore(JSON.parse(process.env[CONNECTION_ENV] ?? '{}') as RedisConnection);
    await blobs.connect();
    return blobs;
  })();
  return threadBlobs;
}

/** Whether Redis at `connection` answers a PING within `ms` (one try, its own short-lived client). */
export async function answersWithin(connection: RedisConnection, ms: number): Promise<boolean> {
  const redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: ms });
  redis.on('error', () => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    return await Promise.race([redis.connect().then(() => redis.ping()).then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * How long Redis may leave a command or poll unanswered before a run fails: BullMQ's connection
 * retries without end, so a Redis that went down (or was paused) held the coordinator forever.
 */
export const REDIS_SILENCE_LIMIT_MS = 60_000;

/** How long a blob for one reader (putOwned) waits at most to be taken. */
export const OWNED_BLOB_TTL_SECONDS = 24 * 3600;

/** Blobs keyed by their SHA-256: put is idempotent, get verifies what it reads. */
export class BlobStore {
  private readonly redis: Redis;
  private lastError: Error | null = null;

  /**
   * A command unanswered for `silenceLimitMs` fails (an upload to a paused Redis waited for good);
   * one sent while Redis is away waits for it as long (it failed after 3 reconnection attempts,
   * about half a second: a Redis restarted in a second stopped a training run).
   */
  constructor(connection: RedisConnection, silenceLimitMs = REDIS_SILENCE_LIMIT_MS, private readonly ttlSeconds = 7 * 24 * 3600) {
    this.redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: null, commandTimeout: silenceLimitMs });
    // Reported by connect() and the commands that fail; the last is kept for connect's message.
    this.redis.on('error', (e: Error) => (this.lastError = e));
  }

  /** Connects, or rejects naming the server when it cannot be reached. */
  async connect(): Promise<void> {
    const { host, port } = this.redis.options;
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer in 5 s')), 5000).unref());
    try {
      await Promise.race([this.redis.connect(), timeout]);
      await this.redis.ping();
    } catch (e) {
      this.redis.disconnect();
      // A wrong password, or a port nobody listens on, came out as "Connection is closed.": the
      // server's refusal, or the socket's, says more.
      const refusal = this.lastError?.message.match(/^(WRONGPASS|NOAUTH|NOPERM)\b.*|^(connect|getaddrinfo) (ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND|EAI_AGAIN)\b.*/)?.[0];
      throw new ValidationError('unreachable server', 'redis', `cannot reach Redis at ${host}:${port}: ${refusal ?? (e as Error).message}`);
    }
    // ioredis reports a database it cannot select as an error event and goes on in database 0.
    const db = this.redis.options.db ?? 0;
    try {
      await this.redis.select(db);
    } catch (e) {
      this.redis.disconnect();
      throw new ValidationError('invalid arguments', 'redis', `Redis at ${host}:${port} has no database ${db}: ${(e as Error).message}`);
    }
  }

  private key(hash: string): string {
    return `${KEY_PREFIX}:blob:${hash}`;
  }

  /**
   * Stores `data` under its hash; returns the hash. A blob already there is kept only if it
   * matches: one damaged in Redis was kept (and its expiry refreshed) by every later run, each of
   * which then failed on every worker.
   */
  async put(data: Uint8Array | string): Promise<string> {
    const hash = sha256(data);
    const stored = await this.redis.getBuffer(this.key(hash));
    if (stored === null || sha256(stored) !== hash) await this.redis.set(this.key(hash), Buffer.from(data), 'EX', this.ttlSeconds);
    else await this.redis.expire(this.key(hash), this.ttlSeconds);
    return hash;
  }

  /**
   * Keeps each blob (`hash`, whose bytes are `data`) for another TTL, in one round trip, storing
   * again one Redis no longer has (expired, evicted) or holds at another length (damaged): cheaper
   * than put for blobs that are still there, which it does not download.
   */
  async refresh(blobs: readonly { hash: string; data: Uint8Array }[]): Promise<void> {
    if (blobs.length === 0) return;
    const check = this.redis.pipeline();
    for (const { hash } of blobs) check.expire(this.key(hash), this.ttlSeconds).strlen(this.key(hash));
    const replies = (await check.exec()) ?? [];
    const repair = this.redis.pipeline();
    let repairs = 0;
    blobs.forEach(({ hash, data }, k) => {
      const [[expireError, kept], [lengthError, length]] = [replies[2 * k]!, replies[2 * k + 1]!];
      if (expireError || lengthError) throw expireError ?? lengthError;
      if (kept === 0 || length !== data.byteLength) {
        repair.set(this.key(hash), Buffer.from(data), 'EX', this.ttlSeconds);
        repairs++;
      }
    });
    if (repairs > 0) for (const [error] of (await repair.exec()) ?? []) if (error) throw error;
  }

  /** The key of blob `hash` for `owner`: the owner hashed, as job ids (a run's seed in them) run long. */
  private ownedKey(hash: string, owner: string): string {
    if (!isBlobHash(hash)) throw new Error(`not a blob hash: "${String(hash).slice(0, 80)}"`);
    return `${KEY_PREFIX}:blob:${hash}:${sha256(owner)}`;
  }

  /**
   * Stores `data` for one reader that takes it once (a rollout batch for the trainer): under its
   * hash and `owner` (the job's id), so that two runs' identical blobs are two keys, for at most
   * `ttlSeconds` (a reader that stopped never takes it). Batches stored as shared blobs stayed
   * 7 days: a training run left about 19 MB in Redis per update.
   */
  async putOwned(data: Uint8Array, owner: string, ttlSeconds = OWNED_BLOB_TTL_SECONDS): Promise<string> {
    const hash = sha256(data);
    await this.redis.set(this.ownedKey(hash, owner), Buffer.from(data), 'EX', ttlSeconds);
    return hash;
  }

  /**
   * Reads and removes the blob putOwned stored for `owner`, checked against its hash. Two
   * commands, each safe to repeat: a read and removal in one transaction, sent again after a
   * reconnection that lost its reply, found the blob gone.
   */
  async take(hash: string, owner: string): Promise<Buffer> {
    const key = this.ownedKey(hash, owner);
    const data = await this.redis.getBuffer(key);
    if (!data) throw new Error(`blob ${hash} of ${owner} is not in Redis (expired, taken already, or another Redis?)`);
    if (sha256(data) !== hash) throw new Error(`blob ${hash} does not match its hash`);
    await this.redis.del(key);
    return data;
  }

  /**
   * The blob `hash` names, verified. With `size`, its length is asked first and a blob of another
   * length (`exact`) or a longer one (`max`) is refused unread: a job naming a 512 MB blob where a
   * manifest of a few KB belongs had it read whole before anything was checked.
   */
  async get(hash: string, size: { exact?: number; max?: number } = {}): Promise<Buffer> {
    if (!isBlobHash(hash)) throw new Error(`not a blob hash: "${hash}"`);
    if (size.exact !== undefined || size.max !== undefined) {
      const length = await this.redis.strlen(this.key(hash));
      if (length === 0 && size.exact !== 0) throw new Error(`blob ${hash} is not in Redis (expired, or another Redis?)`);
      if (size.exact !== undefined && length !== size.exact) throw new Error(`blob ${hash} has ${length} bytes, not ${size.exact}`);
      if (size.max !== undefined && length > size.max) throw new Error(`blob ${hash} has ${length} bytes, more than ${size.max}`);
    }
    const data = await this.redis.getBuffer(this.key(hash));
    if (!data) throw new Error(`blob ${hash} is not in Redis (expired, or another Redis?)`);
    if (sha256(data) !== hash) throw new Error(`blob ${hash} does not match its hash`);
    return data;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  disconnect(): void {
    this.redis.disconnect();
  }
}

/** A BullMQ queue, queue-events or BlobStore: what closeRedisClients ends. */
export interface RedisClient {
  close(): Promise<void>;
  disconnect(): Promise<void> | void;
}

/** How long closing waits for Redis to take QUIT before it drops the connections. */
const CLOSE_GRACE_MS = 2000;

/**
 * Closes `clients`, dropping their connections if Redis does not take the QUIT in time: with
 * Redis down the QUIT waits in the reconnect queue without end, and a failed run never exited.
 */
export async function closeRedisClients(clients: RedisClient[], graceMs = CLOSE_GRACE_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = Promise.all(clients.map((client) => client.close().catch(() => undefined))).then(() => true);
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  const inTime = await Promise.race([closed, late]);
  clearTimeout(timer);
  // Not awaited: a dropped connection that never reports its end would hold the caller.
  if (!inTime) for (const client of clients) void Promise.resolve().then(() => client.disconnect()).catch(() => undefined);
}

/** Errors a BullMQ client emits are left to the waiting code (runJobs' poll); unheard, BullMQ printed each reconnect attempt's. */
export function quietErrors<T extends { on(event: 'error', listener: (error: Error) => void): unknown }>(client: T): T {
  client.on('error', () => undefined);
  return client;
}
