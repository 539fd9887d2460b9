#!/usr/bin/env node
// `kratzen serve [--host 127.0.0.1] [--port 8765] [--token T]`: runs the WebSocket bridge until
// SIGINT/SIGTERM, then shuts down gracefully. Also runnable alone: `node dist/cli/serve.js ...`.
// Prints one JSON line when listening: {"event":"listening","url","host","port","protocolVersion"}.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BACKEND_CHOICES, type BackendChoice } from '../agents/tfjs.js';
import { PROTOCOL_VERSION } from '../bridge/protocol.js';
import { BridgeServer } from '../bridge/server.js';

export const SERVE_USAGE = `kratzen serve [--host 127.0.0.1] [--port 8765] [--token T] [--max-envs N] [--max-sessions N]
              [--max-message-bytes B] [--idle-timeout-ms MS] [--backend auto|tensorflow|wasm|cpu] [--web]
  --web also serves the web table (a page playing against bots over this protocol) at http://<host>:<port>/.
  The token may also come from the environment variable KRATZEN_BRIDGE_TOKEN (not visible in ps).
`;

function fail(field: string, reason: string): never {
  process.stdout.write(`${JSON.stringify({ error: 'invalid arguments', field, reason })}\n`);
  process.exit(2);
}

function intFlag(value: string | undefined, field: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) fail(field, `--${field} must be an integer >= ${min}, got "${value}"`);
  return Number(value);
}

export async function runServe(args: string[]): Promise<BridgeServer> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'max-envs': { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-message-bytes': { type: 'string' },
        'idle-timeout-ms': { type: 'string' },
        backend: { type: 'string' },
        web: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    fail('arguments', (e as Error).message);
  }
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    process.exit(0);
  }
  if (values.backend !== undefined && !BACKEND_CHOICES.includes(values.backend as BackendChoice)) {
    fail('backend', `--backend must be one of ${BACKEND_CHOICES.join(', ')}`);
  }
  const token = values.token ?? process.env.KRATZEN_BRIDGE_TOKEN ?? undefined;
  const server = new BridgeServer({
    host: values.host,
    port: intFlag(values.port, 'port', 0),
    token: token === '' ? undefined : token,
    maxEnvsPerConnection: intFlag(values['max-envs'], 'max-envs', 1),
    maxSessionsPerConnection: intFlag(values['max-sessions'], 'max-sessions', 1),
    maxMessageBytes: intFlag(values['max-message-bytes'], 'max-message-bytes', 1024),
    idleTimeoutMs: intFlag(values['idle-timeout-ms'], 'idle-timeout-ms', 1),
    backend: values.backend as BackendChoice | undefined,
    web: values.web,
  });
  try {
    await server.start();
  } catch (e) {
    fail('port', `cannot listen: ${(e as Error).message}`);
  }
  const { host } = server.options;
  const loopback = host === '127.0.0.1' || host === '::1' || host === 'localhost';
  if (!loopback && !server.options.token) {
    process.stderr.write(`kratzen serve: listening on ${host} without a token: anyone who can reach this port can use the server\n`);
  }
  const web = server.options.web ? { web: server.url.replace(/^ws:/, 'http:') + '/' } : {};
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: server.url, host, port: server.port, protocolVersion: PROTOCOL_VERSION, ...web })}\n`);
  const stop = (signal: string) => {
    process.stderr.write(`kratzen serve: ${signal}, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return server;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runServe(process.argv.slice(2));
}
