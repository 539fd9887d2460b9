// The training league: draws follow the configured weights, and the snapshot list stays bounded.
import seedrandom from 'seedrandom';
import { beforeAll, describe, expect, it } from 'vitest';
import { PolicyAgent, selectBackend } from '../agents/index.js';
import { parseTrainConfig } from './config.js';
import { League } from './league.js';
import { LEARNER } from './rollout.js';

beforeAll(async () => {
  await selectBackend('wasm');
});

const leagueOf = (weights: Record<string, number>) => new League(parseTrainConfig({ league: weights }).league, 4);

describe('League', () => {
  it('self-play only: every seat is the learner', () => {
    const league = leagueOf({ selfPlay: 1, heuristic: 0, random: 0, snapshots: 0 });
    const random = seedrandom.alea('a');
    for (let k = 0; k < 20; k++) expect(league.draw(random).seats).toEqual([LEARNER, LEARNER, LEARNER, LEARNER]);
  });

  it('against one member: the learner holds 1 to 3 seats, the member the others', () => {
    const league = leagueOf({ selfPlay: 0, heuristic: 1, random: 0, snapshots: 0 });
    const random = seedrandom.alea('b');
    const counts = new Set<number>();
    for (let k = 0; k < 200; k++) {
      const { seats } = league.draw(random);
      const learners = seats.filter((s) => s === LEARNER).length;
      counts.add(learners);
      expect(seats.filter((s) => s !== LEARNER).every((s) => s === league.heuristic)).toBe(true);
    }
    expect([...counts].sort()).toEqual([1, 2, 3]);
  });

  it('draws snapshots only once there are some, and keeps the most recent maxSnapshots', () => {
    const league = new League(parseTrainConfig({ league: { selfPlay: 0, heuristic: 0, random: 0, snapshots: 1, maxSnapshots: 2 } }).league, 3);
    // Before the first snapshot, self-play takes the episodes of a league of snapshots alone.
    for (let k = 0; k < 20; k++) expect(league.draw(seedrandom.alea(`before${k}`)).seats).toEqual([LEARNER, LEARNER, LEARNER]);
    const agents = [1, 2, 3].map((seed) => new PolicyAgent({ architecture: { hiddenSizes: [4] }, seed }));
    agents.forEach((a) => league.addSnapshot(a));
    expect(league.snapshots).toEqual(agents.slice(1));
    const random = seedrandom.alea('c');
    const seen = new Set<unknown>();
    for (let k = 0; k < 100; k++) for (const s of league.draw(random).seats) if (s !== LEARNER) seen.add(s);
    expect(seen).toEqual(new Set(agents.slice(1)));
    league.dispose();
  });

  it('seats pimc players when weighted, and never by default', () => {
    const league = leagueOf({ selfPlay: 0, heuristic: 0, random: 0, snapshots: 0, pimc: 1 });
    const random = seedrandom.alea('d');
    for (let k = 0; k < 50; k++) {
      const opponents = league.draw(random).seats.filter((s) => s !== LEARNER);
      expect(opponents.length).toBeGreaterThan(0);
      expect(opponents.every((s) => (s as { name: string }).name === 'pimc')).toBe(true);
    }
    const mixed = leagueOf({ pimc: 0.5 });
    const plain = leagueOf({});
    const a = seedrandom.alea('e');
    const kinds = new Set<string>();
    for (let k = 0; k < 300; k++) {
      const seats = mixed.draw(a).seats.map((s) => (s === LEARNER ? 'learner' : (s as { name: string }).name));
      seats.forEach((name) => kinds.add(name));
    }
    expect(kinds).toEqual(new Set(['learner', 'heuristic', 'random', 'pimc']));
    // The default league (pimc 0) never seats one.
    const c = seedrandom.alea('f');
    for (let k = 0; k < 300; k++) expect(plain.draw(c).seats.some((s) => s !== LEARNER && (s as { name: string }).name === 'pimc')).toBe(false);
  });
});
