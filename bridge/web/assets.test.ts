// The web table's files when one cannot be read [probe round 11]: a visitor got the error's text,
// which held the server's absolute path, and the server had started without a word.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';

const unreadable = vi.hoisted(() => ({ file: '' }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    readFileSync: ((path: string, ...rest: unknown[]) => {
      if (unreadable.file && String(path).endsWith(unreadable.file)) {
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${String(path)}'`), { code: 'ENOENT' });
      }
      return (fs.readFileSync as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.readFileSync,
  };
});

const { loadWebAssets, serveWebAsset } = await import('./assets.js');

/** GET `url` answered by serveWebAsset: status and body. */
function get(url: string): { status: number; body: string } {
  const reply = { status: 0, body: '' };
  const res = {
    writeHead(status: number) {
      reply.status = status;
      return this;
    },
    end(body?: string | Buffer) {
      reply.body = String(body ?? '');
    },
  } as unknown as ServerResponse;
  serveWebAsset({ method: 'GET', url, headers: {} } as IncomingMessage, res);
  return reply;
}

describe('web table files', () => {
  it('a file that cannot be read fails the start naming it, and a request for it shows no server path', () => {
    unreadable.file = 'table.css';
    expect(() => loadWebAssets()).toThrow(/table\.css/);
    const reply = get('/table.css');
    expect(reply.status).toBe(500);
    expect(reply.body).not.toMatch(/\/|ENOENT/);
    expect(reply.body).toContain('cannot be read');
    unreadable.file = '';
    loadWebAssets();
    expect(get('/table.css')).toMatchObject({ status: 200 });
  });
});
