// Short plain-text HTTP answers (refusals, errors) of the bridge's HTTP side. `nosniff` keeps a
// browser from reading one as HTML or script, whatever it contains.

import type { ServerResponse } from 'node:http';

/** A plain-text answer through Node's HTTP response. */
export function sendPlainText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...headers }).end(`${text}\n`);
}

/** The same answer as raw bytes, for a socket (an upgrade refused before any WebSocket exists). */
export function plainTextResponse(status: string, text: string): string {
  const body = `${text}\n`;
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
