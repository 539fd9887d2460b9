// A small TypeScript client of the bridge (tests, the benchmark, Node frontends). Replies come
// in request order, so pending requests are a FIFO queue, not a map.

import WebSocket from 'ws';
import { PROTOCOL_VERSION } from './protocol.js';
import { decodeBinaryFrame, type DecodedArrays } from './codec.js';

export class BridgeRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(`${code}: ${message}`);
    this.name = 'BridgeRequestError';
  }
}

/** A reply as received: JSON fields, plus typed arrays for a binary frame. */
export interface RawReply {
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: string; message: string; field?: string; details?: Record<string, unknown> };
  arrays?: DecodedArrays;
}

export class BridgeClient {
  private readonly pending: { resolve: (r: RawReply) => void; reject: (e: Error) => void }[] = [];
  private nextId = 1;
  closeCode: number | null = null;
  closeReason = '';
  /** The server's message limit, from its hello reply: `request` does not send longer requests. */
  maxMessageBytes: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      const waiter = this.pending.shift();
      if (!waiter) return;
      try {
        if (isBinary) {
          const { header, arrays } = decodeBinaryFrame(data);
          waiter.resolve({ id: header.id, result: header.result, arrays });
        } else waiter.resolve(JSON.parse(data.toString('utf8')));
      } catch (e) {
        waiter.reject(e as Error);
      }
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      for (const waiter of this.pending.splice(0)) waiter.reject(new Error(`connection closed (${code} ${this.closeReason})`));
    });
    ws.on('error', () => undefined); // surfaced as 'close'
  }

  static connect(url: string): Promise<BridgeClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
      ws.once('open', () => resolve(new BridgeClient(ws)));
      ws.once('error', reject);
    });
  }

  /** Connects and says hello. */
  static async open(url: string, token?: string): Promise<BridgeClient> {
    const client = await BridgeClient.connect(url);
    await client.call('hello', token === undefined ? { protocolVersion: PROTOCOL_VERSION } : { protocolVersion: PROTOCOL_VERSION, token });
    return client;
  }

  /** Sends any text (or bytes) and resolves with the next reply. */
  sendRaw(data: string | Buffer): Promise<RawReply> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error(`connection closed (${this.closeCode ?? 'not open'} ${this.closeReason})`));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      // No send callback: a failed write closes the socket, and 'close' rejects every pending
      // request; a callback per message costs a write request of its own.
      this.ws.send(data);
    });
  }

  /**
   * Sends a request; one longer than the server's message limit is answered here with
   * `limit_exceeded` instead (the server would close the connection, 1009, sessions and all).
   */
  request(method: string, params?: unknown): Promise<RawReply> {
    const message = params === undefined ? { id: this.nextId++, method } : { id: this.nextId++, method, params };
    const text = JSON.stringify(message);
    const limit = this.maxMessageBytes;
    // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no count.
    const bytes = limit !== null && text.length > limit / 3 ? Buffer.byteLength(text) : 0;
    if (limit !== null && bytes > limit) {
      return Promise.resolve({
        id: message.id,
        error: { code: 'limit_exceeded', message: `${method}: the request is ${bytes} bytes, more than the server's message limit of ${limit}`, details: { limit: 'maxMessageBytes' } },
      });
    }
    return this.sendRaw(text);
  }

  /** A request whose error reply rejects with BridgeRequestError. */
  async call(method: string, params?: unknown): Promise<RawReply & { result: Record<string, unknown> }> {
    const reply = await this.request(method, params);
    if (method === 'hello' && reply.result) {
      const limit = (reply.result.limits as { maxMessageBytes?: unknown } | undefined)?.maxMessageBytes;
      this.maxMessageBytes = typeof limit === 'number' ? limit : null;
    }
    if (reply.error) throw new BridgeRequestError(reply.error.code, reply.error.message, reply.error.field, reply.error.details);
    return reply as RawReply & { result: Record<string, unknown> };
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
