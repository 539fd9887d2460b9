// The web table's static files (bridge/web/public: plain HTML, CSS and JS, no build step), served
// by `kratzen serve --web` on the bridge's own HTTP server. The page is a bridge client like any
// other: it talks to the server only through the WebSocket protocol.

import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';

/** URL path -> file and content type; nothing outside this list is ever read. */
const ASSETS: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/table.css': ['table.css', 'text/css; charset=utf-8'],
  '/table.js': ['table.js', 'text/javascript; charset=utf-8'],
};

/** The files sit beside this module in the source tree; compiled, it runs from dist/bridge/web. */
function publicDir(): string {
  const candidates = [new URL('./public/', import.meta.url), new URL('../../../bridge/web/public/', import.meta.url)];
  const found = candidates.find((url) => existsSync(new URL('index.html', url)));
  if (!found) throw new Error('the web table files (bridge/web/public) are missing');
  return fileURLToPath(found);
}

/** Answers GET/HEAD of the page's files; returns false for any other request. */
export function serveWebAsset(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const asset = Object.hasOwn(ASSETS, path) ? ASSETS[path] : undefined;
  if (!asset) return false;
  let body: Buffer;
  try {
    body = readFileSync(publicDir() + asset[0]);
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
    return true;
  }
  res.writeHead(200, {
    'content-type': asset[1],
    'content-length': body.length,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    // The page loads only its own files and talks only to this server's WebSocket.
    'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; frame-ancestors 'none'",
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
