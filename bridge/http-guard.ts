// Who may talk to the bridge over HTTP: the `Host` of every request must name this server (the
// bound address, loopback, or a name allowed with --allow-host), which defeats DNS rebinding;
// the `Origin` of a WebSocket upgrade, when a browser sends one, must be the server's own page
// (or listed with --allow-origin), so no other web page can drive a local server. A server
// reachable beyond loopback needs a token long enough not to be guessed.

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** A DNS name's spelling: letters, digits, dots and hyphens (as a Host header or --host may give it). */
export function isHostName(name: string): boolean {
  return /^[A-Za-z0-9.-]{1,253}$/.test(name);
}

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/**
 * Shortest token a server reachable from the network accepts: each connection gets one guess, but
 * an attacker can reconnect thousands of times a second. (Loopback servers take any token.)
 */
export const MIN_NETWORK_TOKEN_CHARS = 16;
/** ... of which this many different ones: sixteen spaces or one letter repeated is no secret. */
export const MIN_NETWORK_TOKEN_DISTINCT_CHARS = 8;

/** Null when a server bound to `host` with `token` may start, else why not (the error names the token). */
export function networkTokenProblem(host: string, token: string | undefined): string | null {
  if (isLoopbackHost(host)) return null;
  if (!token) return `${host} is reachable beyond this machine: give a token (--token or KRATZEN_BRIDGE_TOKEN)`;
  // Counted in characters (code points): eight emoji are sixteen UTF-16 units, not sixteen characters.
  if ([...token].length < MIN_NETWORK_TOKEN_CHARS) {
    return `${host} is reachable beyond this machine: the token needs at least ${MIN_NETWORK_TOKEN_CHARS} characters, a short one is guessed by reconnecting (for example: openssl rand -hex 16)`;
  }
  if (new Set(token).size < MIN_NETWORK_TOKEN_DISTINCT_CHARS) {
    return `${host} is reachable beyond this machine: the token needs at least ${MIN_NETWORK_TOKEN_DISTINCT_CHARS} different characters, a repeated one is guessed first (for example: openssl rand -hex 16)`;
  }
  return null;
}

/** Whether a bound address (as given or as the socket has it) is every interface. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

/** Why a request target of no known form (not `/path`, `*` or `http(s)/ws(s)://authority/...`) is refused. */
export const BAD_REQUEST_TARGET = 'bad request target';
/** Why a request with two Host (or Origin) headers is refused: Node reads only the first, a proxy may route by another. */
export const REPEATED_HEADER = 'a Host or Origin header is repeated';

/** Why an upgrade that is no WebSocket handshake (its Upgrade, key or version) is refused. */
export const BAD_UPGRADE = 'not a WebSocket handshake (Upgrade: websocket, a Sec-WebSocket-Key of 16 bytes, Sec-WebSocket-Version 13)';

/** Whether a refusal is of a malformed request (400), not of a well-formed one from elsewhere (403). */
export function isBadRequest(refused: string): boolean {
  return refused === BAD_REQUEST_TARGET || refused === REPEATED_HEADER || refused === BAD_UPGRADE;
}

const CHECKED_HEADERS = new Set(['host', 'origin', 'sec-websocket-origin']);

export interface HttpGuardOptions {
  /** The interface the server is bound to, as it was given (a name, an address). */
  host: string;
  /**
   * The address the listening socket has (`server.address().address`): `::0`, `0` or
   * `0:0:0:0:0:0:0:0` bind every interface as `::` and `0.0.0.0` do, and are that here.
   * @default host
   */
  boundAddress?: string;
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
  /** The names a page of this server can have: `names` but the loopback address of a family it does not listen on. */
  private readonly pageNames: Set<string>;
  private readonly origins: Set<string>;

  constructor(private readonly options: HttpGuardOptions) {
    const names = new Set<string>(LOOPBACK_NAMES);
    const bound = options.host.toLowerCase().replace(/^\[|\]$/g, '');
    const address = options.boundAddress === undefined ? bound : options.boundAddress.toLowerCase();
    // Only the spellings `0.0.0.0`, `::` and '' counted as every interface: a server on `::0`
    // listened everywhere and refused every client that named it by a network address (403).
    if (isWildcard(bound) || isWildcard(address)) {
      // Bound to every interface: each of the machine's addresses names this server.
      for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) names.add(entry.address.toLowerCase());
    } else {
      names.add(bound);
      names.add(address);
    }
    // A server on 127.0.0.1 has no page at [::1]:port (nor one on ::1 at 127.0.0.1:port): a page
    // there is another program's, which must not drive this server.
    this.pageNames = new Set(names);
    if (isIP(address) === 4) this.pageNames.delete('::1');
    if (isIP(address) === 6 && address !== '::') this.pageNames.delete('127.0.0.1');
    for (const name of options.allowHosts.map((n) => n.toLowerCase().replace(/^\[|\]$/g, ''))) {
      names.add(name);
      this.pageNames.add(name);
    }
    this.names = names;
    // Each listed origin as written and as a browser serializes it (`https://x:443` is `https://x`).
    this.origins = new Set(options.allowOrigins.flatMap((o) => [o.replace(/\/+$/, '').toLowerCase(), ...serializedOrigin(o)]));
  }

  /** Null when a request (a page's or an upgrade's) names this server once, by Host and target, else why not. */
  checkRequest(req: Pick<IncomingMessage, 'rawHeaders' | 'headers' | 'url' | 'method'>): string | null {
    return this.checkRepeated(req.rawHeaders) ?? this.checkHost(req.headers.host) ?? this.checkTarget(req.url, req.method);
  }

  /** Null unless a header the guard checks appears more than once in `rawHeaders` (RFC 9112 refuses two Hosts). */
  private checkRepeated(rawHeaders: readonly string[]): string | null {
    const seen = new Set<string>();
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toLowerCase();
      if (!CHECKED_HEADERS.has(name)) continue;
      if (seen.has(name)) return REPEATED_HEADER;
      seen.add(name);
    }
    return null;
  }

  /** Null when the Host header names this server, else why not. */
  checkHost(header: string | undefined, what = 'the Host header'): string | null {
    if (header === undefined) return 'a Host header is required';
    // The refused name is not echoed: the page would reflect whatever an attacker sent.
    const parsed = parseHostHeader(header);
    if (!parsed || !this.names.has(parsed.name)) return `${what} does not name this server (allow a name with --allow-host)`;
    if (parsed.port !== null && parsed.port !== this.options.port) return `${what} names another port`;
    return null;
  }

  /**
   * Null unless the request target is in absolute form (`GET http://name/ HTTP/1.1`, as sent to
   * proxies) and does not name this server: HTTP/1.1 then takes the target's authority over
   * `Host`, so it must pass the same check. A target of no known form is BAD_REQUEST_TARGET, and
   * so is `*` but with OPTIONS (RFC 9112 section 3.2.4: it names the server, no page or socket).
   */
  checkTarget(target: string | undefined, method: string | undefined): string | null {
    if (target === undefined || target.startsWith('/')) return null;
    if (target === '*') return method === 'OPTIONS' ? null : BAD_REQUEST_TARGET;
    // The authority as written: URL would drop a default port (`:80`) and so let it pass.
    const match = /^(?:https?|wss?):\/\/([^/?#]*)/i.exec(target);
    const authority = match ? match[1]!.slice(match[1]!.lastIndexOf('@') + 1) : '';
    if (!parseHostHeader(authority)) return BAD_REQUEST_TARGET;
    return this.checkHost(authority, 'the request target');
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
    const port = url.port === '' ? 80 : Number(url.port);
    // An origin is scheme, host and port: a browser never sends a path or credentials in one.
    // The server serves its page over plain HTTP, so an https origin is another page (behind a
    // TLS front, list that origin with --allow-origin).
    // isOrigin's test: an empty `?` or `#` leaves search and hash empty in a URL (`http://own:port?` passed).
    const bare = isOrigin(normalized);
    if (bare && this.origins.has(url.origin)) return null;
    const ownPage = bare && url.protocol === 'http:' && this.pageNames.has(name) && port === this.options.port;
    return ownPage ? null : "the Origin is not this server's page (allow another with --allow-origin)";
  }
}

/**
 * Whether `text` is an http(s) origin as a browser sends it, give or take letter case and a
 * trailing slash: `http://user:pw@a.example` passed a pattern check and allowed a.example, and
 * `http://a.example?x` a page no Origin header ever names. The server and `--allow-origin` refuse others.
 */
export function isOrigin(text: string): boolean {
  if (!/^https?:\/\/[^/\s?#@]+\/?$/.test(text)) return false;
  try {
    const url = new URL(text);
    return url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** `text` as a browser serializes an origin (scheme, host, port but the scheme's default), or nothing when it is no http(s) URL. */
function serializedOrigin(text: string): string[] {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? [url.origin] : [];
  } catch {
    return [];
  }
}
