// The thread of one RolloutActor (training/actors.ts): init, snapshots, then a rollout per
// message; batches go back as transferred buffers.

import { parentPort } from 'node:worker_threads';
import { RolloutActor, type ActorSetup, type RolloutRequest } from './actors.js';

type Message =
  | { id: number; kind: 'init'; setup: ActorSetup }
  | { id: number; kind: 'snapshot'; name: string; weights: Float32Array[] }
  | { id: number; kind: 'collect'; weights: Float32Array[]; request: RolloutRequest };

let actor: RolloutActor | null = null;

parentPort!.on('message', async (message: Message) => {
  try {
    if (message.kind === 'init') {
      actor = await RolloutActor.create(message.setup);
      parentPort!.postMessage({ id: message.id });
      return;
    }
    if (!actor) throw new Error('actor not initialised');
    if (message.kind === 'snapshot') {
      actor.addSnapshot(message.name, message.weights);
      parentPort!.postMessage({ id: message.id });
      return;
    }
    actor.setWeights(message.weights);
    const result = actor.collect(message.request);
    const b = result.batch;
    const arrays = [b.observations, b.masks, b.actions, b.logProbs, b.values, b.advantages, b.returns, b.otherHands, b.rewards, b.next];
    parentPort!.postMessage({ id: message.id, result }, arrays.flatMap((a) => (a ? [a.buffer as ArrayBuffer] : [])));
  } catch (e) {
    parentPort!.postMessage({ id: message.id, error: (e as Error).stack ?? String(e) });
  }
});
