// One client connection: its handshake, sessions, policies and limits, and the dispatch of its
// requests in the fixed order parse -> method -> handshake -> params -> handler (game legality).
// Requests run one after another, so replies leave in request order; a handler's failure
// becomes an error reply and never reaches `ws`.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { NUM_ACTIONS, actionToString, stateToRecord } from '../env/rules/index.js';
import { OBS_SIZE, observationSpec } from '../env/observation.js';
import { MAX_SEATS } from '../env/rules/index.js';
import type { BackendChoice } from '../agents/tfjs.js';
import { BridgeError, describeZodIssue, toErrorBody, type ErrorBody } from './errors.js';
import { METHODS, PROTOCOL_VERSION, REQUEST_SCHEMAS, type Method, type ParamsOf } from './protocol.js';
import { CsrEncoder, encodeBinary, encodeJson, type BatchView, type Encoding } from './codec.js';
import { createSession, type EnvSession } from './session.js';
import { tableView } from './table-view.js';
import { actWithPolicy, loadCheckpointAgent, loadPolicy, type ServedPolicy } from './policies.js';

/** What a connection needs from its server (resolved options and state). */
export interface ConnectionContext {
  token: string | undefined;
  maxSessionsPerConnection: number;
  maxEnvsPerConnection: number;
  maxPoliciesPerConnection: number;
  maxBufferedBytes: number;
  backend: BackendChoice;
  isShuttingDown(): boolean;
}

type Id = string | number;
type Reply = string | Buffer;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Constant-time token check: compares fixed-length digests, so neither content nor length leaks. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  return timingSafeEqual(digest(expected), digest(given ?? '')) && given !== undefined;
}

interface SessionEntry {
  session: EnvSession;
  encoding: Encoding;
  csr: CsrEncoder;
  finalCsr: CsrEncoder;
}

export class Connection {
  /** Set by the heartbeat, cleared by a pong. */
  alive = true;
  lastActivity = Date.now();
  private greeted = false;
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly policies = new Map<string, ServedPolicy>();
  private envsInUse = 0;
  private nextId = 1;
  private readonly queue: RawData[] = [];
  private busy = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly ws: WebSocket,
    private readonly context: ConnectionContext,
  ) {}

  /** Queues a frame; frames are handled strictly one after another. */
  receive(data: RawData): void {
    this.lastActivity = Date.now();
    this.queue.push(data);
    if (!this.busy) this.pump();
  }

  /** Resolves once no request is queued or running (for graceful shutdown). */
  idle(): Promise<void> {
    if (!this.busy && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Releases sessions and policies; later frames are dropped. */
  dispose(): void {
    this.closed = true;
    this.queue.length = 0;
    for (const entry of this.sessions.values()) entry.session.close();
    for (const served of this.policies.values()) served.agent.dispose?.();
    this.sessions.clear();
    this.policies.clear();
    this.envsInUse = 0;
  }

  private pump(): void {
    // Synchronous handlers (env.step) are answered without a promise per message.
    while (this.queue.length > 0 && !this.closed) {
      const outcome = this.handle(this.queue.shift()!);
      if (outcome instanceof Promise) {
        this.busy = true;
        outcome.then(
          (reply) => this.finishAsync(reply),
          (e) => this.finishAsync(JSON.stringify({ id: null, error: toErrorBody(e) })),
        );
        return;
      }
      this.send(outcome);
    }
    this.notifyIdle();
  }

  private finishAsync(reply: Reply): void {
    this.send(reply);
    this.busy = false;
    this.pump();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private send(reply: Reply): void {
    const ws = this.ws;
    if (this.closed || ws.readyState !== ws.OPEN) return;
    // A client that does not read its replies would make us buffer without bound.
    if (ws.bufferedAmount > this.context.maxBufferedBytes) {
      ws.close(1008, 'client does not read its replies');
      return;
    }
    ws.send(reply, (e) => {
      // A failed send means the socket is going away; its 'close' handler cleans up.
      void e;
    });
  }

  /** Parse, method, handshake, params; then the handler. Returns the reply (or its promise). */
  private handle(data: RawData): Reply | Promise<Reply> {
    let id: Id | null = null;
    try {
      let message: unknown;
      try {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        message = JSON.parse(utf8.decode(bytes));
      } catch (e) {
        return errorReply(null, { code: 'parse_error', message: `not valid UTF-8 JSON: ${(e as Error).message}` });
      }
      if (message === null || typeof message !== 'object' || Array.isArray(message)) {
        return errorReply(null, { code: 'invalid_request', message: 'a request is a JSON object {id, method, params}' });
      }
      const raw = message as Record<string, unknown>;
      if (!isId(raw.id)) {
        return errorReply(null, { code: 'invalid_request', message: 'id must be a string (at most 128 characters) or an integer', field: 'id' });
      }
      id = raw.id;
      if (typeof raw.method !== 'string') return errorReply(id, { code: 'invalid_request', message: 'method must be a string', field: 'method' });
      if (!(METHODS as string[]).includes(raw.method)) {
        return errorReply(id, {
          code: 'unknown_method',
          message: `unknown method "${raw.method.slice(0, 64)}" (known: ${METHODS.join(', ')})`,
          field: 'method',
        });
      }
      const method = raw.method as Method;
      if (!this.greeted && method !== 'hello') {
        return errorReply(id, { code: 'handshake_required', message: `send hello (protocolVersion ${PROTOCOL_VERSION}) before ${method}` });
      }
      if (this.context.isShuttingDown() && method !== 'hello' && method !== 'ping') {
        return errorReply(id, { code: 'shutting_down', message: 'the server is shutting down' });
      }
      const parsed = REQUEST_SCHEMAS[method].safeParse(raw);
      if (!parsed.success) {
        const { field, message: text } = describeZodIssue(parsed.error.issues[0]! as never);
        return errorReply(id, { code: field.startsWith('params') ? 'invalid_params' : 'invalid_request', message: text, field });
      }
      const outcome = this.run(id, method, (parsed.data as { params: unknown }).params);
      if (outcome instanceof Promise) {
        const requestId = id;
        return outcome.catch((e) => errorReply(requestId, toErrorBody(e)));
      }
      return outcome;
    } catch (e) {
      return errorReply(id, toErrorBody(e));
    }
  }

  private run(id: Id, method: Method, params: unknown): Reply | Promise<Reply> {
    switch (method) {
      case 'hello':
        return this.hello(id, params as ParamsOf<'hello'>);
      case 'ping':
        return ok(id, {});
      case 'spec':
        return ok(id, spec());
      case 'env.create':
        return this.create(id, params as ParamsOf<'env.create'>);
      case 'env.reset': {
        const p = params as ParamsOf<'env.reset'>;
        const entry = this.session(p.session);
        return entry.session.reset(p.seed).then((view) => encodeBatch(id, view, entry));
      }
      case 'env.step': {
        const p = params as ParamsOf<'env.step'>;
        const entry = this.session(p.session);
        return encodeBatch(id, entry.session.step(p.actions), entry);
      }
      case 'env.close': {
        const p = params as ParamsOf<'env.close'>;
        const entry = this.session(p.session);
        entry.session.close();
        this.sessions.delete(p.session);
        this.envsInUse -= entry.session.numEnvs;
        return ok(id, { session: p.session, closed: true });
      }
      case 'env.view': {
        const p = params as ParamsOf<'env.view'>;
        return ok(id, viewOf(this.session(p.session).session, p));
      }
      case 'env.record': {
        const p = params as ParamsOf<'env.record'>;
        return ok(id, recordOf(this.session(p.session).session, p));
      }
      case 'policy.load':
        return this.loadPolicy(id, params as ParamsOf<'policy.load'>);
      case 'policy.act': {
        const p = params as ParamsOf<'policy.act'>;
        return ok(id, actWithPolicy(this.policy(p.policy), p));
      }
      case 'policy.close': {
        const p = params as ParamsOf<'policy.close'>;
        this.policy(p.policy).agent.dispose?.();
        this.policies.delete(p.policy);
        return ok(id, { policy: p.policy, closed: true });
      }
    }
  }

  private hello(id: Id, params: ParamsOf<'hello'>): Reply {
    if (params.protocolVersion !== PROTOCOL_VERSION) {
      throw new BridgeError('unsupported_version', `protocol version ${params.protocolVersion} is not supported; this server speaks ${PROTOCOL_VERSION}`, 'params.protocolVersion', {
        supported: [PROTOCOL_VERSION],
      });
    }
    if (this.context.token !== undefined && !tokenMatches(this.context.token, params.token)) {
      // Refused peers are dropped, so a token cannot be guessed at connection speed.
      setImmediate(() => this.ws.close(1008, 'unauthorized'));
      throw new BridgeError('unauthorized', params.token === undefined ? 'this server requires a token' : 'wrong token', 'params.token');
    }
    this.greeted = true;
    return ok(id, {
      protocolVersion: PROTOCOL_VERSION,
      server: 'kratzen-gym',
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      obsVersion: observationSpec().version,
      limits: {
        maxSessions: this.context.maxSessionsPerConnection,
        maxEnvs: this.context.maxEnvsPerConnection,
        maxPolicies: this.context.maxPoliciesPerConnection,
      },
    });
  }

  private async create(id: Id, params: ParamsOf<'env.create'>): Promise<Reply> {
    if (this.sessions.size >= this.context.maxSessionsPerConnection) {
      throw new BridgeError('limit_exceeded', `at most ${this.context.maxSessionsPerConnection} sessions per connection; close one first`, undefined, { limit: 'maxSessions' });
    }
    if (this.envsInUse + params.numEnvs > this.context.maxEnvsPerConnection) {
      throw new BridgeError(
        'limit_exceeded',
        `params.numEnvs: ${params.numEnvs} envs would pass the limit of ${this.context.maxEnvsPerConnection} per connection (${this.envsInUse} in use)`,
        'params.numEnvs',
        { limit: 'maxEnvs' },
      );
    }
    const sessionId = `s${this.nextId++}`;
    const backend = this.context.backend;
    const session = await createSession({
      id: sessionId,
      mode: params.mode,
      numEnvs: params.numEnvs,
      config: params.config,
      learnerSeat: params.learnerSeat,
      opponents: params.opponents,
      loadCheckpoint: (dir, context) => loadCheckpointAgent(dir, { rules: context.rules, backend }),
    });
    if (this.closed) {
      session.close();
      throw new BridgeError('shutting_down', 'the connection closed');
    }
    this.sessions.set(sessionId, { session, encoding: params.encoding, csr: new CsrEncoder(), finalCsr: new CsrEncoder() });
    this.envsInUse += params.numEnvs;
    return ok(id, {
      session: sessionId,
      mode: session.mode,
      numEnvs: session.numEnvs,
      numPlayers: session.numPlayers,
      possibleAgents: Array.from({ length: session.numPlayers }, (_, s) => s),
      learnerSeat: session.mode === 'single' ? params.learnerSeat : null,
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      encoding: params.encoding,
      config: session.config,
      autoresetMode: 'same-step',
    });
  }

  private async loadPolicy(id: Id, params: ParamsOf<'policy.load'>): Promise<Reply> {
    if (this.policies.size >= this.context.maxPoliciesPerConnection) {
      throw new BridgeError('limit_exceeded', `at most ${this.context.maxPoliciesPerConnection} policies per connection; close one first`, undefined, { limit: 'maxPolicies' });
    }
    const policyId = `p${this.nextId++}`;
    const served = await loadPolicy(policyId, params, this.context.backend);
    if (this.closed) {
      served.agent.dispose?.();
      throw new BridgeError('shutting_down', 'the connection closed');
    }
    this.policies.set(policyId, served);
    return ok(id, served.info);
  }

  private session(sessionId: string): SessionEntry {
    const entry = this.sessions.get(sessionId);
    if (!entry) throw new BridgeError('unknown_session', `no session "${sessionId}" on this connection`, 'params.session');
    return entry;
  }

  private policy(policyId: string): ServedPolicy {
    const served = this.policies.get(policyId);
    if (!served) throw new BridgeError('unknown_policy', `no policy "${policyId}" on this connection`, 'params.policy');
    return served;
  }
}

function isId(value: unknown): value is Id {
  return (typeof value === 'string' && value.length <= 128) || (typeof value === 'number' && Number.isSafeInteger(value));
}

function ok(id: Id, result: unknown): string {
  return JSON.stringify({ id, result });
}

function errorReply(id: Id | null, error: ErrorBody): string {
  return JSON.stringify({ id, error });
}

/** env.view: single sessions see the learner seat only; multi sessions any seat. */
function viewOf(session: EnvSession, p: ParamsOf<'env.view'>): Record<string, unknown> {
  const state = session.tableState(p.env, p.episode);
  let seat: number;
  if (session.learnerSeat !== null) {
    if (p.seat !== undefined && p.seat !== session.learnerSeat) {
      throw new BridgeError('invalid_params', `params.seat: a single session shows the learner seat ${session.learnerSeat} only`, 'params.seat');
    }
    seat = session.learnerSeat;
  } else {
    seat = p.seat ?? Math.max(0, state.currentSeat);
    if (seat >= session.numPlayers) throw new BridgeError('invalid_params', `params.seat: must be a seat 0..${session.numPlayers - 1}`, 'params.seat');
  }
  return { session: session.id, env: p.env, episode: p.episode, ...tableView(state, seat) };
}

/** env.record: a single session's record stops at the last finished hand (hidden cards stay hidden). */
function recordOf(session: EnvSession, p: ParamsOf<'env.record'>): Record<string, unknown> {
  const state = session.tableState(p.env, p.episode);
  const record = stateToRecord(state);
  if (session.learnerSeat !== null && record.hands) record.hands = record.hands.slice(0, state.results.length);
  return { session: session.id, env: p.env, episode: p.episode, numHands: record.hands?.length ?? 0, complete: state.complete, record };
}

function encodeBatch(id: Id, view: BatchView, entry: SessionEntry): Reply {
  return entry.encoding === 'binary' ? encodeBinary(id, view, entry.csr, entry.finalCsr) : encodeJson(id, view);
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
