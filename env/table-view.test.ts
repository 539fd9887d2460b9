// A long session's table view and records read in pages (env.view / env.record fromHand and
// maxHands): pages concatenate into the whole, and a page replays no further than its last hand.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS } from './rules/index.js';
import { randomLegalAction } from './policy.js';
import { VecEnv } from './vec-env.js';

function midSession(): VecEnv {
  const vec = new VecEnv({ numEnvs: 1, config: { rules: { profile: 'tavern5', players: 4, hands: 40 } } }).reset(3);
  const random = seedrandom('pages');
  const action = new Int32Array(1);
  for (let step = 0; step < 20_000 && vec.fullRecord(0).numHands < 21; step++) {
    action[0] = randomLegalAction(vec.masks, 0, NUM_ACTIONS, random);
    vec.step(action);
  }
  // Stop inside a hand, so the view's history holds the hand in progress.
  for (let k = 0; k < 3; k++) {
    action[0] = randomLegalAction(vec.masks, 0, NUM_ACTIONS, random);
    vec.step(action);
  }
  return vec;
}

const pages = (total: number, size: number) => Array.from({ length: Math.ceil(total / size) + 1 }, (_, p) => ({ from: p * size, count: size }));

describe('pages of a session', () => {
  const vec = midSession();
  const finished = vec.fullRecord(0).numHands;

  it('view history and settlements in pages concatenate into the whole view, for every seat', () => {
    expect(finished).toBeGreaterThanOrEqual(21);
    for (let seat = 0; seat < 4; seat++) {
      const whole = vec.tableView(0, seat);
      expect(whole.history.length).toBe(finished + 1); // and the hand in progress
      const parts = pages(finished + 1, 7).map((range) => vec.tableView(0, seat, 'current', range));
      expect(parts.flatMap((p) => p.history)).toEqual(whole.history);
      expect(parts.flatMap((p) => p.settlements)).toEqual(whole.settlements);
      expect(parts[0]!.view).toEqual(whole.view);
    }
  });

  it('seat records and full records in pages concatenate into the whole, with the count of every finished hand', () => {
    for (let seat = 0; seat < 4; seat++) {
      const whole = vec.seatRecord(0, seat);
      const parts = pages(finished, 5).map((range) => vec.seatRecord(0, seat, 'current', range));
      expect(parts.flatMap((p) => p.record.hands)).toEqual(whole.record.hands);
      for (const part of parts) expect(part.numHands).toBe(finished);
    }
    const whole = vec.fullRecord(0);
    const parts = pages(finished, 6).map((range) => vec.fullRecord(0, 'current', range));
    expect(parts.flatMap((p) => p.record.hands)).toEqual(whole.record.hands);
    expect(parts.at(-1)!.record.hands).toEqual([]);
  });

  it('replays a hand at a time, and no further than the page', () => {
    const count = (range?: { from: number; count: number }) => {
      const steps = vec.tableViewSteps(0, 0, 'current', range);
      let yields = 0;
      while (!steps.next().done) yields++;
      return yields;
    };
    expect(count()).toBe(finished + 1);
    expect(count({ from: 2, count: 3 })).toBe(5);
  });
});
