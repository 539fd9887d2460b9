// Where sessions and policies live and their requests run: one host on the main thread for
// light work (multi-agent sessions, network policies), and one in each worker of the heavy pool
// (sessions with bots on the server, search policies; see heavy-pool.ts). The connection has
// validated every request and counted its limits before a host sees it.

import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import type { BackendChoice } from '../agents/tfjs.js';
import type { AgentLimits } from '../agents/registry.js';
import { BridgeError, toErrorBody } from './errors.js';
import type { ParamsOf } from './protocol.js';
import { BatchEncoder, errorReply, ok, type Id, type Reply } from './replies.js';
import type { BatchView } from './codec.js';
import { createSession, drive, type EnvSession, type StepControl } from './session.js';
import { actWithPolicy, loadCheckpointAgent, loadPolicy, type ServedPolicy } from './policies.js';
import type { PolicyActParams } from './policy-rows.js';
import { resolveCheckpoint } from './checkpoint-roots.js';

export interface HostOptions {
  backend: BackendChoice;
  checkpointRoots: readonly string[];
  agentLimits: AgentLimits;
  seedSecret: string;
}

/** The methods a host runs; the rest (hello, ping, spec) are the connection's. */
export const HOSTED_METHODS = ['env.create', 'env.reset', 'env.step', 'env.close', 'env.view', 'env.record', 'env.observe', 'policy.load', 'policy.act', 'policy.close'] as const;
export type HostedMethod = (typeof HOSTED_METHODS)[number];

/** A request as the connection hands it on: `target` is the id of the session or policy it creates or names. */
export interface HostedRequest {
  connection: number;
  id: Id;
  method: HostedMethod;
  params: unknown;
  target: string;
}

export interface HostedReply {
  reply: Reply;
  /** False for an error reply (the connection then releases what it reserved for a create). */
  ok: boolean;
}

interface SessionEntry {
  session: EnvSession;
  encoder: BatchEncoder;
}

export class SessionHost {
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly policies = new Map<string, ServedPolicy>();
  /**
   * Connections with requests here and not disposed of; any other is gone. The gone ones were
   * remembered instead, the newest 4096: every closing socket disposes of itself in every host, so
   * 4096 quick connections made a host forget a client whose work was paused, and it ran on.
   * This set holds only connections still open.
   */
  private readonly live = new Set<number>();

  constructor(private readonly options: HostOptions) {}

  /** Runs one request; synchronous where the work is (env.step of a multi session stays promise-free). */
  handle(request: HostedRequest, control?: StepControl): HostedReply | Promise<HostedReply> {
    this.admit(request.connection);
    try {
      const outcome = this.run(request, control);
      if (outcome instanceof Promise) {
        return outcome.then(
          (reply) => ({ reply, ok: true }),
          (e) => ({ reply: errorReply(request.id, toErrorBody(e)), ok: false }),
        );
      }
      return { reply: outcome, ok: true };
    } catch (e) {
      return { reply: errorReply(request.id, toErrorBody(e)), ok: false };
    }
  }

  /**
   * A request of `connection` has come (before it waits its turn). A connection's requests all
   * come before its disposal (one channel, in order; numbers are never reused), so none admits
   * a connection already gone.
   */
  admit(connection: number): void {
    this.live.add(connection);
  }

  /** Whether the connection was disposed of (or never sent a request here): its work may stop. */
  isGone(connection: number): boolean {
    return !this.live.has(connection);
  }

  /** Releases everything of one connection, also what a request still running for it creates. */
  dispose(connection: number): void {
    this.live.delete(connection);
    const prefix = `${connection}/`;
    for (const [key, entry] of this.sessions) {
      if (!key.startsWith(prefix)) continue;
      entry.session.close();
      this.sessions.delete(key);
    }
    for (const [key, served] of this.policies) {
      if (!key.startsWith(prefix)) continue;
      served.agent.dispose?.();
      this.policies.delete(key);
    }
  }

  private run({ connection, id, method, params, target }: HostedRequest, control?: StepControl): Reply | Promise<Reply> {
    const key = `${connection}/${target}`;
    switch (method) {
      case 'env.create':
        return this.create(id, connection, key, target, params as ParamsOf<'env.create'>);
      case 'env.reset': {
        const p = params as ParamsOf<'env.reset'>;
        const entry = this.session(key, p.session);
        return entry.session.reset(p.seed, control).then((view) => drive(entry.encoder.encodeSteps(id, view), control));
      }
      case 'env.step': {
        const p = params as ParamsOf<'env.step'>;
        const entry = this.session(key, p.session);
        const encode = (view: BatchView) => drive(entry.encoder.encodeSteps(id, view), control);
        const view = entry.session.step(p.actions, control);
        return view instanceof Promise ? view.then(encode) : encode(view);
      }
      case 'env.close': {
        const p = params as ParamsOf<'env.close'>;
        this.session(key, p.session).session.close();
        this.sessions.delete(key);
        return ok(id, { session: p.session, closed: true });
      }
      case 'env.view': {
        const p = params as ParamsOf<'env.view'>;
        const session = this.session(key, p.session).session;
        const range = { from: p.fromHand, count: p.maxHands };
        return then(drive(session.view(p.env, p.episode, p.seat, range), control), (view) =>
          ok(id, { session: session.id, env: p.env, episode: p.episode, fromHand: p.fromHand, ...view }),
        );
      }
      case 'env.record': {
        const p = params as ParamsOf<'env.record'>;
        const session = this.session(key, p.session).session;
        const range = { from: p.fromHand, count: p.maxHands };
        return then(drive(session.record(p.env, p.episode, range), control), (page) =>
          ok(id, { session: session.id, env: p.env, episode: p.episode, fromHand: p.fromHand, ...page }),
        );
      }
      case 'env.observe': {
        const p = params as ParamsOf<'env.observe'>;
        const session = this.session(key, p.session).session;
        const { seat, observation, mask } = session.observe(p.env, p.seat, p.episode);
        return ok(id, { session: session.id, env: p.env, seat, observation: Array.from(observation), mask: Array.from(mask) });
      }
      case 'policy.load':
        return this.loadPolicy(id, connection, key, target, params as ParamsOf<'policy.load'>);
      case 'policy.act': {
        const p = params as PolicyActParams;
        return actWithPolicy(this.policy(key, p.policy), p, control).then((result) => ok(id, result));
      }
      case 'policy.close': {
        const p = params as ParamsOf<'policy.close'>;
        this.policy(key, p.policy).agent.dispose?.();
        this.policies.delete(key);
        return ok(id, { policy: p.policy, closed: true });
      }
    }
  }

  private async create(id: Id, connection: number, key: string, sessionId: string, params: ParamsOf<'env.create'>): Promise<Reply> {
    const { backend, checkpointRoots, agentLimits, seedSecret } = this.options;
    const session = await createSession({
      id: sessionId,
      mode: params.mode,
      numEnvs: params.numEnvs,
      config: params.config,
      learnerSeat: params.learnerSeat ?? 0,
      opponents: params.opponents ?? 'random',
      limits: agentLimits,
      seedSecret,
      finalObservationsOfEverySeat: params.finalObservations === 'every-seat',
      resolveCheckpoint: (spec, field) => resolveCheckpoint(spec, checkpointRoots, field),
      loadCheckpoint: (dir, context) => loadCheckpointAgent(dir, { rules: context.rules, backend, maxModelBytes: agentLimits.maxModelBytes }),
    });
    this.releaseIfGone(connection, () => session.close());
    this.sessions.set(key, { session, encoder: new BatchEncoder(params.encoding) });
    return ok(id, {
      session: sessionId,
      mode: session.mode,
      numEnvs: session.numEnvs,
      numPlayers: session.numPlayers,
      possibleAgents: Array.from({ length: session.numPlayers }, (_, s) => s),
      learnerSeat: session.mode === 'single' ? (params.learnerSeat ?? 0) : null,
      numActions: NUM_ACTIONS,
      observationSize: OBS_SIZE,
      encoding: params.encoding,
      finalObservations: params.finalObservations,
      config: session.config,
      autoresetMode: 'same-step',
    });
  }

  private async loadPolicy(id: Id, connection: number, key: string, policyId: string, params: ParamsOf<'policy.load'>): Promise<Reply> {
    const served = await loadPolicy(policyId, params, this.options);
    this.releaseIfGone(connection, () => served.agent.dispose?.());
    this.policies.set(key, served);
    return ok(id, served.info);
  }

  /** A client that went while its session or policy loaded keeps nothing: nothing may outlive it uncounted. */
  private releaseIfGone(connection: number, release: () => void): void {
    if (!this.isGone(connection)) return;
    release();
    throw new BridgeError('invalid_request', 'the client is gone');
  }

  private session(key: string, sessionId: string): SessionEntry {
    const entry = this.sessions.get(key);
    if (!entry) throw new BridgeError('unknown_session', `no session "${sessionId}" on this connection`, 'params.session');
    return entry;
  }

  private policy(key: string, policyId: string): ServedPolicy {
    const served = this.policies.get(key);
    if (!served) throw new BridgeError('unknown_policy', `no policy "${policyId}" on this connection`, 'params.policy');
    return served;
  }
}

function then<T, R>(value: T | Promise<T>, f: (value: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}
