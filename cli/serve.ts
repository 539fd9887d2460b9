#!/usr/bin/env node
// `kratzen serve [--host 127.0.0.1] [--port 8765] [--token T]`: runs the WebSocket bridge until
// SIGINT/SIGTERM/SIGHUP, then shuts down gracefully. Also runnable alone: `node dist/cli/serve.js ...`.
// Prints one JSON line when listening: {"event":"listening","url","host","port","protocolVersion"},
// and "web" with --web.

import { realpathSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_CHOICES, selectBackend, type BackendChoice } from '../agents/tfjs.js';
import { PROTOCOL_VERSION } from '../bridge/protocol.js';
import { BridgeServer, SERVER_DEFAULTS } from '../bridge/server.js';
import { DEFAULT_AGENT_LIMITS } from '../agents/registry.js';
import { MIN_MESSAGE_BYTES } from '../bridge/limits.js';
import { defaultCheckpointRoots } from '../bridge/checkpoint-roots.js';
import { isHostName, isOrigin, networkTokenProblem } from '../bridge/http-guard.js';
import { writeStdout } from './output.js';
import { wantsHelp } from './help.js';
import { parseArgsErrorField, parseFlags } from './flags.js';
import { STOP_SIGNALS } from './signals.js';

export const SERVE_USAGE = `kratzen serve [options]: the WebSocket bridge (protocol: bridge/protocol.ts, docs/bridge.md)

  --host H                 interface to bind (default ${SERVER_DEFAULTS.host}); any other than loopback needs --token
                           (16+ characters, 8+ different ones)
  --port P                 TCP port, 0 for any free one (default ${SERVER_DEFAULTS.port})
  --token T                clients must send it in hello (not empty); also KRATZEN_BRIDGE_TOKEN (not
                           visible in ps)
  --web                    also serve the web table at http://<host>:<port>/
  --allow-origin O         a web page origin (https://example.org) that may open WebSockets; repeatable.
                           Without it only the server's own page may; clients that send no Origin always may
  --allow-host N           a further name clients may use in the Host header (default: the bound address,
                           localhost, 127.0.0.1 and [::1]); repeatable
  --checkpoint-root DIR    a folder policies and opponents may be loaded from, besides the package's
                           checkpoints/ and ./runs; repeatable
  --max-connections N      clients that completed hello (default ${SERVER_DEFAULTS.maxConnections})
  --max-pending N          sockets still waiting for hello, counted apart; when full the oldest is dropped (${SERVER_DEFAULTS.maxPendingConnections})
  --hello-timeout-ms MS    a socket without hello by then is closed, code 4001 (${SERVER_DEFAULTS.helloTimeoutMs})
  --max-handshaking N      TCP connections that have not finished a WebSocket handshake (raw, plain
                           HTTP), counted apart; when full the oldest is destroyed (${SERVER_DEFAULTS.maxHandshakingSockets})
  --handshake-timeout-ms MS  time to send the HTTP request headers (${SERVER_DEFAULTS.handshakeTimeoutMs})
  --max-sessions N         sessions per connection (${SERVER_DEFAULTS.maxSessionsPerConnection})
  --max-envs N             envs over all sessions of a connection (${SERVER_DEFAULTS.maxEnvsPerConnection}; at most --max-total-envs)
  --max-hands N            hands over all sessions of a connection, numEnvs x rules.hands summed (${SERVER_DEFAULTS.maxHandsPerConnection};
                           at most --max-total-hands): an env keeps its session's finished hands until
                           the session ends
  --max-total-envs N       envs over all connections' sessions (${SERVER_DEFAULTS.maxTotalEnvs}; an env holds 3-12 KB)
  --max-total-hands N      hands over all connections' sessions, counted as --max-hands is (${SERVER_DEFAULTS.maxTotalHands})
  --max-message-bytes B    largest request frame (${SERVER_DEFAULTS.maxMessageBytes}; at least ${MIN_MESSAGE_BYTES}, one policy.act row at its longest)
  --max-queued N           pipelined requests one connection may have waiting (${SERVER_DEFAULTS.maxQueuedRequests})
  --max-buffered-bytes B   replies held for one client that does not read them (${SERVER_DEFAULTS.maxBufferedBytes}); past a
                           quarter of it no more of its requests run until it reads
  --max-pimc-samples N     largest pimc samples a client may ask for (${DEFAULT_AGENT_LIMITS.maxPimcSamples})
  --max-pimc-time-ms MS    largest pimc timeBudgetMs a client may ask for (${DEFAULT_AGENT_LIMITS.maxPimcTimeBudgetMs})
  --max-pimc-actions N     most actions a pimc decision simulates (by samples or by time), after its
                           first sample (${DEFAULT_AGENT_LIMITS.maxPimcSimulatedActions}, about 0.05 s here; work, not time, so seeded games
                           stay reproducible)
  --max-model-bytes B      largest policy network a checkpoint may hold, in bytes of weights
                           (${DEFAULT_AGENT_LIMITS.maxModelBytes}; the pretrained ones hold about 0.36 MB)
  --heavy-workers N        worker threads for bots and search, 1..64 (default: cores - 1,
                           at least 1 and at most 4)
  --spin-us US             after each reply, poll for the next request this long instead of
                           sleeping, while the machine has idle cores (${SERVER_DEFAULTS.spinMicroseconds}; 0 = off)
  --idle-timeout-ms MS     close a connection with no request answered without an error for this long
                           (${SERVER_DEFAULTS.idleTimeoutMs}; pongs and refused requests do not count: a quiet client keeps its
                           place with ping)
  --heartbeat-interval-ms MS  ping every client this often; one that missed the last pong is dropped (${SERVER_DEFAULTS.heartbeatIntervalMs})
  --seed-secret S          mixed into single-agent seeds so clients cannot deal the bots' hands; the same
                           secret gives the same games for the same seed, seat and rules (default:
                           random per start; not empty);
                           also KRATZEN_SEED_SECRET
  --backend B              TF.js backend for checkpoints: ${BACKEND_CHOICES.join('|')} (${SERVER_DEFAULTS.backend})
Prints one JSON line when listening: {"event":"listening","url","host","port","protocolVersion"}
(and "web", the table's address, with --web).
`;

function fail(field: string, reason: string): never {
  process.stderr.write(`${JSON.stringify({ error: 'invalid arguments', field, reason })}\n`);
  process.exit(2);
}

/** Timers longer than 2^31 - 1 ms do not wait: Node fires them after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

function intFlag(value: string | undefined, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) fail(field, `--${field} must be an integer ${min}..${max}, got "${value}"`);
  return Number(value);
}

export async function runServe(args: string[]): Promise<BridgeServer> {
  // As for every verb: --help anywhere before `--` is help, also after a flag that takes a value.
  if (wantsHelp(args)) {
    writeStdout(SERVE_USAGE);
    process.exit(0);
  }
  let values;
  try {
    ({ values } = parseFlags({
      args,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'max-envs': { type: 'string' },
        'max-hands': { type: 'string' },
        'max-total-envs': { type: 'string' },
        'max-total-hands': { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-message-bytes': { type: 'string' },
        'idle-timeout-ms': { type: 'string' },
        'heartbeat-interval-ms': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        'allow-host': { type: 'string', multiple: true },
        'checkpoint-root': { type: 'string', multiple: true },
        'max-connections': { type: 'string' },
        'max-pending': { type: 'string' },
        'hello-timeout-ms': { type: 'string' },
        'max-handshaking': { type: 'string' },
        'handshake-timeout-ms': { type: 'string' },
        'max-queued': { type: 'string' },
        'max-buffered-bytes': { type: 'string' },
        'max-pimc-samples': { type: 'string' },
        'max-pimc-time-ms': { type: 'string' },
        'max-pimc-actions': { type: 'string' },
        'max-model-bytes': { type: 'string' },
        'heavy-workers': { type: 'string' },
        'spin-us': { type: 'string' },
        'seed-secret': { type: 'string' },
        backend: { type: 'string' },
        web: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    fail(parseArgsErrorField(e), (e as Error).message);
  }
  if (values.help) {
    writeStdout(SERVE_USAGE);
    process.exit(0);
  }
  if (values.backend !== undefined && !BACKEND_CHOICES.includes(values.backend as BackendChoice)) {
    fail('backend', `--backend must be one of ${BACKEND_CHOICES.join(', ')}`);
  }
  // Given empty (say, an unset variable in --token "$TOKEN"), it turned the token off, and also
  // overrode KRATZEN_BRIDGE_TOKEN. (An empty KRATZEN_BRIDGE_TOKEN reads as unset, as shells do.)
  if (values.token === '') fail('token', '--token must not be empty (leave it out to run without a token)');
  const token = values.token ?? (process.env.KRATZEN_BRIDGE_TOKEN || undefined);
  const host = values.host ?? '127.0.0.1';
  // Checked before the token: 'not a host' was told to bring a token, then failed to resolve.
  if (isIP(host) === 0 && !isHostName(host)) fail('host', `--host takes an IP address or a host name like example.org, got "${host.slice(0, 200)}"`);
  const exposed = networkTokenProblem(host, token);
  if (exposed) fail('token', exposed);
  // Given empty, it was dropped for a random one without a word: whoever asked for the same
  // games on every start got others. (An empty KRATZEN_SEED_SECRET reads as unset, as shells do.)
  if (values['seed-secret'] === '') fail('seed-secret', '--seed-secret must not be empty (leave it out for a random secret per start)');
  const seedSecret = values['seed-secret'] ?? (process.env.KRATZEN_SEED_SECRET || undefined);
  for (const origin of values['allow-origin'] ?? []) {
    if (!isOrigin(origin)) fail('allow-origin', `--allow-origin takes an origin like https://example.org (a scheme, a host and maybe a port; no user, path, query or fragment), got "${origin}"`);
  }
  for (const name of values['allow-host'] ?? []) {
    if (!isHostName(name) && !/^\[[0-9A-Fa-f:.]+\]$/.test(name)) fail('allow-host', `--allow-host takes a host name like example.org, got "${name}"`);
  }
  for (const root of values['checkpoint-root'] ?? []) {
    let isFolder = false;
    try {
      isFolder = statSync(root).isDirectory();
    } catch {
      // reported below
    }
    if (!isFolder) fail('checkpoint-root', `--checkpoint-root must be an existing folder, got "${root}"`);
  }
  // Loaded before listening, as train and exploit do: a backend that cannot load (tensorflow
  // without @tensorflow/tfjs-node) listened, and every checkpoint a client asked for failed,
  // blamed on the client's params.
  const backend = values.backend as BackendChoice | undefined;
  if (backend !== undefined && backend !== 'auto') {
    await selectBackend(backend).catch((e: Error) => fail('backend', `--backend ${backend} cannot be used here: ${e.message}`));
  }
  const server = new BridgeServer({
    host,
    port: intFlag(values.port, 'port', 0, 65535),
    token,
    allowOrigins: values['allow-origin'],
    allowHosts: values['allow-host'],
    checkpointRoots: values['checkpoint-root'] ? [...defaultCheckpointRoots(), ...values['checkpoint-root'].map((r) => path.resolve(r))] : undefined,
    maxConnections: intFlag(values['max-connections'], 'max-connections', 1, 1 << 16),
    maxPendingConnections: intFlag(values['max-pending'], 'max-pending', 1, 1 << 16),
    helloTimeoutMs: intFlag(values['hello-timeout-ms'], 'hello-timeout-ms', 10, MAX_TIMER_MS),
    maxHandshakingSockets: intFlag(values['max-handshaking'], 'max-handshaking', 1, 1 << 16),
    handshakeTimeoutMs: intFlag(values['handshake-timeout-ms'], 'handshake-timeout-ms', 100, MAX_TIMER_MS),
    maxQueuedRequests: intFlag(values['max-queued'], 'max-queued', 1, 1 << 16),
    maxBufferedBytes: intFlag(values['max-buffered-bytes'], 'max-buffered-bytes', 65536, 1 << 30),
    maxEnvsPerConnection: intFlag(values['max-envs'], 'max-envs', 1, 1 << 20),
    maxHandsPerConnection: intFlag(values['max-hands'], 'max-hands', 1, 1 << 30),
    maxTotalEnvs: intFlag(values['max-total-envs'], 'max-total-envs', 1, 1 << 24),
    maxTotalHands: intFlag(values['max-total-hands'], 'max-total-hands', 1, 1 << 30),
    maxSessionsPerConnection: intFlag(values['max-sessions'], 'max-sessions', 1, 1 << 16),
    maxMessageBytes: intFlag(values['max-message-bytes'], 'max-message-bytes', MIN_MESSAGE_BYTES, 1 << 26),
    idleTimeoutMs: intFlag(values['idle-timeout-ms'], 'idle-timeout-ms', 1, MAX_TIMER_MS),
    heartbeatIntervalMs: intFlag(values['heartbeat-interval-ms'], 'heartbeat-interval-ms', 10, MAX_TIMER_MS),
    heavyWorkers: intFlag(values['heavy-workers'], 'heavy-workers', 1, 64),
    spinMicroseconds: intFlag(values['spin-us'], 'spin-us', 0, 100_000),
    agentLimits: {
      maxPimcSamples: intFlag(values['max-pimc-samples'], 'max-pimc-samples', 1, 1 << 20),
      maxPimcTimeBudgetMs: intFlag(values['max-pimc-time-ms'], 'max-pimc-time-ms', 1, MAX_TIMER_MS),
      maxPimcSimulatedActions: intFlag(values['max-pimc-actions'], 'max-pimc-actions', 1, 1 << 30),
      maxModelBytes: intFlag(values['max-model-bytes'], 'max-model-bytes', 1, Number.MAX_SAFE_INTEGER),
    },
    seedSecret: seedSecret === '' ? undefined : seedSecret,
    backend,
    web: values.web,
  });
  try {
    await server.start();
  } catch (e) {
    // An address this machine does not have is the host's fault; a port in use or reserved, the port's.
    const code = (e as NodeJS.ErrnoException).code ?? '';
    fail(['ENOTFOUND', 'EADDRNOTAVAIL', 'EAI_AGAIN', 'EAI_FAIL', 'EINVAL'].includes(code) ? 'host' : 'port', `cannot listen: ${(e as Error).message}`);
  }
  const stop = (signal: string) => {
    process.stderr.write(`kratzen serve: ${signal}, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // SIGHUP too (a closed terminal, as train and play take it): it ended the process at once, exit 129.
  for (const signal of STOP_SIGNALS) process.once(signal, () => stop(signal));
  // Said only once the handlers are in: a supervisor that signals as soon as it reads the line
  // found the default action (the process killed) instead of a graceful shutdown.
  const web = server.options.web ? { web: server.url.replace(/^ws:/, 'http:') + '/' } : {};
  writeStdout(`${JSON.stringify({ event: 'listening', url: server.url, host, port: server.port, protocolVersion: PROTOCOL_VERSION, ...web })}\n`);
  return server;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runServe(process.argv.slice(2));
}
