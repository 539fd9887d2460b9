// A worker of the heavy pool: a SessionHost of its own, running the requests the main thread
// sends it. Long requests give way every few milliseconds, so the requests of several clients
// in one worker take turns, and work for a client that has gone stops at the next turn.

import { parentPort, workerData } from 'node:worker_threads';
import { SessionHost, type HostOptions, type HostedRequest } from './host.js';
import { slicedControl } from './session.js';
import { giveBackFrame } from './frame-pool.js';
// The main thread's slice: a request runs this long before it lets others in, here as there.
import { SLICE_MS, type RecentUse } from './fair-scheduler.js';

const host = new SessionHost(workerData as HostOptions);
/**
 * Each connection's use of this worker lately: paused work resumes least used first. A new
 * connection starts as if it had just used a slice, as on the main thread (connection.ts).
 */
const owners = new Map<number, RecentUse>();

function ownerOf(connection: number): RecentUse {
  let owner = owners.get(connection);
  if (!owner) owners.set(connection, (owner = { usage: SLICE_MS, usageAt: performance.now() }));
  return owner;
}

type Message = { type: 'request'; ticket: number; request: HostedRequest } | { type: 'dispose'; connection: number };

parentPort!.on('message', (message: Message) => {
  if (message.type === 'dispose') {
    host.dispose(message.connection);
    owners.delete(message.connection);
    return;
  }
  const { ticket, request } = message;
  host.admit(request.connection);
  const gone = () => host.isGone(request.connection);
  const control = slicedControl(SLICE_MS, ownerOf(request.connection), gone);
  // Requests start in turn, least used first, as paused work resumes.
  void control.start().then(async (going) => {
    if (!going) return;
    const { reply, ok } = await host.handle(request, control);
    if (gone()) return;
    parentPort!.postMessage({ ticket, reply, ok });
    // The main thread got a copy: a pooled frame is free again.
    if (typeof reply !== 'string') giveBackFrame(reply);
  });
});
