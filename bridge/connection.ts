// One client connection: its handshake, limits and request queue, and the dispatch of each
// request in the fixed order parse -> method -> handshake -> params -> handler (game legality);
// reading a frame up to its method is request-reader.ts's, the size limits are limits.ts's.
// Requests run one after another, so replies leave in request order, and connections take
// turns by main-thread time used (fair-scheduler.ts); a handler's failure
// becomes an error reply and never reaches `ws`. Sessions and policies live in a host: the main
// thread's for light work, a heavy-pool worker's for bots and search (see host.ts).

import { createHash, timingSafeEqual } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import path from 'node:path';
import { MAX_SEATS, NUM_ACTIONS, actionToString } from '../env/rules/index.js';
import { OBS_SIZE, observationSpec } from '../env/observation.js';
import { isBuiltinAgent } from '../agents/registry.js';
import { BridgeError, toErrorBody } from './errors.js';
import { firstIssue } from '../env/rules/zod-issue.js';
import { PROTOCOL_VERSION, REQUEST_SCHEMAS, type ParamsOf } from './protocol.js';
import { errorReply, ok, type Id, type Reply } from './replies.js';
import type { HostedMethod, HostedReply, SessionHost } from './host.js';
import type { HeavyPool } from './heavy-pool.js';
import { checkPolicyRules } from './policies.js';
import { packPolicyAct, screenPolicyAct } from './policy-rows.js';
import { checkSessionConfig, slicedControl } from './session.js';
import { giveBackFrame, isLentFrame } from './frame-pool.js';
import { FairScheduler, SLICE_MS, type Servable } from './fair-scheduler.js';
import { CLOSE_TOO_BIG, MAX_FRAMES_BEFORE_HELLO, MAX_PRE_HELLO_BYTES, MAX_PRE_HELLO_FRAME_BYTES, MAX_QUEUED_BYTES, maxPolicyRowsFor } from './limits.js';
import { firstBadAction, readRequest, validEmptyParams, validStepParams } from './request-reader.js';

/** What a connection needs from its server (resolved options and state). */
export interface ConnectionContext {
  token: string | undefined;
  maxSessionsPerConnection: number;
  maxEnvsPerConnection: number;
  maxHandsPerConnection: number;
  /** Envs and hands over all connections (the server's memory for sessions). */
  maxTotalEnvs: number;
  maxTotalHands: number;
  /** What all connections' sessions hold now; each connection adds and takes back its own. */
  totals: { envs: number; hands: number };
  maxPoliciesPerConnection: number;
  /** Checkpoints loaded as opponents, over the connection's single sessions (each counts its distinct ones). */
  maxCheckpointOpponentsPerConnection: number;
  maxBufferedBytes: number;
  maxQueuedRequests: number;
  maxMessageBytes: number;
  /** How long a connection may go without a request before the server closes it (told in hello, so clients keep it alive in time). */
  idleTimeoutMs: number;
  /** How often the server pings (told in hello: a client that answers pings itself must look in time). */
  heartbeatIntervalMs: number;
  /** The main thread's host and the heavy pool. */
  host: SessionHost;
  pool: HeavyPool;
  isShuttingDown(): boolean;
  /** Whether one more client may complete hello (the connection limit). */
  admit(): boolean;
  /** Called after each reply is sent (the server then polls for the next request a while). */
  afterReply(): void;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Constant-time token check: compares fixed-length digests, so neither content nor length leaks. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  return timingSafeEqual(digest(expected), digest(given ?? '')) && given !== undefined;
}

/** Where a session or policy lives: the main host, or a worker of the pool. */
type Place = 'main' | number;

interface Owned {
  place: Place;
  numEnvs: number;
  /** numEnvs x the session's rules.hands: the hands its envs may keep. */
  hands: number;
  /** The checkpoints the session loads as opponents (countCheckpointOpponents). */
  checkpoints: number;
}

/**
 * The distinct checkpoints an env.create's opponents name: each spec that is no built-in agent,
 * spellings of one path (`ck`, `ck/`, `./ck/.`) counted once. Other spellings (an absolute path, a
 * link) count apart here and share one agent in the session (session.ts keys them by real path).
 * The entry at `learnerSeat` is ignored, as the session ignores it: it was counted, and a
 * checkpoint named there (never loaded) took one of the connection's places.
 */
export function countCheckpointOpponents(opponents: string | readonly (string | null)[] | undefined, learnerSeat = 0): number {
  const specs = opponents === undefined ? [] : typeof opponents === 'string' ? [opponents] : opponents.filter((_, s) => s !== learnerSeat);
  const paths = new Set<string>();
  for (const spec of specs) if (spec !== null && !isBuiltinAgent(spec)) paths.add(path.normalize(spec).replace(/(.)\/+$/, '$1'));
  return paths.size;
}

/**
 * Multi sessions up to this many envs run on the main thread: a request takes a few ms there
 * (about 40 ms for 1024 envs in binary or 256 in JSON here). Larger ones run in the pool, where
 * a 4096-env JSON reset (0.6 s) held up every other connection's requests.
 */
const MAIN_THREAD_MAX_ENVS = { binary: 1024, json: 256 } as const;
/**
 * Multi sessions whose envs play more hands than this run in the pool too: `env.view` and
 * `env.record` replay an env's whole session (about 0.1 ms a hand here; 4096 hands held every
 * other connection up for 0.3 s).
 */
const MAIN_THREAD_MAX_HANDS = 64;

function rawBytes(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data.byteLength;
}


/** Stands in the queue for a binary frame, which is refused when its turn comes (replies keep request order). */
const BINARY_FRAME: RawData = Buffer.alloc(0);
/**
 * Stands in the queue for a frame that arrived while MAX_QUEUED_BYTES were waiting: refused in
 * its turn, unread (so with id null). Pausing the socket instead held what the client sent in TCP
 * buffers, but hid its close frame too: a client that pipelined more than the bound of slow
 * requests and closed had them worked through for ~30 s (until ws gave up the closing handshake).
 */
const UNREAD_FRAME: RawData = Buffer.alloc(0);

/** How long a peer has to answer a close frame before its socket is destroyed. */
export const CLOSE_GRACE_MS = 1000;

/**
 * Closes with a close frame, and destroys the socket if the peer has not answered it within
 * CLOSE_GRACE_MS: `ws` alone waits 30 s, so refused or evicted sockets that never answer would
 * hold their descriptors long after the server stopped counting them. A socket already closing
 * has its timer (the idle sweep meets it again until it is gone).
 */
export function closeSoon(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === ws.CLOSING || ws.readyState === ws.CLOSED) return;
  ws.close(code, reason);
  terminateAfterGrace(ws);
}

/** Destroys `ws` unless it has closed within CLOSE_GRACE_MS (its close frame is on its way). */
export function terminateAfterGrace(ws: WebSocket): void {
  setTimeout(() => {
    if (ws.readyState !== ws.CLOSED) ws.terminate();
  }, CLOSE_GRACE_MS).unref();
}

let nextConnectionNumber = 1;

/** The main thread's turns, shared by all connections (exported for tests). */
export const scheduler = new FairScheduler();

export class Connection implements Servable {
  /**
   * Main-thread milliseconds used lately, and when (fair-scheduler.ts). A new connection starts
   * as if it had just used a slice: starting at 0, sixteen new connections whose first requests
   * were 256-env JSON steps (~20 ms each) all went before an established client's ping, which
   * waited 0.4-0.5 s. Its presumed use fades like any other (to a tenth within a third of a second).
   */
  usage = SLICE_MS;
  usageAt = performance.now();
  /** Set by the heartbeat, cleared by a pong. */
  alive = true;
  /** When the last request answered without an error arrived or ended (refused frames do not count). */
  lastActivity = Date.now();
  readonly number = nextConnectionNumber++;
  private greetedFlag = false;
  private bytesBeforeHello = 0;
  /** Frames received while not greeted (MAX_FRAMES_BEFORE_HELLO). */
  private framesBeforeHello = 0;
  private readonly owned = new Map<string, Owned>();
  private envsInUse = 0;
  private handsInUse = 0;
  private numSessions = 0;
  private numPolicies = 0;
  private checkpointOpponents = 0;
  private nextId = 1;
  private readonly queue: RawData[] = [];
  private busy = false;
  /** Bytes of the frames in `queue`; past MAX_QUEUED_BYTES further frames are not kept. */
  private queuedBytes = 0;
  private waitingForReader: NodeJS.Timeout | null = null;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly ws: WebSocket,
    private readonly context: ConnectionContext,
  ) {}

  /** Bytes of request frames read and not yet handled. */
  get queuedRequestBytes(): number {
    return this.queuedBytes;
  }

  /** True while a request of this connection is in progress (the idle sweep leaves it alone). */
  get working(): boolean {
    return this.busy;
  }

  /**
   * True once the connection is over: disposed, or its socket no longer open (the peer's close
   * frame puts it in CLOSING, where no reply can go out, though `ws` waits up to 30 s for TCP to
   * close before it says 'close').
   */
  get gone(): boolean {
    return this.closed || this.ws.readyState !== this.ws.OPEN;
  }

  /** True once `hello` succeeded. */
  get greeted(): boolean {
    return this.greetedFlag;
  }

  /**
   * Counts `bytes` more read from the socket before hello, closing the connection unread (1009)
   * past MAX_PRE_HELLO_BYTES; false once there is nothing left to count (greeted or closed).
   */
  countBytesBeforeHello(bytes: number): boolean {
    if (this.greetedFlag || this.closed) return false;
    this.bytesBeforeHello += bytes;
    if (this.bytesBeforeHello <= MAX_PRE_HELLO_BYTES) return true;
    this.dropUnread(CLOSE_TOO_BIG, `at most ${MAX_PRE_HELLO_BYTES} bytes before hello`);
    return false;
  }

  /** Queues a frame; frames are handled strictly one after another (binary ones are refused in turn). */
  receive(data: RawData, isBinary = false): void {
    if (this.closed) return;
    if (!this.greetedFlag && ++this.framesBeforeHello > MAX_FRAMES_BEFORE_HELLO) {
      this.dropUnread(1008, `at most ${MAX_FRAMES_BEFORE_HELLO} frames before hello`);
      return;
    }
    // Only the first frame can be a pending hello; later ones wait for it behind it in the queue.
    if (!this.busy && this.queue.length === 0 && this.refusedBeforeHello(data)) return;
    if (isBinary) data = BINARY_FRAME;
    // Past the byte bound a frame is not kept (256 queued frames of 1 MiB were 256 MiB).
    else if (this.queuedBytes > MAX_QUEUED_BYTES) data = UNREAD_FRAME;
    if (this.queue.length >= this.context.maxQueuedRequests) {
      this.drop(1008, 'too many requests queued');
      return;
    }
    this.queue.push(data);
    this.queuedBytes += rawBytes(data);
    if (this.busy) return;
    // Before hello a frame is handled at once rather than in turn: it is small (refusedBeforeHello)
    // and cheap (hello, or a refusal), and a hello left waiting for a turn while a flood of new
    // sockets is accepted was evicted with them as a silent socket (server.ts, accept).
    if (!this.greetedFlag) {
      if (this.serveOne()) scheduler.wake(this);
    } else scheduler.wake(this);
  }

  pong(): void {
    this.alive = true;
  }

  /** Resolves once no request is queued or running (for graceful shutdown). */
  idle(): Promise<void> {
    if (!this.busy && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Releases sessions and policies and stops their work; later frames are dropped. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    scheduler.forget(this);
    this.queue.length = 0;
    this.queuedBytes = 0;
    if (this.waitingForReader) clearTimeout(this.waitingForReader);
    this.context.host.dispose(this.number);
    this.context.pool.dispose(this.number);
    this.owned.clear();
    this.holdEnvs(-this.envsInUse, -this.handsInUse);
    this.notifyIdle();
  }

  /**
   * Whether `data` is too big for a connection without hello: then it is closed without decoding
   * the frame, and nothing more is read from its socket.
   */
  private refusedBeforeHello(data: RawData): boolean {
    if (this.greetedFlag || rawBytes(data) <= MAX_PRE_HELLO_FRAME_BYTES) return false;
    this.dropUnread(CLOSE_TOO_BIG, `at most ${MAX_PRE_HELLO_FRAME_BYTES} bytes a frame before hello`);
    return true;
  }

  private drop(code: number, reason: string): void {
    this.dispose();
    closeSoon(this.ws, code, reason);
  }

  /** Drops the connection and stops reading its socket, so what it sends meanwhile is not even decoded. */
  private dropUnread(code: number, reason: string): void {
    this.ws.pause();
    this.drop(code, reason);
  }

  /** Handles the next queued request (the scheduler calls it in turn); true if another can follow at once. */
  serveOne(): boolean {
    if (this.closed || this.busy || this.queue.length === 0) return false;
    // A peer that sent its close frame (and may never close TCP) gets no more work done.
    if (this.gone) {
      this.dispose();
      return false;
    }
    // A client that does not read its replies gets no more work done for it until it does.
    const buffered = this.ws.bufferedAmount;
    if (buffered > this.context.maxBufferedBytes) {
      this.drop(1008, 'client does not read its replies');
      return false;
    }
    if (buffered > this.context.maxBufferedBytes / 4) {
      this.busy = true;
      this.waitingForReader = setTimeout(() => {
        this.waitingForReader = null;
        this.busy = false;
        this.next();
      }, 20);
      return false;
    }
    const next = this.queue.shift()!;
    this.queuedBytes -= rawBytes(next);
    // Synchronous handlers (env.step of a multi session) are answered without a promise per message.
    const outcome = this.handle(next);
    if (outcome instanceof Promise) {
      this.busy = true;
      outcome.then(
        (reply) => this.finishAsync(reply),
        (e) => this.finishAsync(errorReply(null, toErrorBody(e))),
      );
      return false;
    }
    this.send(outcome);
    if (this.queue.length > 0 && !this.closed) return true;
    this.notifyIdle();
    return false;
  }

  private finishAsync(reply: Reply): void {
    this.send(reply);
    this.busy = false;
    this.next();
  }

  /** After a wait: back in turn if requests are queued, else idle. */
  private next(): void {
    if (this.closed) return;
    if (this.gone) return this.dispose();
    if (this.queue.length > 0) scheduler.wake(this);
    else this.notifyIdle();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private send(reply: Reply): void {
    const ws = this.ws;
    if (this.closed || ws.readyState !== ws.OPEN) return;
    // No callback for most replies: a failed send means the socket is going away, and its
    // 'close' handler cleans up; a callback per reply costs a write request of its own. A large
    // frame from the pool goes back to it once the socket has taken it, failed or not.
    if (typeof reply !== 'string' && isLentFrame(reply)) ws.send(reply, () => giveBackFrame(reply));
    else ws.send(reply);
    this.context.afterReply();
  }

  /** Parse, method, handshake, params; then the handler. Returns the reply (or its promise). */
  private handle(data: RawData): Reply | Promise<Reply> {
    let id: Id | null = null;
    try {
      // A frame queued behind a request refused for want of hello meets the bound here.
      if (this.refusedBeforeHello(data)) {
        return errorReply(null, { code: 'handshake_required', message: `send hello (protocolVersion ${PROTOCOL_VERSION}) first` });
      }
      if (data === UNREAD_FRAME) {
        return errorReply(null, {
          code: 'limit_exceeded',
          message: `not read: more than ${MAX_QUEUED_BYTES} bytes of this connection's requests were waiting; wait for replies before sending more`,
          details: { limit: 'maxQueuedBytes' },
        });
      }
      // Refused before its method is read, a frame may be a hello: refuseHello ends the connection then.
      if (data === BINARY_FRAME) {
        return this.refuseHello(errorReply(null, { code: 'invalid_request', message: 'a request is a text frame (JSON); binary frames are only sent by the server' }));
      }
      const request = readRequest(data, this.context.maxMessageBytes);
      if ('refused' in request) return this.refuseHello(errorReply(request.id, request.refused));
      id = request.id;
      const { raw, method } = request;
      if (!this.greetedFlag && method !== 'hello') {
        return errorReply(id, { code: 'handshake_required', message: `send hello (protocolVersion ${PROTOCOL_VERSION}) before ${method}` });
      }
      if (this.context.isShuttingDown() && method !== 'ping') {
        const reply = errorReply(id, { code: 'shutting_down', message: 'the server is shutting down' });
        // A hello then greeted a client only to refuse whatever it asked until the close.
        return this.greetedFlag ? reply : this.replyAndDrop(reply, 1001, 'server shutting down');
      }
      let params: unknown =
        method === 'env.step' ? validStepParams(raw) : method === 'ping' ? validEmptyParams(raw) : method === 'policy.act' ? packPolicyAct(raw) : null;
      if (params === null && method === 'policy.act') {
        // Rows it could not pack are screened a row at a time: the schema over 512 rows took
        // 15-40 ms of this thread per refused request.
        const screened = screenPolicyAct(raw);
        if (screened && 'invalid' in screened) return errorReply(id, screened.invalid);
        if (screened) params = screened.params;
      }
      if (params === null && method === 'env.step') {
        const invalid = firstBadAction(raw);
        if (invalid) return errorReply(id, invalid);
      }
      if (params === null) {
        const parsed = REQUEST_SCHEMAS[method].safeParse(raw);
        if (!parsed.success) {
          const { field, message: text } = firstIssue(parsed.error);
          const reply = errorReply(id, { code: field.startsWith('params') ? 'invalid_params' : 'invalid_request', message: text, field });
          return method === 'hello' ? this.refuseHello(reply) : reply;
        }
        params = (parsed.data as { params: unknown }).params;
      }
      switch (method) {
        case 'hello':
          return this.hello(id, params as ParamsOf<'hello'>);
        case 'ping':
          this.lastActivity = Date.now();
          return ok(id, {});
        case 'spec':
          this.lastActivity = Date.now();
          return ok(id, spec());
        default:
          return this.dispatch(id, method, params);
      }
    } catch (e) {
      return errorReply(id, toErrorBody(e));
    }
  }

  /**
   * A refused first hello (malformed, another protocol version, a wrong token) ends the
   * connection: nothing more is handled, also not frames already sent, so each connection gets
   * at most one guess. So does any frame refused before hello succeeds but a well-formed request
   * of another method (`handshake_required`): a frame refused before its method was read (its
   * id, a repeated key, too many keys, no JSON) may be a hello, and a correct hello sent after
   * one was accepted. A greeted client's second hello is only answered.
   */
  private refuseHello(reply: Reply): Reply {
    return this.greetedFlag ? reply : this.replyAndDrop(reply, 1008, 'hello refused');
  }

  /** Sends `reply`, then closes the connection; nothing queued behind it is handled. */
  private replyAndDrop(reply: Reply, code: number, reason: string): Reply {
    this.send(reply);
    this.drop(code, reason);
    return reply;
  }

  private hello(id: Id, params: ParamsOf<'hello'>): Reply {
    if (params.protocolVersion !== PROTOCOL_VERSION) {
      return this.refuseHello(
        errorReply(id, {
          code: 'unsupported_version',
          message: `protocol version ${params.protocolVersion} is not supported; this server speaks ${PROTOCOL_VERSION}`,
          field: 'params.protocolVersion',
          details: { supported: [PROTOCOL_VERSION] },
        }),
      );
    }
    if (this.context.token !== undefined && !tokenMatches(this.context.token, params.token)) {
      return this.refuseHello(errorReply(id, { code: 'unauthorized', message: params.token === undefined ? 'this server requires a token' : 'wrong token', field: 'params.token' }));
    }
    if (!this.greetedFlag && !this.context.admit()) {
      const reply = errorReply(id, { code: 'limit_exceeded', message: 'the server has as many clients as it takes; try again later', details: { limit: 'maxConnections' } });
      return this.replyAndDrop(reply, 1013, 'too many connections');
    }
    this.greetedFlag = true;
    this.lastActivity = Date.now();
    return ok(id, {
      protocolVersion: PROTOCOL_VERSION,
      server: 'kratzen-gym',
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      obsVersion: observationSpec().version,
      limits: {
        maxSessions: this.context.maxSessionsPerConnection,
        maxEnvs: this.context.maxEnvsPerConnection,
        maxHands: this.context.maxHandsPerConnection,
        maxPolicies: this.context.maxPoliciesPerConnection,
        maxCheckpointOpponents: this.context.maxCheckpointOpponentsPerConnection,
        maxMessageBytes: this.context.maxMessageBytes,
        maxQueuedRequests: this.context.maxQueuedRequests,
        maxPolicyRows: maxPolicyRowsFor(this.context.maxMessageBytes),
        idleTimeoutMs: this.context.idleTimeoutMs,
        heartbeatIntervalMs: this.context.heartbeatIntervalMs,
      },
    });
  }

  /** Session and policy methods: limits, then the host where the session or policy lives. */
  private dispatch(id: Id, method: HostedMethod, params: unknown): Reply | Promise<Reply> {
    let target: string;
    let place: Place;
    let onReply: (ok: boolean) => void = () => undefined;
    switch (method) {
      case 'env.create': {
        const p = params as ParamsOf<'env.create'>;
        // Checked here too, before any hand-over to a worker: a config that cannot be cloned to
        // one (nested 20,000 deep) still gets the error naming its field.
        const perEnvHands = checkSessionConfig(p.config).game.rules.hands;
        const hands = this.checkCreate(p.numEnvs, perEnvHands);
        const checkpoints = p.mode === 'single' ? countCheckpointOpponents(p.opponents, p.learnerSeat ?? 0) : 0;
        if (this.checkpointOpponents + checkpoints > this.context.maxCheckpointOpponentsPerConnection) {
          throw new BridgeError(
            'limit_exceeded',
            `params.opponents: ${checkpoints} checkpoint(s) would pass the limit of ${this.context.maxCheckpointOpponentsPerConnection} checkpoint opponents per connection (${this.checkpointOpponents} loaded by its sessions); close a session first`,
            'params.opponents',
            { limit: 'maxCheckpointOpponents' },
          );
        }
        target = `s${this.nextId++}`;
        // Bots play on the server in single sessions, and large batches take long per request:
        // that work goes to the pool, so the main thread stays free for everyone's light requests.
        const heavy = p.mode === 'single' || p.numEnvs > MAIN_THREAD_MAX_ENVS[p.encoding] || perEnvHands > MAIN_THREAD_MAX_HANDS;
        place = heavy ? this.context.pool.pick() : 'main';
        const created: Owned = { place, numEnvs: p.numEnvs, hands, checkpoints };
        this.holdSession(created, 1);
        this.owned.set(target, created);
        onReply = (succeeded) => {
          if (succeeded || this.closed) return;
          this.owned.delete(target);
          this.holdSession(created, -1);
        };
        break;
      }
      case 'policy.load': {
        const p = params as ParamsOf<'policy.load'>;
        checkPolicyRules(p.rules);
        if (this.numPolicies >= this.context.maxPoliciesPerConnection) {
          throw new BridgeError('limit_exceeded', `at most ${this.context.maxPoliciesPerConnection} policies per connection; close one first`, undefined, { limit: 'maxPolicies' });
        }
        target = `p${this.nextId++}`;
        // Every policy lives in the pool: 512 rows of policy.act, or a long record to replay,
        // take 100-200 ms even for the heuristic.
        place = this.context.pool.pick();
        this.numPolicies++;
        this.owned.set(target, { place, numEnvs: 0, hands: 0, checkpoints: 0 });
        onReply = (succeeded) => {
          if (succeeded || this.closed) return;
          this.owned.delete(target);
          this.numPolicies--;
        };
        break;
      }
      default: {
        const named = params as { session?: string; policy?: string };
        target = (named.session ?? named.policy)!;
        const owned = this.owned.get(target);
        if (!owned) {
          if (named.session !== undefined) throw new BridgeError('unknown_session', `no session "${target}" on this connection`, 'params.session');
          throw new BridgeError('unknown_policy', `no policy "${target}" on this connection`, 'params.policy');
        }
        place = owned.place;
        if (method === 'env.close' || method === 'policy.close') {
          onReply = (succeeded) => {
            if (!succeeded || !this.owned.delete(target)) return;
            if (method === 'env.close') this.holdSession(owned, -1);
            else this.numPolicies--;
          };
        }
      }
    }
    const request = { connection: this.number, id, method, params, target };
    const counted = onReply;
    // Only a request answered without an error counts against the idle timeout.
    onReply = (succeeded) => {
      if (succeeded) this.lastActivity = Date.now();
      counted(succeeded);
    };
    // A reset on the main thread gives way like the scheduler's slices: the first one of a large
    // session, before the JIT has compiled the deal, held every other client up for 0.15 s.
    // Its slices after the first count against this connection's use, as requests do.
    const control = place === 'main' && method === 'env.reset' ? slicedControl(SLICE_MS, this, () => this.gone) : undefined;
    const outcome: HostedReply | Promise<HostedReply> = place !== 'main' ? this.context.pool.run(place, request) : this.context.host.handle(request, control);
    if (outcome instanceof Promise) {
      return outcome.then(
        ({ reply, ok: succeeded }) => {
          control?.settle();
          onReply(succeeded);
          return reply;
        },
        (e: unknown) => {
          control?.settle();
          onReply(false);
          throw e;
        },
      );
    }
    onReply(outcome.ok);
    return outcome.reply;
  }

  /**
   * Checks the limits for a new session (sessions, then envs, then hands: a numEnvs over the env
   * limit is named as such); returns the hands its envs may keep (numEnvs x rules.hands).
   */
  private checkCreate(numEnvs: number, perEnv: number): number {
    const hands = numEnvs * perEnv;
    if (this.numSessions >= this.context.maxSessionsPerConnection) {
      throw new BridgeError('limit_exceeded', `at most ${this.context.maxSessionsPerConnection} sessions per connection; close one first`, undefined, { limit: 'maxSessions' });
    }
    if (this.envsInUse + numEnvs > this.context.maxEnvsPerConnection) {
      throw new BridgeError(
        'limit_exceeded',
        `params.numEnvs: ${numEnvs} envs would pass the limit of ${this.context.maxEnvsPerConnection} per connection (${this.envsInUse} in use)`,
        'params.numEnvs',
        { limit: 'maxEnvs' },
      );
    }
    if (this.handsInUse + hands > this.context.maxHandsPerConnection) {
      throw new BridgeError(
        'limit_exceeded',
        `params.config.rules.hands: ${numEnvs} envs of ${perEnv} hands would pass the limit of ${this.context.maxHandsPerConnection} hands (numEnvs x rules.hands) per connection (${this.handsInUse} in use)`,
        'params.config.rules.hands',
        { limit: 'maxHands' },
      );
    }
    const { totals, maxTotalEnvs, maxTotalHands } = this.context;
    if (totals.envs + numEnvs > maxTotalEnvs) {
      throw new BridgeError(
        'limit_exceeded',
        `params.numEnvs: ${numEnvs} envs would pass the server's limit of ${maxTotalEnvs} over all clients (${totals.envs} in use); try fewer, or later`,
        'params.numEnvs',
        { limit: 'maxTotalEnvs' },
      );
    }
    if (totals.hands + hands > maxTotalHands) {
      throw new BridgeError(
        'limit_exceeded',
        `params.config.rules.hands: ${numEnvs} envs of ${perEnv} hands would pass the server's limit of ${maxTotalHands} hands over all clients (${totals.hands} in use); try fewer, or later`,
        'params.config.rules.hands',
        { limit: 'maxTotalHands' },
      );
    }
    return hands;
  }

  /** Counts a session with its envs, hands and checkpoint opponents (`sign` -1: gives them back). */
  private holdSession(session: Owned, sign: 1 | -1): void {
    this.numSessions += sign;
    this.checkpointOpponents += sign * session.checkpoints;
    this.holdEnvs(sign * session.numEnvs, sign * session.hands);
  }

  /** Counts envs and hands (negative: gives them back) for this connection and the server. */
  private holdEnvs(envs: number, hands: number): void {
    this.envsInUse += envs;
    this.handsInUse += hands;
    this.context.totals.envs += envs;
    this.context.totals.hands += hands;
  }
}

let cachedSpec: Record<string, unknown> | null = null;
function spec(): Record<string, unknown> {
  cachedSpec ??= {
    protocolVersion: PROTOCOL_VERSION,
    observation: observationSpec(),
    numActions: NUM_ACTIONS,
    actions: Array.from({ length: NUM_ACTIONS }, (_, a) => actionToString(a)),
    maxSeats: MAX_SEATS,
  };
  return cachedSpec;
}
