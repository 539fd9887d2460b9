// The thread of a GradientHelper (training/gradient-helper.ts): builds replicas of the learner's
// networks, then computes one minibatch part's gradients per job until told to stop. It blocks on
// the shared signal between jobs: it has nothing else to do, and the learner waits on it.

import { receiveMessageOnPort, workerData, parentPort, type MessagePort } from 'node:worker_threads';
import { PolicyAgent, selectBackend } from '../agents/index.js';
import { OracleCritic } from './critic.js';
import { PpoLearner } from './ppo.js';
import { JOBS, REPLIES, type GradientHelperSetup, type GradientJob, type GradientReply } from './gradient-helper.js';

const { setup, signal, port } = workerData as { setup: GradientHelperSetup; signal: Int32Array; port: MessagePort };

let replica: PpoLearner;
try {
  await selectBackend(setup.backend);
  const agent = new PolicyAgent({ architecture: setup.architecture, suitSymmetry: setup.suitSymmetry });
  const critic = setup.critic && new OracleCritic(setup.critic.hiddenSizes, 0, setup.critic.onTrunk, setup.critic.inputSize);
  replica = new PpoLearner(agent, setup.hp, critic);
  parentPort!.postMessage({ ready: true });
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).stack ?? String(e) });
  process.exit(1);
}

for (let seen = 0; ; ) {
  Atomics.wait(signal, JOBS, seen);
  seen = Atomics.load(signal, JOBS);
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) {
    const job = received.message as GradientJob | { stop: true };
    if ('stop' in job) process.exit(0);
    let reply: GradientReply;
    try {
      replica.setVariables(job.weights);
      reply = replica.partGradients(job.rows, job.kind);
    } catch (e) {
      reply = { error: (e as Error).stack ?? String(e) };
    }
    port.postMessage(reply, 'grads' in reply ? reply.grads.map((g) => g.buffer as ArrayBuffer) : []);
    Atomics.add(signal, REPLIES, 1);
    Atomics.notify(signal, REPLIES);
  }
}
