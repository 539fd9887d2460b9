// The bridge's WebSocket server: listening (loopback unless told otherwise), connection limits,
// heartbeats and idle timeouts, and graceful shutdown. Requests are handled in connection.ts.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { BackendChoice } from '../agents/tfjs.js';
import { Connection } from './connection.js';
import { serveWebAsset } from './web/assets.js';

export interface BridgeServerOptions {
  /** Interface to bind; anything but loopback exposes the server to the network. @default '127.0.0.1' */
  host?: string;
  /** TCP port; 0 picks a free one (see `port` after `start`). @default 8765 */
  port?: number;
  /** When set, `hello` must carry it (compared in constant time). @default undefined (no token) */
  token?: string;
  /** Largest accepted frame; a larger one closes the connection with code 1009. @default 1 MiB */
  maxMessageBytes?: number;
  /** @default 64 */
  maxConnections?: number;
  /** @default 16 */
  maxSessionsPerConnection?: number;
  /** Total envs over all sessions of a connection. @default 4096 */
  maxEnvsPerConnection?: number;
  /** @default 4 */
  maxPoliciesPerConnection?: number;
  /** Replies queued for a client that does not read them, before it is dropped. @default 256 MiB */
  maxBufferedBytes?: number;
  /** A connection without a request for this long is closed (code 4000). @default 600_000 */
  idleTimeoutMs?: number;
  /** Ping interval; a peer that missed the previous pong is terminated. @default 30_000 */
  heartbeatIntervalMs?: number;
  /** How long `close()` lets running requests finish before closing sockets. @default 5_000 */
  shutdownGraceMs?: number;
  /** TF.js backend for checkpoint policies. @default 'auto' */
  backend?: BackendChoice;
  /** Also serve the web table (bridge/web) over HTTP on the same port: GET / is the page. @default false */
  web?: boolean;
}

const DEFAULTS: Required<Omit<BridgeServerOptions, 'token'>> = {
  host: '127.0.0.1',
  port: 8765,
  maxMessageBytes: 1 << 20,
  maxConnections: 64,
  maxSessionsPerConnection: 16,
  maxEnvsPerConnection: 4096,
  maxPoliciesPerConnection: 4,
  maxBufferedBytes: 256 << 20,
  idleTimeoutMs: 600_000,
  heartbeatIntervalMs: 30_000,
  shutdownGraceMs: 5_000,
  backend: 'auto',
  web: false,
};

/** Close codes beyond RFC 6455's: 4000 idle timeout. */
export const CLOSE_IDLE = 4000;

export class BridgeServer {
  readonly options: Required<Omit<BridgeServerOptions, 'token'>> & { token: string | undefined };
  private http: Server | null = null;
  private wss: WebSocketServer | null = null;
  private readonly connections = new Map<WebSocket, Connection>();
  private timers: NodeJS.Timeout[] = [];
  private shuttingDown = false;
  private closing: Promise<void> | null = null;

  constructor(options: BridgeServerOptions = {}) {
    const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    this.options = { ...DEFAULTS, ...defined, token: options.token };
  }

  /** The bound port (after `start`). */
  get port(): number {
    return (this.http?.address() as AddressInfo | null)?.port ?? -1;
  }

  get url(): string {
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    return `ws://${host}:${this.port}`;
  }

  get numConnections(): number {
    return this.connections.size;
  }

  async start(): Promise<this> {
    const o = this.options;
    const http = createServer((req, res) => {
      if (o.web && serveWebAsset(req, res)) return;
      res.writeHead(426, { 'content-type': 'text/plain' }).end('kratzen bridge: connect with a WebSocket\n');
    });
    this.http = http;
    // perMessageDeflate off: compressing observation frames costs more CPU than loopback saves.
    const wss = new WebSocketServer({ server: http, maxPayload: o.maxMessageBytes, perMessageDeflate: false, clientTracking: false });
    this.wss = wss;
    wss.on('connection', (ws) => this.accept(ws));
    wss.on('error', () => undefined); // errors of the http server surface through listen/close
    http.on('clientError', (_e, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(o.port, o.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    this.timers.push(setInterval(() => this.heartbeat(), o.heartbeatIntervalMs).unref());
    this.timers.push(setInterval(() => this.closeIdle(), Math.max(10, Math.min(o.idleTimeoutMs / 4, 10_000))).unref());
    return this;
  }

  private accept(ws: WebSocket): void {
    // Registered first: an error event without a listener would crash the process.
    ws.on('error', () => ws.terminate());
    if (this.shuttingDown) {
      ws.close(1001, 'server shutting down');
      return;
    }
    if (this.connections.size >= this.options.maxConnections) {
      ws.close(1013, 'too many connections');
      return;
    }
    const connection = new Connection(ws, {
      token: this.options.token,
      maxSessionsPerConnection: this.options.maxSessionsPerConnection,
      maxEnvsPerConnection: this.options.maxEnvsPerConnection,
      maxPoliciesPerConnection: this.options.maxPoliciesPerConnection,
      maxBufferedBytes: this.options.maxBufferedBytes,
      backend: this.options.backend,
      isShuttingDown: () => this.shuttingDown,
    });
    this.connections.set(ws, connection);
    ws.on('message', (data) => connection.receive(data));
    ws.on('pong', () => {
      connection.alive = true;
    });
    ws.on('close', () => {
      connection.dispose();
      this.connections.delete(ws);
    });
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

  private closeIdle(): void {
    const now = Date.now();
    for (const [ws, connection] of this.connections) {
      if (now - connection.lastActivity > this.options.idleTimeoutMs) ws.close(CLOSE_IDLE, 'idle timeout');
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
    await httpClosed;
  }
}

/** Creates and starts a server. */
export function startBridgeServer(options: BridgeServerOptions = {}): Promise<BridgeServer> {
  return new BridgeServer(options).start();
}
