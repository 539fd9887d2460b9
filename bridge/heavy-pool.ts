// The heavy pool: worker threads that host the sessions whose bots play on the server and the
// search policies, so that the main thread, which reads every socket, stays free for the light
// requests of all clients (pings, multi-agent steps) however long a search takes.

import { Worker } from 'node:worker_threads';
import { errorReply } from './replies.js';
import type { HostOptions, HostedReply, HostedRequest } from './host.js';
import { builtModule } from '../env/built-module.js';

function workerScript(): URL {
  return builtModule(new URL('./heavy-worker.js', import.meta.url), new URL('../dist/bridge/heavy-worker.js', import.meta.url));
}

interface Pending {
  worker: number;
  request: HostedRequest;
  resolve: (reply: HostedReply) => void;
}

export class HeavyPool {
  private readonly workers: (Worker | null)[];
  private readonly pending = new Map<number, Pending>();
  private nextTicket = 1;
  private nextWorker = 0;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly options: HostOptions,
  ) {
    this.workers = Array.from({ length: size }, () => null);
  }

  /** The worker a new session or policy goes to: in turn. */
  pick(): number {
    const index = this.nextWorker;
    this.nextWorker = (this.nextWorker + 1) % this.size;
    return index;
  }

  run(worker: number, request: HostedRequest): Promise<HostedReply> {
    if (this.closed) return Promise.resolve({ reply: errorReply(request.id, { code: 'shutting_down', message: 'the server is shutting down' }), ok: false });
    const ticket = this.nextTicket++;
    return new Promise((resolve) => {
      this.pending.set(ticket, { worker, request, resolve });
      try {
        this.worker(worker).postMessage({ type: 'request', ticket, request });
      } catch (e) {
        // Structured cloning refuses some values that JSON.parse builds, e.g. arrays nested
        // 200,000 deep: the request fails like any invalid one, and its caller releases what it held.
        this.pending.delete(ticket);
        const field = deepestField(request.params);
        const message = field
          ? `${field}: nested more than ${CLONE_DEPTH} levels deep, too deep to hand to a worker`
          : `params cannot be handed to a worker: ${(e as Error).message}`;
        resolve({ reply: errorReply(request.id, { code: 'invalid_params', message, field: field ?? 'params' }), ok: false });
      }
    });
  }

  /** Drops a connection's sessions and policies in every worker, and the work still queued for it. */
  dispose(connection: number): void {
    for (const [ticket, p] of this.pending) if (p.request.connection === connection) this.pending.delete(ticket);
    for (const worker of this.workers) worker?.postMessage({ type: 'dispose', connection });
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w?.terminate()));
    for (const p of this.pending.values()) p.resolve({ reply: errorReply(p.request.id, { code: 'shutting_down', message: 'the server is shutting down' }), ok: false });
    this.pending.clear();
  }

  private worker(index: number): Worker {
    const existing = this.workers[index];
    if (existing) return existing;
    const worker = new Worker(workerScript(), { workerData: this.options });
    worker.on('message', (m: { ticket: number } & HostedReply) => {
      const p = this.pending.get(m.ticket);
      if (!p) return;
      this.pending.delete(m.ticket);
      p.resolve({ reply: m.reply, ok: m.ok });
    });
    // A worker that dies takes its sessions with it: their requests fail, new ones get a new worker.
    const failAll = (why: string) => {
      if (this.workers[index] === worker) this.workers[index] = null;
      for (const [ticket, p] of this.pending) {
        if (p.worker !== index) continue;
        this.pending.delete(ticket);
        p.resolve({ reply: errorReply(p.request.id, { code: 'internal_error', message: `the worker running this request stopped: ${why}` }), ok: false });
      }
    };
    worker.on('error', (e) => failAll(e.message));
    worker.on('exit', (code) => failAll(`exit code ${code}`));
    this.workers[index] = worker;
    return worker;
  }
}

/** Nesting past this names the field that holds it (structured cloning gives up somewhat deeper). */
const CLONE_DEPTH = 1000;

/** `params.<key>` of the first top-level param nested more than CLONE_DEPTH levels, if any (no recursion). */
function deepestField(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object') return undefined;
  for (const [key, value] of Object.entries(params)) {
    const stack: [unknown, number][] = [[value, 1]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop()!;
      if (node === null || typeof node !== 'object') continue;
      if (depth > CLONE_DEPTH) return `params.${key}`;
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  return undefined;
}
