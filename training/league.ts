// The league the learner trains against: the heuristic, a random player, pimc search players and
// the most recent snapshots of the learner itself, each an agent object with its weight from the
// config. Every episode draws one of them (or pure self-play) and the seats the learner takes.

import { HeuristicAgent, PimcAgent, RandomAgent, type Agent, type PolicyAgent } from '../agents/index.js';
import { LEARNER, type LeagueDraw, type SeatController } from './rollout.js';
import type { TrainConfig } from './config.js';

export class League {
  readonly heuristic = new HeuristicAgent();
  private random = new RandomAgent({ seed: 0 });
  private pimc = new PimcAgent({ seed: 0 });
  /** Oldest first; frozen, sampling. */
  private readonly snapshotAgents: PolicyAgent[] = [];

  constructor(
    private readonly weights: TrainConfig['league'],
    private readonly numPlayers: number,
  ) {}

  get snapshots(): readonly PolicyAgent[] {
    return this.snapshotAgents;
  }

  /** Adds a snapshot (frozen), dropping the oldest beyond `maxSnapshots`. */
  addSnapshot(agent: PolicyAgent): void {
    agent.model.trainable = false;
    this.snapshotAgents.push(agent);
    while (this.snapshotAgents.length > this.weights.maxSnapshots) this.snapshotAgents.shift()!.dispose();
  }

  /** Seeds every member's randomness for one update: a rollout then depends on (seed, update) only. */
  reseed(seed: string): void {
    this.random = new RandomAgent({ seed });
    this.pimc = new PimcAgent({ seed });
    this.snapshotAgents.forEach((agent, k) => agent.reseed(`${seed}/snapshot${k}`));
  }

  /**
   * Seats for one episode: all the learner's (self-play), or the learner at one to n-1 random
   * seats against one member, drawn by weight (a snapshot uniformly among the snapshots).
   */
  draw(random: () => number): LeagueDraw {
    const w = this.weights;
    const snapshots = this.snapshotAgents;
    // Drawn in this order, pimc last: a league without pimc draws as runs saved before it joined
    // did, so they resume the same.
    const members: { weight: number; opponent: ((random: () => number) => Agent) | null }[] = [
      { weight: w.selfPlay, opponent: null },
      { weight: w.heuristic, opponent: () => this.heuristic },
      { weight: w.random, opponent: () => this.random },
      { weight: snapshots.length > 0 ? w.snapshots : 0, opponent: (r) => snapshots[Math.floor(r() * snapshots.length)]! },
      { weight: w.pimc, opponent: () => this.pimc },
    ];
    const total = members.reduce((sum, member) => sum + member.weight, 0);
    let u = random() * total;
    let m = 0;
    while (m < members.length - 1 && (u -= members[m]!.weight) >= 0) m++;
    // Rounding can carry u past the last weight: that draw goes to the last member with a weight.
    while (m > 0 && members[m]!.weight === 0) m--;
    const n = this.numPlayers;
    const pick = members[m]!.opponent;
    if (pick === null) return { seats: new Array<SeatController>(n).fill(LEARNER) };
    const opponent = pick(random);
    const learners = 1 + Math.floor(random() * (n - 1));
    const seats = new Array<SeatController>(n).fill(opponent);
    const order = Array.from({ length: n }, (_, s) => s);
    for (let k = order.length - 1; k > 0; k--) {
      const j = Math.floor(random() * (k + 1));
      [order[k], order[j]] = [order[j]!, order[k]!];
    }
    for (let k = 0; k < learners; k++) seats[order[k]!] = LEARNER;
    return { seats };
  }

  dispose(): void {
    this.snapshotAgents.forEach((s) => s.dispose());
    this.snapshotAgents.length = 0;
  }
}
