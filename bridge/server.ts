// The bridge's WebSocket server: listening (loopback unless told otherwise, and never beyond it
// without a token), who may connect (Host and Origin, see http-guard.ts), connection limits with
// unauthenticated sockets counted apart, heartbeats and idle timeouts, the memory held for
// clients that do not read, and graceful shutdown. Requests are handled in connection.ts.

import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { BackendChoice } from '../agents/tfjs.js';
import { DEFAULT_AGENT_LIMITS, type AgentLimits } from '../agents/registry.js';
import { Connection, closeSoon, terminateAfterGrace } from './connection.js';
import { MIN_MESSAGE_BYTES, maxStepEnvsFor } from './limits.js';
import { HeavyPool } from './heavy-pool.js';
import { SessionHost, type HostOptions } from './host.js';
import { defaultCheckpointRoots } from './checkpoint-roots.js';
import { BAD_UPGRADE, HttpGuard, isBadRequest, isOrigin, isWildcard, networkTokenProblem } from './http-guard.js';
import { plainTextResponse, sendPlainText } from './http-replies.js';
import { loadWebAssets, serveWebAsset } from './web/assets.js';
import { BusyPoll } from './busy-poll.js';

export interface BridgeServerOptions {
  /**
   * Interface to bind; anything but loopback exposes the server to the network, and then a
   * token is required (`start` refuses otherwise). @default '127.0.0.1'
   */
  host?: string;
  /** TCP port; 0 picks a free one (see `port` after `start`). @default 8765 */
  port?: number;
  /** When set, `hello` must carry it (compared in constant time). @default undefined (no token) */
  token?: string;
  /** Further names clients may use in the `Host` header (the bound address and loopback always may). @default [] */
  allowHosts?: string[];
  /** Origins of other web pages allowed to open WebSockets (the server's own page always may). @default [] */
  allowOrigins?: string[];
  /** Largest accepted frame; a larger one closes the connection with code 1009. @default 1 MiB */
  maxMessageBytes?: number;
  /** Connections that completed `hello`. @default 64 */
  maxConnections?: number;
  /**
   * Sockets that have not completed `hello`, counted apart: when full, the oldest is dropped for
   * the newcomer, so silent sockets cannot lock out a client that says hello at once. A client
   * gets in if its hello comes before this many newcomers do: with 16, a flood of ~4,000 sockets
   * a second (2 cores) left ~4 ms and refused a token holder 2-5 times in 40; with 256, none in
   * 120 attempts. @default 256
   */
  maxPendingConnections?: number;
  /**
   * TCP connections that have not finished a WebSocket handshake (raw sockets, plain HTTP),
   * counted apart: when full, the oldest is destroyed for the newcomer, so half-sent requests
   * cannot use up the process's file descriptors. Each also gets `handshakeTimeoutMs`. @default 256
   */
  maxHandshakingSockets?: number;
  /** Time to send the HTTP request headers; a socket still sending them is destroyed. @default 10_000 */
  handshakeTimeoutMs?: number;
  /** A socket that has not completed `hello` by then is closed (code 4001). @default 5_000 */
  helloTimeoutMs?: number;
  /** Requests a connection may have queued (pipelined) before it is closed (code 1008). @default 256 */
  maxQueuedRequests?: number;
  /** @default 16 */
  maxSessionsPerConnection?: number;
  /** Total envs over all sessions of a connection. @default 4096 */
  maxEnvsPerConnection?: number;
  /**
   * Hands a connection's sessions may ask for, all together: numEnvs x `rules.hands`, summed. An
   * env keeps its session's finished hands (about 2 KB each) until the session ends, so without a
   * bound one client could grow the server's memory without end (`hands: 1e9`). The default is 8
   * hands for each of `maxEnvsPerConnection` envs (about 70 MB); a full table of 4096 six-player
   * envs (6 hands) fits. @default 32768
   */
  maxHandsPerConnection?: number;
  /**
   * Envs over all connections' sessions: an env holds about 3-12 KB (four to six players), so 64
   * clients of 4096 envs each held about 3 GB. @default 16384
   */
  maxTotalEnvs?: number;
  /** Hands over all connections, counted as maxHandsPerConnection is (about 2 KB each). @default 131072 */
  maxTotalHands?: number;
  /** @default 4 */
  maxPoliciesPerConnection?: number;
  /**
   * Checkpoints a connection's single sessions load as opponents, each session counting the
   * distinct ones it names (a model each, ~1-2 MB for the pretrained ones). @default 8
   */
  maxCheckpointOpponentsPerConnection?: number;
  /**
   * Replies queued for one client that does not read them: past a quarter of this, no further
   * request of that client is started until it reads; past all of it, it is dropped. @default 16 MiB
   */
  maxBufferedBytes?: number;
  /** The same over all connections: past it the connection holding most is dropped. @default 256 MiB */
  maxTotalBufferedBytes?: number;
  /**
   * A connection whose last request answered without an error is this old, with none in
   * progress, is closed (code 4000). Answering the
   * heartbeat's pings does not count (every WebSocket library does that by itself): a client
   * that wants to stay sends `ping` requests. @default 600_000
   */
  idleTimeoutMs?: number;
  /** Ping interval; a peer that missed the previous pong is terminated. @default 30_000 */
  heartbeatIntervalMs?: number;
  /** How long `close()` lets running requests finish before closing sockets. @default 5_000 */
  shutdownGraceMs?: number;
  /** TF.js backend for checkpoint policies. @default 'auto' */
  backend?: BackendChoice;
  /** Also serve the web table (bridge/web) over HTTP on the same port: GET / is the page. @default false */
  web?: boolean;
  /**
   * Folders policies and opponents may be loaded from; nothing outside them is read (resolved
   * through symlinks). @default the package's checkpoints/ and runs/ in the working directory
   */
  checkpointRoots?: string[];
  /** Caps on agent options a client may ask for (docs: pimc samples and time budget). */
  agentLimits?: Partial<AgentLimits>;
  /**
   * Mixed into the seeds of single-agent sessions, so a client cannot recompute the decks (the
   * bots' hands and the talon) from the seed it chose; the same secret gives the same
   * trajectories for the same seeds. @default random per server start
   */
  seedSecret?: string;
  /**
   * Worker threads for heavy work: single-agent sessions (their bots play on the server) and
   * search policies run there, so the main thread answers every other client meanwhile.
   * @default one less than the cores, at least 1, at most 4
   */
  heavyWorkers?: number;
  /**
   * After each reply the server keeps polling its sockets for this long instead of sleeping
   * (bridge/busy-poll.ts): a client stepping in a loop gets its next reply without waiting for
   * the server's thread to wake, which here takes longer than handling a one-env step. It polls
   * only while the machine has idle cores to spare (a polling thread holds a core, which a
   * client sharing the cores would miss); 0 turns it off. @default 200
   */
  spinMicroseconds?: number;
}

type ResolvedOptions = Required<Omit<BridgeServerOptions, 'token' | 'agentLimits' | 'seedSecret'>> & {
  token: string | undefined;
  agentLimits: AgentLimits;
  seedSecret: string;
};

/** The server's defaults (`kratzen serve --help` prints them from here). */
export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8765,
  allowHosts: [] as string[],
  allowOrigins: [] as string[],
  maxMessageBytes: 1 << 20,
  maxConnections: 64,
  maxPendingConnections: 256,
  maxHandshakingSockets: 256,
  handshakeTimeoutMs: 10_000,
  helloTimeoutMs: 5_000,
  maxQueuedRequests: 256,
  maxSessionsPerConnection: 16,
  maxEnvsPerConnection: 4096,
  maxHandsPerConnection: 32768,
  maxTotalEnvs: 16384,
  maxTotalHands: 131072,
  maxPoliciesPerConnection: 4,
  maxCheckpointOpponentsPerConnection: 8,
  maxBufferedBytes: 16 << 20,
  maxTotalBufferedBytes: 256 << 20,
  idleTimeoutMs: 600_000,
  heartbeatIntervalMs: 30_000,
  shutdownGraceMs: 5_000,
  backend: 'auto' as BackendChoice,
  web: false,
  heavyWorkers: Math.max(1, Math.min(4, availableParallelism() - 1)),
  spinMicroseconds: 200,
};

/** The body of a 431: the request line and headers passed Node's limit (16 KiB), say a long address. */
export const CLIENT_ERROR_TOO_LONG =
  'Request too long: the address and headers may hold at most 16 KiB. The web table takes its settings from the #fragment too (not sent to the server).\n';

/**
 * The most fragments a message may come in; past it `ws` closes the connection (1008). Each
 * fragment is a frame to read, however small, and no client fragments its requests this much.
 */
export const MAX_FRAGMENTS = 16_384;

/**
 * Plain HTTP requests one connection may make (the page is five files; a browser given
 * `Connection: close` opens another connection for more).
 */
export const MAX_HTTP_REQUESTS_PER_CONNECTION = 32;

const NOT_GET = 'a WebSocket upgrade is a GET request';

/**
 * Why `ws` would refuse this upgrade (RFC 6455 section 4.2.1), or null: refused here instead, in
 * the same plain text as every other refusal (ws answered with text/html and no nosniff).
 */
function malformedUpgrade(req: IncomingMessage): string | null {
  if (req.method !== 'GET') return NOT_GET;
  if (req.headers.upgrade?.toLowerCase() !== 'websocket') return BAD_UPGRADE;
  if (!/^[+/0-9A-Za-z]{22}==$/.test(req.headers['sec-websocket-key'] ?? '')) return BAD_UPGRADE;
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') return BAD_UPGRADE;
  return null;
}

/** Close codes beyond RFC 6455's: 4000 idle timeout, 4001 no hello in time. */
export const CLOSE_IDLE = 4000;
export const CLOSE_HELLO_TIMEOUT = 4001;

export class BridgeServer {
  readonly options: ResolvedOptions;
  private http: Server | null = null;
  private wss: WebSocketServer | null = null;
  private guard: HttpGuard | null = null;
  private host: SessionHost | null = null;
  private pool: HeavyPool | null = null;
  /** Every open socket, greeted or not, in the order they connected. */
  private readonly connections = new Map<WebSocket, Connection>();
  private timers: NodeJS.Timeout[] = [];
  /** Plain HTTP requests each connection has made (admitRequest). */
  private readonly httpRequests = new WeakMap<Socket, number>();
  /** TCP sockets that have not finished a WebSocket handshake, oldest first. */
  private handshaking = new Set<Socket>();
  private shuttingDown = false;
  private closing: Promise<void> | null = null;
  private readonly busyPoll: BusyPoll;
  /** Envs and hands held by all connections' sessions (connection.ts keeps it). */
  private readonly sessionTotals = { envs: 0, hands: 0 };

  constructor(options: BridgeServerOptions = {}) {
    const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    this.options = {
      ...SERVER_DEFAULTS,
      checkpointRoots: defaultCheckpointRoots(),
      ...defined,
      token: options.token,
      agentLimits: { ...DEFAULT_AGENT_LIMITS, ...Object.fromEntries(Object.entries(options.agentLimits ?? {}).filter(([, v]) => v !== undefined)) },
      seedSecret: options.seedSecret ?? randomBytes(32).toString('hex'),
    } as ResolvedOptions;
    const maxMessageBytes = this.options.maxMessageBytes;
    if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < MIN_MESSAGE_BYTES) {
      throw new RangeError(`maxMessageBytes must be an integer of at least ${MIN_MESSAGE_BYTES} (one policy.act row), got ${maxMessageBytes}`);
    }
    const notOrigin = this.options.allowOrigins.find((origin) => typeof origin !== 'string' || !isOrigin(origin));
    if (notOrigin !== undefined) throw new RangeError(`allowOrigins takes origins like https://example.org (a scheme, a host and maybe a port), got ${JSON.stringify(notOrigin)?.slice(0, 80)}`);
    this.busyPoll = new BusyPoll(this.options.spinMicroseconds);
  }

  /** The bound port (after `start`). */
  get port(): number {
    return (this.http?.address() as AddressInfo | null)?.port ?? -1;
  }

  /** Where a client on this machine reaches the server: a wildcard address names no server (`Host: 0.0.0.0` is refused), so loopback stands in. */
  get url(): string {
    // Every interface, however it was spelled (`0`, `::0`), is reached at its loopback address:
    // IPv4's, unless the address was IPv6's wildcard given as such (`::`, `::0`).
    const host = this.options.host;
    const address = (this.http?.address() as AddressInfo | null)?.address;
    const wildcard = isWildcard(host) || isWildcard(address ?? host);
    const name = !wildcard ? host : host !== '' && (address ?? host) === '::' ? '::1' : '127.0.0.1';
    return `ws://${name.includes(':') ? `[${name}]` : name}:${this.port}`;
  }

  /** Bytes of replies queued for clients that have not read them yet, over all connections. */
  get bufferedBytes(): number {
    let total = 0;
    for (const ws of this.connections.keys()) total += ws.bufferedAmount;
    return total;
  }

  /** Bytes of request frames read from all connections and not yet handled. */
  get queuedRequestBytes(): number {
    let total = 0;
    for (const connection of this.connections.values()) total += connection.queuedRequestBytes;
    return total;
  }

  /** Open sockets, greeted or not. */
  get numConnections(): number {
    return this.connections.size;
  }

  async start(): Promise<this> {
    const o = this.options;
    const exposed = networkTokenProblem(o.host, o.token);
    if (exposed) throw new Error(exposed);
    if (o.web) loadWebAssets();
    // Node checks these timeouts only every connectionsCheckingInterval (30 s by default).
    const checkEvery = Math.max(100, Math.min(1_000, o.handshakeTimeoutMs / 4));
    // requireHostHeader off: a request without Host gets the guard's plain-text refusal, not
    // Node's bare 400 (no Content-Type, no nosniff).
    const http = createServer({ requireHostHeader: false, headersTimeout: o.handshakeTimeoutMs, requestTimeout: 2 * o.handshakeTimeoutMs, connectionsCheckingInterval: checkEvery }, (req, res) => {
      // An exception thrown here would end the process, and every client's connection with it.
      try {
        if (!this.admitRequest(req, res)) return;
        const refused = this.guard!.checkRequest(req);
        if (refused) {
          sendPlainText(res, isBadRequest(refused) ? 400 : 403, refused);
          return;
        }
        if (o.web && serveWebAsset(req, res)) return;
        if (o.web && req.method !== 'GET' && req.method !== 'HEAD') {
          sendPlainText(res, 405, 'kratzen bridge: the web table takes GET and HEAD only', { allow: 'GET, HEAD' });
          return;
        }
        if (o.web) {
          sendPlainText(res, 404, 'kratzen bridge: no such page (the table is at /)');
          return;
        }
        sendPlainText(res, 426, 'kratzen bridge: connect with a WebSocket');
      } catch {
        if (res.headersSent) res.end();
        else sendPlainText(res, 500, 'kratzen bridge: internal error');
      }
    });
    // Every header reaches rawHeaders (Node keeps 2,000 entries by default): a second Host past
    // 1,000 filler headers went unseen by the repeated-header check. Headers stay within 16 KiB.
    http.maxHeadersCount = 0;
    this.http = http;
    // perMessageDeflate off: compressing observation frames costs more CPU than loopback saves.
    // UTF-8 checked by ws (its native isUtf8, ~0.02 ms a MiB here): a text frame or a close reason that is
    // not UTF-8 fails the connection with 1007 (RFC 6455 section 8.1) instead of being read or echoed back.
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: o.maxMessageBytes,
      maxFragments: MAX_FRAGMENTS,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.wss = wss;
    wss.on('error', () => undefined); // errors of the http server surface through listen/close
    http.on('connection', (socket: Socket) => this.admitSocket(socket));
    http.on('upgrade', (req, socket, head) => this.upgrade(req, socket as Socket, head));
    // A request Node cannot parse (garbage, a 100 KB header, an unknown method) gets a status
    // line before the socket closes, as HTTP clients and proxies expect.
    http.on('clientError', (e: NodeJS.ErrnoException, socket) => {
      if (socket.writable && e.code !== 'ECONNRESET' && e.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
        const status = e.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : e.code === 'HPE_INVALID_METHOD' ? '501 Not Implemented' : '400 Bad Request';
        // A browser shows the body: say what was wrong (a long address: settings can go in the #fragment).
        const why = e.code === 'HPE_HEADER_OVERFLOW' ? CLIENT_ERROR_TOO_LONG : `${status}\n`;
        socket.end(
          `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(why)}\r\n\r\n${why}`,
          () => socket.destroy(),
        );
        return;
      }
      socket.destroy();
    });
    // CONNECT (a proxy tunnel) has its own event: without a listener Node drops the socket unanswered.
    http.on('connect', (_req, socket: Socket) => {
      socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', () => socket.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(o.port, o.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    const boundAddress = (http.address() as AddressInfo).address;
    this.guard = new HttpGuard({ host: o.host, boundAddress, port: this.port, allowHosts: o.allowHosts, allowOrigins: o.allowOrigins });
    const hostOptions: HostOptions = { backend: o.backend, checkpointRoots: o.checkpointRoots, agentLimits: o.agentLimits, seedSecret: o.seedSecret };
    this.host = new SessionHost(hostOptions);
    this.pool = new HeavyPool(o.heavyWorkers, hostOptions);
    this.timers.push(setInterval(() => this.heartbeat(), o.heartbeatIntervalMs).unref());
    this.timers.push(setInterval(() => this.closeIdle(), Math.max(10, Math.min(o.idleTimeoutMs / 4, 10_000))).unref());
    this.timers.push(setInterval(() => this.boundBuffers(), 250).unref());
    this.timers.push(setInterval(() => this.dropClosing(), 250).unref());
    return this;
  }

  /**
   * Counts the plain HTTP requests of each connection: the last one allowed is answered with
   * `Connection: close` (a browser opens a new connection for its next), and any a client
   * pipelined behind it end the connection unanswered. Node hands a handler every request of a
   * socket read at once, and answers wait in memory for a client that does not read: eight
   * sockets that each wrote 20,000 requests for the page in one go delayed every WebSocket
   * client's ping by half a second and held 300 MB.
   */
  private admitRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    const count = (this.httpRequests.get(socket) ?? 0) + 1;
    this.httpRequests.set(socket, count);
    if (count > MAX_HTTP_REQUESTS_PER_CONNECTION) {
      socket.destroy();
      return false;
    }
    if (count === MAX_HTTP_REQUESTS_PER_CONNECTION) res.setHeader('connection', 'close');
    return true;
  }

  private admitSocket(socket: Socket): void {
    if (this.handshaking.size >= this.options.maxHandshakingSockets) {
      const [oldest] = this.handshaking;
      this.handshaking.delete(oldest!);
      oldest!.destroy();
    }
    this.handshaking.add(socket);
    socket.once('close', () => this.handshaking.delete(socket));
  }

  /** Sockets that have not finished a WebSocket handshake (raw TCP, plain HTTP). */
  get numHandshakingSockets(): number {
    return this.handshaking.size;
  }

  /** Host and Origin checks happen before the WebSocket exists: a refused page gets a bare 403. */
  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    this.handshaking.delete(socket);
    socket.on('error', () => socket.destroy());
    // Protocol version 8 (browsers of 2011, still accepted by ws) named the origin Sec-WebSocket-Origin.
    // Each of the two that is sent is checked: our own Origin beside a foreign Sec-WebSocket-Origin got in.
    const guard = this.guard!;
    const refused =
      guard.checkRequest(req) ?? guard.checkOrigin(req.headers.origin) ?? guard.checkOrigin(req.headers['sec-websocket-origin'] as string | undefined) ?? malformedUpgrade(req);
    if (refused) {
      const status = isBadRequest(refused) ? '400 Bad Request' : refused === NOT_GET ? '405 Method Not Allowed' : '403 Forbidden';
      // Destroyed once written: the socket is no longer counted among handshaking ones.
      socket.end(plainTextResponse(status, refused), () => socket.destroy());
      return;
    }
    this.wss!.handleUpgrade(req, socket, head, (ws) => this.accept(ws, socket));
  }

  private accept(ws: WebSocket, socket: Socket): void {
    // Registered first: an error event without a listener would crash the process. On a
    // protocol error (a frame past the limit: 1009) ws has sent a close frame saying why and
    // discards what the peer still sends: destroying the socket at once made a client still
    // writing a 2 MiB frame see 1006 (12 of 20 times, 32 MiB: 20 of 20). It goes after a grace.
    ws.on('error', () => {
      if (ws.readyState === ws.CLOSING) terminateAfterGrace(ws);
      else ws.terminate();
    });
    if (this.shuttingDown) {
      closeSoon(ws, 1001, 'server shutting down');
      return;
    }
    const o = this.options;
    const pending = [...this.connections].filter(([, c]) => !c.greeted);
    if (pending.length >= o.maxPendingConnections) {
      // The oldest silent socket makes room: a client that says hello at once always gets in.
      const [oldest, connection] = pending[0]!;
      connection.dispose();
      this.connections.delete(oldest);
      closeSoon(oldest, 1013, 'too many connections waiting for hello');
    }
    const connection = new Connection(ws, {
      token: o.token,
      maxSessionsPerConnection: o.maxSessionsPerConnection,
      // What hello advertises is what a connection can get: no more than one step request can
      // carry, nor than the server holds over all connections.
      maxEnvsPerConnection: Math.min(o.maxEnvsPerConnection, maxStepEnvsFor(o.maxMessageBytes), o.maxTotalEnvs),
      maxHandsPerConnection: Math.min(o.maxHandsPerConnection, o.maxTotalHands),
      maxTotalEnvs: o.maxTotalEnvs,
      maxTotalHands: o.maxTotalHands,
      totals: this.sessionTotals,
      maxPoliciesPerConnection: o.maxPoliciesPerConnection,
      maxCheckpointOpponentsPerConnection: o.maxCheckpointOpponentsPerConnection,
      maxBufferedBytes: o.maxBufferedBytes,
      maxQueuedRequests: o.maxQueuedRequests,
      maxMessageBytes: o.maxMessageBytes,
      idleTimeoutMs: o.idleTimeoutMs,
      heartbeatIntervalMs: o.heartbeatIntervalMs,
      host: this.host!,
      pool: this.pool!,
      isShuttingDown: () => this.shuttingDown,
      admit: () => this.numGreeted() < o.maxConnections,
      afterReply: () => this.busyPoll.extend(),
    });
    this.connections.set(ws, connection);
    const helloTimer = setTimeout(() => {
      if (!connection.greeted) closeSoon(ws, CLOSE_HELLO_TIMEOUT, 'no hello in time');
    }, o.helloTimeoutMs).unref();
    // Until hello the socket's bytes are counted as they arrive: ws hands a frame over whole.
    // Bytes that came with the upgrade request are among them: ws puts them back into the socket
    // (unshift), which reads them out again (counting them here as well halved the allowance).
    const countBytes = (chunk: Buffer) => {
      if (!connection.countBytesBeforeHello(chunk.length)) socket.off('data', countBytes);
    };
    socket.on('data', countBytes);
    ws.on('message', (data, isBinary) => connection.receive(data, isBinary));
    ws.on('pong', () => connection.pong());
    ws.on('close', () => {
      clearTimeout(helloTimer);
      connection.dispose();
      this.connections.delete(ws);
    });
  }

  private numGreeted(): number {
    let count = 0;
    for (const connection of this.connections.values()) if (connection.greeted) count++;
    return count;
  }

  private heartbeat(): void {
    for (const [ws, connection] of this.connections) {
      if (!connection.alive) {
        ws.terminate();
        continue;
      }
      connection.alive = false;
      ws.ping();
    }
  }

  /**
   * Idle means no request answered without an error for idleTimeoutMs, and none in progress. Pongs do not count (every WebSocket
   * library answers pings by itself, so a client that said hello and then nothing would hold its
   * slot for ever), nor do refused frames; a client that wants to stay while quiet sends `ping`.
   */
  private closeIdle(): void {
    const now = Date.now();
    for (const [ws, connection] of this.connections) {
      if (now - connection.lastActivity > this.options.idleTimeoutMs && !connection.working) closeSoon(ws, CLOSE_IDLE, 'idle timeout');
    }
  }

  /**
   * Lets go of connections whose socket is closing: a peer that sent its close frame and never
   * closes TCP (or stops reading) kept its envs, its slot and its queued work for the 30 s `ws`
   * waits; its connection is disposed now and its socket destroyed after CLOSE_GRACE_MS.
   */
  private dropClosing(): void {
    for (const [ws, connection] of this.connections) {
      if (ws.readyState !== ws.CLOSING) continue;
      connection.dispose();
      this.connections.delete(ws);
      terminateAfterGrace(ws);
    }
  }

  /** Bounds the replies held for clients that do not read: the worst offender goes first. */
  private boundBuffers(): void {
    let total = 0;
    let worst: WebSocket | null = null;
    for (const ws of this.connections.keys()) {
      total += ws.bufferedAmount;
      if (!worst || ws.bufferedAmount > worst.bufferedAmount) worst = ws;
    }
    if (worst && total > this.options.maxTotalBufferedBytes) {
      this.connections.get(worst)?.dispose();
      worst.terminate();
    }
  }

  /**
   * Graceful shutdown: stops accepting connections, refuses new work, lets running requests
   * finish (up to `shutdownGraceMs`), closes every socket with 1001 and releases everything.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.busyPoll.stop();
    for (const timer of this.timers) clearInterval(timer);
    const grace = this.options.shutdownGraceMs;
    const httpClosed = new Promise<void>((resolve) => (this.http ? this.http.close(() => resolve()) : resolve()));
    const deadline = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    await Promise.race([Promise.all([...this.connections.values()].map((c) => c.idle())), deadline(grace)]);
    const closed = [...this.connections.keys()].map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.close(1001, 'server shutting down');
        }),
    );
    await Promise.race([Promise.all(closed), deadline(Math.min(grace, 2_000))]);
    for (const [ws, connection] of this.connections) {
      ws.terminate();
      connection.dispose();
    }
    this.connections.clear();
    this.wss?.close();
    this.http?.closeAllConnections();
    await this.pool?.close();
    await httpClosed;
  }
}

/** Creates and starts a server. */
export function startBridgeServer(options: BridgeServerOptions = {}): Promise<BridgeServer> {
  return new BridgeServer(options).start();
}
