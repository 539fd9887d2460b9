// Who may talk to the bridge over HTTP: the `Host` of every request must name this server (the
// bound address, loopback, or a name allowed with --allow-host), which defeats DNS rebinding;
// the `Origin` of a WebSocket upgrade, when a browser sends one, must be the server's own page
// (or listed with --allow-origin), so no other web page can drive a local server.

import type { ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

export interface HttpGuardOptions {
  /** The interface the server is bound to. */
  host: string;
  port: number;
  /** Further names (DNS names, addresses) that clients may use in `Host`. */
  allowHosts: readonly string[];
  /** Further origins (`https://example.org`) whose pages may open WebSockets. */
  allowOrigins: readonly string[];
}

/** Splits a Host header (`name:port`, `[v6]:port`) into a lowercase name and a port (null: none given). */
function parseHostHeader(header: string): { name: string; port: number | null } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header.trim());
  if (!match) return null;
  return { name: match[1]!.toLowerCase().replace(/^\[|\]$/g, ''), port: match[2] === undefined ? null : Number(match[2]) };
}

export class HttpGuard {
  private readonly names: Set<string>;
  private readonly origins: Set<string>;

  constructor(private readonly options: HttpGuardOptions) {
    const names = new Set<string>(LOOPBACK_NAMES);
    const bound = options.host.toLowerCase().replace(/^\[|\]$/g, '');
    if (isWildcard(bound)) {
      // Bound to every interface: each of the machine's addresses names this server.
      for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) names.add(entry.address.toLowerCase());
    } else {
      names.add(bound);
    }
    for (const name of options.allowHosts) names.add(name.toLowerCase().replace(/^\[|\]$/g, ''));
    this.names = names;
    this.origins = new Set(options.allowOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  }

  /** Null when the Host header names this server, else why not. */
  checkHost(header: string | undefined): string | null {
    if (header === undefined) return 'a Host header is required';
    // The refused name is not echoed: the page would reflect whatever an attacker sent.
    const parsed = parseHostHeader(header);
    if (!parsed || !this.names.has(parsed.name)) return 'the Host header does not name this server (allow a name with --allow-host)';
    if (parsed.port !== null && parsed.port !== this.options.port) return 'the Host header names another port';
    return null;
  }

  /**
   * Null unless the request target is in absolute form (`GET http://name/ HTTP/1.1`, as sent to
   * proxies) and names another server: HTTP/1.1 then takes the target's authority over `Host`,
   * so it must pass the same check. A target that is no URL at all is left to the page server.
   */
  checkTarget(target: string | undefined): string | null {
    if (target === undefined || target.startsWith('/') || target === '*') return null;
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return null;
    }
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return 'the request target names another scheme';
    return url.host === '' ? 'the request target names no server' : this.checkHost(url.host);
  }

  /** Null when a WebSocket upgrade from `origin` may proceed (no Origin: not a browser page). */
  checkOrigin(origin: string | undefined): string | null {
    if (origin === undefined) return null;
    const normalized = origin.replace(/\/+$/, '').toLowerCase();
    if (this.origins.has(normalized)) return null;
    let url: URL;
    try {
      url = new URL(normalized);
    } catch {
      return 'the Origin header is not a URL';
    }
    const name = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    // An origin is scheme, host and port: a browser never sends a path or credentials in one.
    const bare = url.username === '' && url.password === '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.hash === '';
    const ownPage = bare && (url.protocol === 'http:' || url.protocol === 'https:') && this.names.has(name) && port === this.options.port;
    return ownPage ? null : "the Origin is not this server's page (allow another with --allow-origin)";
  }
}

/**
 * A short plain-text answer (errors, refusals). `nosniff` keeps a browser from reading it as
 * HTML or script whatever it contains.
 */
export function sendPlainText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...headers }).end(`${text}\n`);
}

/** The same answer on a raw socket (an upgrade refused before any WebSocket exists). */
export function plainTextResponse(status: string, text: string): string {
  const body = `${text}\n`;
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
