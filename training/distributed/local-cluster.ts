// A Redis server and `kratzen worker` processes on this machine, on loopback: what the tests and
// the bench run against (and a quick way to try scale-out without a second machine).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export function haveRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Resolves once `child` has written `text` to `stream`; rejects if it exits first or after `ms`. */
function waitFor(child: ChildProcess, stream: 'stdout' | 'stderr', text: string, ms = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" after ${ms} ms: ${seen}`)), ms);
    child[stream]!.on('data', (d) => {
      seen += d;
      if (seen.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before "${text}": ${seen}`));
    });
  });
}

/** A throwaway redis-server (no persistence) on a free loopback port. */
export async function startLocalRedis(): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await waitFor(child, 'stdout', 'Ready to accept connections');
  return { url: `redis://127.0.0.1:${port}`, process: child };
}

/** `node <bin> worker --redis url ...` from a build, resolved once it is taking jobs; `onStderr` hears all it writes there. */
export async function startWorkerProcess(
  bin: string,
  url: string,
  options: { concurrency?: number; lockSeconds?: number; onStderr?: (text: string) => void } = {},
): Promise<ChildProcess> {
  const args = [bin, 'worker', '--redis', url, '--concurrency', String(options.concurrency ?? 1)];
  if (options.lockSeconds !== undefined) args.push('--lock-seconds', String(options.lockSeconds));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const { onStderr } = options;
  if (onStderr) child.stderr!.on('data', (d: Buffer) => onStderr(d.toString()));
  await waitFor(child, 'stderr', 'ready');
  return child;
}

/**
 * Stops `child` as Ctrl-C would (SIGTERM: a worker finishes its jobs and removes its blob cache
 * folder), killing it after `ms` if it has not exited; resolves once it has. Killed outright, every
 * worker left an empty cache folder in the temporary directory.
 */
export function stopProcess(child: ChildProcess, ms = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
