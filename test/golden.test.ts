// Behaviour pins: digests of records, replay results, vector-env trajectories (observations,
// masks, rewards, seats, flags) and the choices of the built-in agents, for every profile, player
// count and tavern5 variant. Refactors must keep them bit for bit; a deliberate change of
// behaviour regenerates them with KRATZEN_WRITE_GOLDEN=1 and says why in its commit.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NUM_ACTIONS, randomSession, replayResult, stateToRecord } from '../env/rules/index.js';
import { VecEnv } from '../env/vec-env.js';
import { randomLegalActions } from '../env/policy.js';
import { HeuristicAgent, PimcAgent, RandomAgent, type Agent } from '../agents/index.js';

const FILE = join(import.meta.dirname, 'fixtures', 'golden.json');
const WRITE = process.env.KRATZEN_WRITE_GOLDEN === '1';
const golden: Record<string, string> = existsSync(FILE) ? JSON.parse(readFileSync(FILE, 'utf8')) : {};
const computed: Record<string, string> = {};

const RULE_SETS: Record<string, Record<string, unknown>> = {
  'didactic4-p3': { profile: 'didactic4', players: 3 },
  'didactic4-p4': { profile: 'didactic4', players: 4 },
  'didactic4-p5': { profile: 'didactic4', players: 5 },
  'didactic4-p6': { profile: 'didactic4', players: 6 },
  'tavern5-p3': { profile: 'tavern5', players: 3 },
  'tavern5-p4': { profile: 'tavern5', players: 4 },
  'tavern5-p5-all': {
    profile: 'tavern5', players: 5, exchange: { maxCards: 3, feePerCard: 0.4 }, bettler: {}, weliRank: 'highest',
    dealerMinTricks: 3, failPenalty: 'pot', startingChips: 30, targetChips: 45, hands: 8,
  },
  'tavern5-p6-exchange': { profile: 'tavern5', players: 6, exchange: {}, bettler: { bonus: 1 } },
};

function digest(parts: (string | ArrayBufferView)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(typeof part === 'string' ? part : new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
  return hash.digest('hex');
}

function check(name: string, value: string): void {
  computed[name] = value;
  if (WRITE) return;
  expect(golden[name], `${name}: no pinned value (KRATZEN_WRITE_GOLDEN=1 writes them)`).toBeDefined();
  expect(value, name).toBe(golden[name]);
}

describe.each(Object.entries(RULE_SETS))('behaviour pins: %s', (name, rules) => {
  it('random sessions: records and replay results', () => {
    const parts: string[] = [];
    for (let seed = 0; seed < 12; seed++) {
      const state = randomSession(rules, `golden-${seed}`);
      parts.push(JSON.stringify(stateToRecord(state)), JSON.stringify(replayResult(state)));
    }
    check(`${name}/sessions`, digest(parts));
  });

  it.each(['session', 'hand'] as const)('vector env trajectories (%s episodes)', (episode) => {
    const vec = new VecEnv({ numEnvs: 16, config: { rules, episode } }).reset('golden');
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const actions = new Int32Array(16);
    const parts: ArrayBufferView[] = [];
    for (let t = 0; t < 300; t++) {
      randomLegalActions(vec.masks, 16, NUM_ACTIONS, random, actions);
      vec.step(actions);
      parts.push(vec.observations, vec.masks, vec.rewards, vec.seats, vec.terminated, vec.truncated, vec.finalObservations);
    }
    check(`${name}/vec-${episode}`, digest(parts));
  });

  const AGENTS: Record<string, () => Agent> = {
    random: () => new RandomAgent({ seed: 3 }),
    heuristic: () => new HeuristicAgent(),
    pimc: () => new PimcAgent({ samples: 3, seed: 3 }),
  };
  it.each(Object.keys(AGENTS))('%s agent chooses the same actions', (agentName) => {
    const vec = new VecEnv({ numEnvs: 4, config: { rules } }).reset('golden-agents');
    const agent = AGENTS[agentName]!();
    const chosen: number[] = [];
    for (let t = 0; t < (agentName === 'pimc' ? 40 : 150); t++) {
      const actions = agent.act(vec.observations, vec.masks, vec.seats);
      chosen.push(...actions);
      vec.step(actions);
    }
    check(`${name}/agent-${agentName}`, digest([Int32Array.from(chosen)]));
  }, 60_000);
});

if (WRITE) {
  it('writes the pins', () => {
    writeFileSync(FILE, `${JSON.stringify({ ...golden, ...computed }, Object.keys({ ...golden, ...computed }).sort(), 2)}\n`);
  });
}
