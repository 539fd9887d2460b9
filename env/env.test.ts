// Env API: checkEnv on every profile and player count, the single and multi-agent views,
// episode modes, illegal-action policies, and VecEnv / WorkerVecEnv agreement.
import { afterAll, describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import {
  IllegalActionError,
  KratzenEnv,
  MAX_SEATS,
  NUM_ACTIONS,
  OBS_SIZE,
  RandomPolicy,
  SingleAgentEnv,
  ValidationError,
  VecEnv,
  WorkerVecEnv,
  checkEnv,
  createGame,
  allocateVecBuffers,
  encodeObservation,
  decodeObservation,
  randomLegalAction,
  randomLegalActions,
  type Policy,
} from '../index.js';
import type { HandResult } from './rules/results.js';
import { parseEnvConfig } from './table.js';
import { ALL_HANDS } from './table-view.js';
import { VEC_BUFFER_NAMES, allocateVecMemory, viewVecBuffers } from './vec-env.js';

const PROFILES = [
  { profile: 'didactic4' },
  { profile: 'tavern5' },
  { profile: 'tavern5', exchange: {}, bettler: {}, startingChips: 10 },
];

describe.each(PROFILES)('checkEnv %j', (profileRules) => {
  it.each([3, 4, 5, 6])('%i players, session and hand episodes', (players) => {
    const rules = { ...profileRules, players };
    expect(checkEnv({ rules }, { episodes: 2, seed: players }).checks).toContain('autoreset');
    expect(checkEnv({ rules, episode: 'hand', rewardScale: 0.5 }, { episodes: 3, seed: players }).steps).toBeGreaterThan(10);
  });
});

describe('KratzenEnv', () => {
  it('rejects a bad config naming the field', () => {
    expect(() => new KratzenEnv({ rules: { players: 9 } })).toThrow(/rules\.players/);
    expect(() => new KratzenEnv({ episode: 'game' } as never)).toThrow(ValidationError);
    expect(() => new KratzenEnv({ speed: 1 } as never)).toThrow(/speed/);
  });

  it('resets from a seed deterministically, with float32 observations and uint8 masks', () => {
    const a = new KratzenEnv().reset({ seed: 5 });
    const b = new KratzenEnv().reset({ seed: 5 });
    const c = new KratzenEnv().reset({ seed: 6 });
    expect(a.obs).toBeInstanceOf(Float32Array);
    expect(a.obs.length).toBe(OBS_SIZE);
    expect(a.mask).toBeInstanceOf(Uint8Array);
    expect(a.mask.length).toBe(NUM_ACTIONS);
    expect(Array.from(a.obs)).toEqual(Array.from(b.obs));
    expect(Array.from(a.obs)).not.toEqual(Array.from(c.obs));
  });

  it('every seat acts in turn; rewards sum to the balances; info reports hands and the session end', () => {
    const env = new KratzenEnv({ rules: { players: 4 } });
    let step = env.reset({ seed: 1 });
    const random = seedrandom('x');
    const totals = [0, 0, 0, 0];
    let handsReported = 0;
    let session: unknown;
    for (;;) {
      expect(step.seat).toBe(env.agentSelection);
      const result = env.step(randomLegalAction(step.mask, 0, NUM_ACTIONS, random));
      result.reward.forEach((r, s) => (totals[s]! += r));
      handsReported += result.info.hands?.length ?? 0;
      session ??= result.info.session;
      if (result.terminated) break;
      step = result;
    }
    expect(handsReported).toBe(4);
    const balances = Array.from(env.state.balances, (u) => u / 4);
    totals.forEach((t, s) => expect(t).toBeCloseTo(balances[s]!, 4));
    expect(session).toMatchObject({ balances });
    expect(env.agentSelection).toBe(-1);
    expect(() => env.step(0)).toThrow(/reset/);
  });

  it('last() gives the seat to act its rewards since it last acted', () => {
    const env = new KratzenEnv({ rules: { players: 3 } });
    env.reset({ seed: 2 });
    const random = seedrandom('y');
    const since = [0, 0, 0];
    for (let t = 0; t < 200 && env.agentSelection >= 0; t++) {
      const { seat, reward, mask } = env.last();
      expect(reward).toBeCloseTo(since[seat]!, 4);
      since[seat] = 0;
      const result = env.step(randomLegalAction(mask, 0, NUM_ACTIONS, random));
      result.reward.forEach((r, s) => (since[s]! += r));
    }
  });

  it('last() after the episode ends says how, as step() did: a maxSteps cut is a truncation (it said terminated) [env probe, session 33]', () => {
    const cut = new KratzenEnv({ maxSteps: 3 });
    let r = cut.reset({ seed: 1 });
    let step;
    for (let k = 0; k < 3; k++) r = step = cut.step(r.mask.indexOf(1));
    expect([step!.terminated, step!.truncated]).toEqual([false, true]);
    expect(cut.last()).toMatchObject({ seat: -1, terminated: false, truncated: true });
    const illegal = new KratzenEnv({ illegalAction: 'terminate' });
    const first = illegal.reset({ seed: 1 });
    expect(illegal.step(first.mask.indexOf(0))).toMatchObject({ terminated: true, truncated: false });
    expect(illegal.last()).toMatchObject({ terminated: true, truncated: false });
    illegal.reset({ seed: 2 });
    expect(illegal.last()).toMatchObject({ terminated: false, truncated: false });
  });

  it('hand episodes: one hand each, the pot and balances carried into the next', () => {
    const env = new KratzenEnv({ episode: 'hand', rules: { players: 4 } });
    let step = env.reset({ seed: 3 });
    const random = seedrandom('z');
    let episodes = 0;
    let lastBalances = [0, 0, 0, 0];
    while (episodes < 6) {
      const result = env.step(randomLegalAction(step.mask, 0, NUM_ACTIONS, random));
      if (result.terminated) {
        expect(result.info.hands?.length).toBe(1);
        lastBalances = result.info.hands![0]!.balances;
        episodes++;
        step = env.reset();
        const view = env.view();
        if (episodes % 4 !== 0) {
          // The session continues: the balances the next hand starts from are the last ones.
          expect(env.state.results.length).toBe(episodes % 4);
          expect(view.pot).toBeGreaterThanOrEqual(0);
        }
        expect(lastBalances.length).toBe(4);
      } else step = result;
    }
  });

  it('throws on an illegal action by default; terminate mode ends the episode with the penalty', () => {
    const env = new KratzenEnv();
    const { mask } = env.reset({ seed: 4 });
    const illegal = mask.indexOf(0);
    expect(() => env.step(illegal)).toThrow(IllegalActionError);
    const lenient = new KratzenEnv({ illegalAction: 'terminate', illegalActionPenalty: 7 });
    const first = lenient.reset({ seed: 4 });
    const result = lenient.step(illegal);
    expect(result.terminated).toBe(true);
    // The penalty comes with what every seat had pending, the deal's antes here (they were
    // dropped, and the rewards no longer summed to the balances) [Python probe, session 33].
    const balances = Array.from(lenient.state.balances);
    expect(Array.from(result.reward)).toEqual(balances.map((b, s) => b / 4 - (s === first.seat ? 7 : 0)));
    expect(balances[first.seat]).toBeLessThan(0);
    expect(result.info.illegalActionSeat).toBe(first.seat);
    // Over the pot too, and for a single-agent learner that acts first (it had nothing pending from opponents).
    const byPot = new KratzenEnv({ illegalAction: 'terminate', illegalActionPenalty: 7, rewardNormalization: 'pot' });
    byPot.reset({ seed: 4 });
    const pot = byPot.state.pot / 4;
    const potRewards = byPot.step(illegal).reward;
    balances.forEach((b, s) => expect(potRewards[s]).toBeCloseTo(b / 4 / pot - (s === first.seat ? 7 / pot : 0), 6));
    const single = new SingleAgentEnv({ config: { illegalAction: 'terminate', illegalActionPenalty: 7 }, learnerSeat: first.seat });
    expect(single.reset({ seed: 4 }).info.skippedReward).toBe(0);
    expect(single.step(illegal).reward).toBe(balances[first.seat]! / 4 - 7);
    expect(Array.from(result.mask).every((m) => m === 0)).toBe(true);
  });

  it('truncates after maxSteps', () => {
    const env = new KratzenEnv({ maxSteps: 5 });
    let step = env.reset({ seed: 1 });
    const random = seedrandom('t');
    for (let t = 0; t < 4; t++) step = env.step(randomLegalAction(step.mask, 0, NUM_ACTIONS, random));
    const result = env.step(randomLegalAction(step.mask, 0, NUM_ACTIONS, random));
    expect(result.truncated).toBe(true);
    expect(result.terminated).toBe(false);
  });
});

describe('rewardNormalization pot', () => {
  it('divides each seat\'s chip changes by the pot at its latest decision; the same trajectory as chips', () => {
    const rules = { profile: 'tavern5', players: 4 };
    const chips = new KratzenEnv({ rules, episode: 'hand', rewardScale: 1 });
    const pot = new KratzenEnv({ rules, episode: 'hand', rewardNormalization: 'pot' });
    let a = chips.reset({ seed: 3 });
    let b = pot.reset({ seed: 3 });
    const factor = new Array<number>(4).fill(1 / Math.max(1, pot.state.pot / 5));
    let checked = 0;
    for (let t = 0; t < 400; t++) {
      expect(Array.from(b.obs)).toEqual(Array.from(a.obs));
      const action = a.mask.indexOf(1);
      factor[a.seat] = 1 / Math.max(1, pot.state.pot / 5);
      const sa = chips.step(action);
      const sb = pot.step(action);
      for (let s = 0; s < 4; s++) {
        expect(sb.reward[s]).toBeCloseTo(sa.reward[s]! * factor[s]!, 5);
        if (sa.reward[s] !== 0) checked++;
      }
      if (sa.terminated) {
        a = chips.reset();
        b = pot.reset();
        factor.fill(1 / Math.max(1, pot.state.pot / 5));
      } else {
        a = sa;
        b = sb;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('is refused when misspelt, naming the field', () => {
    expect(() => new KratzenEnv({ rewardNormalization: 'pots' as never })).toThrow(/rewardNormalization/);
  });
});

describe('SingleAgentEnv', () => {
  it('has no state before its first reset, and says so as KratzenEnv does (it gave undefined) [probe round 14]', () => {
    expect(() => new SingleAgentEnv({ config: { rules: { players: 4 } } }).state).toThrow('call reset() first');
    expect(() => new KratzenEnv({ rules: { players: 4 } }).state).toThrow('call reset() first');
    // Without a seat, view() read the table's observer first: a TypeError [probe, session 38].
    for (const read of [(env: KratzenEnv) => env.view(), (env: KratzenEnv) => env.view(0), (env: KratzenEnv) => env.observe(0)]) {
      expect(() => read(new KratzenEnv({ rules: { players: 4 } }))).toThrow('call reset() first');
    }
  });

  it('returns only at the learner\'s turns; its rewards sum to its balance over the session', () => {
    const calls: number[] = [];
    const spy: Policy = {
      act(obs, masks, seats) {
        calls.push(seats[0]!);
        return new RandomPolicy(seats[0]).act(obs, masks, seats);
      },
    };
    const env = new SingleAgentEnv({ config: { rules: { players: 4 } }, learnerSeat: 2, opponents: spy });
    let { mask } = env.reset({ seed: 8 });
    const random = seedrandom('s');
    let total = 0;
    for (;;) {
      expect(env.state.currentSeat).toBe(2);
      const step = env.step(randomLegalAction(mask, 0, NUM_ACTIONS, random));
      total += step.reward;
      if (step.terminated) {
        expect(total).toBeCloseTo(step.info.balances[2]!, 4);
        break;
      }
      mask = step.mask;
    }
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((s) => s !== 2)).toBe(true);
  });

  // Its default random opponents drew on from one stream across resets: reset({ seed }) dealt the
  // same cards but the bots played otherwise (probe finding).
  it('equal seeds give equal episodes with its default opponents', () => {
    const env = new SingleAgentEnv({ config: { episode: 'hand', rules: { players: 4 } } });
    const episode = () => {
      let { obs, mask } = env.reset({ seed: 7 });
      const seen = [Array.from(obs)];
      for (;;) {
        const step = env.step(mask.indexOf(1));
        seen.push(Array.from(step.obs), [step.reward]);
        if (step.terminated || step.truncated) return seen;
        ({ obs, mask } = step);
      }
    };
    const first = episode();
    expect(first.length).toBeGreaterThan(4);
    expect(episode()).toEqual(first);
    // Play in between (an unseeded episode) does not change what the seed plays.
    env.reset();
    expect(episode()).toEqual(first);
  });
});

/** The first index where two arrays of the same length differ, -1 when none does (toEqual is slow on big typed arrays). */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

describe('VecEnv', () => {
  it('states its autoreset mode and gives each env its own seed', () => {
    const vec = new VecEnv({ numEnvs: 3 }).reset(9);
    expect(vec.metadata.autoresetMode).toBe('same-step');
    const rows = [0, 1, 2].map((i) => Array.from(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE)));
    expect(rows[0]).not.toEqual(rows[1]);
    const again = new VecEnv({ numEnvs: 3 }).reset(9);
    expect(Array.from(again.observations)).toEqual(Array.from(vec.observations));
    expect(vec.rewards.length).toBe(3 * MAX_SEATS);
  });

  it('steps a chunk of envs at a time, with the same buffers as each env stepped in a VecEnv of its own', () => {
    // 150 envs cross two chunk boundaries (vec-env.ts' STEP_CHUNK).
    const n = 150;
    const config = { rules: { profile: 'tavern5', players: 5, exchange: {} }, episode: 'hand' as const };
    const whole = new VecEnv({ numEnvs: n, config }).reset(21);
    const alone = Array.from({ length: n }, (_, i) => new VecEnv({ numEnvs: 1, config, firstEnvIndex: i }).reset(21));
    const random = seedrandom('chunks');
    const actions = new Int32Array(n);
    let ends = 0;
    for (let t = 0; t < 120; t++) {
      for (let i = 0; i < n; i++) actions[i] = randomLegalAction(whole.masks, i, NUM_ACTIONS, random);
      whole.step(actions);
      for (let i = 0; i < n; i++) {
        const one = alone[i]!;
        one.step([actions[i]!]);
        const rows = { observations: OBS_SIZE, finalObservations: OBS_SIZE, masks: NUM_ACTIONS, rewards: MAX_SEATS, seats: 1, terminated: 1, truncated: 1 };
        for (const [name, size] of Object.entries(rows) as [keyof typeof rows, number][]) {
          const mine = whole[name].subarray(i * size, (i + 1) * size);
          expect(firstDifference(mine, one[name]), `${name} of env ${i} at step ${t}`).toBe(-1);
        }
        expect(whole.finalInfo(i)).toEqual(one.finalInfo(0));
      }
      ends += whole.terminated.reduce((a, b) => a + b, 0);
    }
    expect(ends).toBeGreaterThan(n);
  });

  it('keepEndedStates: the last finished session stays readable, in two state objects that alternate', () => {
    const kept = new VecEnv({ numEnvs: 1, keepEndedStates: true }).reset(4);
    const plain = new VecEnv({ numEnvs: 1 }).reset(4);
    const objects = new Set<unknown>([kept.stateOf(0)]);
    let ends = 0;
    for (let t = 0; t < 2000 && ends < 4; t++) {
      const action = kept.masks.indexOf(1);
      const before = kept.stateOf(0);
      kept.step([action]);
      plain.step([action]);
      expect(Array.from(kept.observations)).toEqual(Array.from(plain.observations)); // same trajectory
      objects.add(kept.stateOf(0));
      if (!kept.terminated[0]) continue;
      ends++;
      expect(kept.endedStateOf(0)).toBe(before);
      expect(before.complete).toBe(true);
      expect(kept.stateOf(0)).not.toBe(before);
    }
    expect(ends).toBe(4);
    expect(objects.size).toBe(2);
    // Anything but 'current' read as 'ended' [probe].
    expect(kept.tableView(0, 0, 'ended').complete).toBe(true);
    for (const episode of ['bogus', 'Ended', undefined, null]) {
      if (episode === undefined) continue;
      expect(() => kept.tableView(0, 0, episode as never)).toThrow(/episode must be 'current' or 'ended'/);
      expect(() => kept.seatRecord(0, 0, episode as never)).toThrow(/episode must be 'current' or 'ended'/);
    }
    // No options at all named nothing ("Cannot convert undefined or null to object").
    expect(() => new (VecEnv as new (o?: unknown) => VecEnv)()).toThrow(/VecEnv takes an object of options .*got undefined/);
  });

  // An episode reset before it ended was never finished: the ended views showed it as the last
  // finished one (probe finding), for resetEnvs and reset alike, seeded or not.
  it.each([
    ['resetEnvs', (vec: VecEnv) => vec.resetEnvs([1])],
    ['reset(seed)', (vec: VecEnv) => vec.reset(9)],
  ] as const)('keepEndedStates: an episode abandoned by %s does not replace the last finished one', (_, abandon) => {
    const vec = new VecEnv({ numEnvs: 1, config: { maxSteps: 5 }, keepEndedStates: true }).reset(1);
    const first = () => [vec.masks.indexOf(1)];
    for (let t = 0; t < 5; t++) vec.step(first());
    expect(vec.truncated[0]).toBe(1);
    const ended = vec.endedStateOf(0)!;
    const endedActions = ended.handLogs()[0]!.actions.length;
    expect(endedActions).toBe(5);
    vec.step(first());
    vec.step(first());
    abandon(vec);
    expect(vec.endedStateOf(0)).toBe(ended);
    expect(vec.endedStateOf(0)!.handLogs()[0]!.actions.length).toBe(5);
    expect(vec.tableView(0, 0, 'ended').history[0]!.actions.length).toBe(5);
    // The next episode that ends is kept as before.
    for (let t = 0; t < 5; t++) vec.step(first());
    expect(vec.truncated[0]).toBe(1);
    expect(vec.endedStateOf(0)).not.toBe(ended);
    expect(vec.endedStateOf(0)!.handLogs()[0]!.actions.length).toBe(5);
  });

  // A hand episode's "ended" state is the session it belongs to: the current state while the
  // session goes on, the kept one once the autoreset began a new session (probe finding).
  it.each([
    ['multi-agent', {}],
    ['single-agent', { opponents: new RandomPolicy(3), learnerSeat: 1 }],
  ])('hand episodes, %s: the ended episode is read from the session that played it', (_, options) => {
    const vec = new VecEnv({ numEnvs: 1, config: { episode: 'hand', rules: { players: 3, hands: 2 } }, keepEndedStates: true, ...options }).reset(6);
    const seat = 'learnerSeat' in options ? options.learnerSeat : 0;
    const random = seedrandom('ended');
    const seen: number[] = [];
    for (let t = 0; t < 5000 && seen.length < 4; t++) {
      vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      if (!vec.terminated[0] && !vec.truncated[0]) continue;
      const info = vec.finalInfo(0)!;
      const view = vec.tableView(0, seat, 'ended');
      seen.push(info.hands);
      expect(view.settlements.length).toBe(info.hands);
      expect(vec.seatRecord(0, seat, 'ended').numHands).toBe(info.hands);
      expect(view.complete).toBe(info.hands === 2);
      if (view.complete) expect(view.view.balances).toEqual(info.balances);
    }
    // Hands 1 and 2 of the first session, then of the next one: the second of each ended it.
    expect(seen).toEqual([1, 2, 1, 2]);
  });

  // A hand episode that ended while its session goes on shows that hand's end, not the next
  // hand the autoreset dealt (probe finding: the view, seat to act and history were the live
  // next hand's). Every seat's view matches its final observation.
  it.each(['didactic4', 'tavern5'] as const)('hand episodes, %s: an ended hand whose session goes on is shown as it ended, however far the next hand is', (profile) => {
    const vec = new VecEnv({ numEnvs: 1, config: { episode: 'hand', rules: { profile, players: 4, hands: 3 } }, keepEndedStates: true, finalObservationsOfEverySeat: true }).reset(11);
    const random = seedrandom('hand-end');
    const row = new Float32Array(OBS_SIZE);
    let checked = 0;
    for (let t = 0; t < 5000 && checked < 6; t++) {
      vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      if (!vec.terminated[0] && !vec.truncated[0]) continue;
      const info = vec.finalInfo(0)!;
      if (info.hands === 3) continue;
      // Into the next hand: its first actions must not show in the ended view.
      for (let k = 0; k < 3; k++) vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      expect(vec.tableView(0, 0).history.at(-1)!.hand).toBe(info.hands);
      expect(vec.seatToActIn(0, 'ended')).toBe(-1);
      for (let seat = 0; seat < 4; seat++) {
        const ended = vec.tableView(0, seat, 'ended');
        vec.finalObservationOf(0, seat, row);
        // Amounts come back from the observation's symlog to within float32.
        const rounded = (x: unknown) => JSON.parse(JSON.stringify(x, (_, v) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v)));
        expect(rounded(ended.view)).toEqual(rounded(decodeObservation(row, 0)));
        expect(ended.handIndex).toBe(info.hands);
        expect(ended.legal).toEqual([]);
        expect(ended.history.map((h) => h.hand)).toEqual([...Array(info.hands).keys()]);
        expect(ended.settlements.length).toBe(info.hands);
        expect(ended.view.balances).toEqual(info.balances);
        expect(vec.seatRecord(0, seat, 'ended').record.hands.length).toBe(info.hands);
      }
      checked++;
    }
    expect(checked).toBe(6);
  });

  // A reset in the middle of the hand after a reported one abandons that hand: the ended view
  // stays at the reported hand's end, not the abandoned hand's middle.
  it('hand episodes: a reset during the next hand leaves the ended hand as it ended', () => {
    const vec = new VecEnv({ numEnvs: 1, config: { episode: 'hand', rules: { players: 4, hands: 5 } }, keepEndedStates: true }).reset(2);
    const random = seedrandom('abandon-hand');
    for (let t = 0; t < 500 && !vec.terminated[0]; t++) vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
    expect(vec.finalInfo(0)!.hands).toBe(1);
    const before = vec.tableView(0, 1, 'ended');
    for (let k = 0; k < 3; k++) vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
    vec.reset(7);
    const after = vec.tableView(0, 1, 'ended');
    expect(after).toEqual(before);
    expect(after.history.map((h) => h.hand)).toEqual([0]);
    expect(vec.fullRecord(0, 'ended')).toMatchObject({ numHands: 1, complete: false });
    expect(vec.seatToActIn(0, 'ended')).toBe(-1);
  });

  // A hand the bots play through before the learner can act (here tavern5 walkovers) is never
  // reported: the ended view stays at the hand whose end was (probe finding: it showed the
  // unreported one, the session's last finished hand).
  it('single-agent hand episodes: a hand played through unseen after the reported one is not shown as ended', () => {
    const vec = new VecEnv({ numEnvs: 1, config: { episode: 'hand', rules: { profile: 'tavern5', players: 3, hands: 40 } }, opponents: new RandomPolicy(2), learnerSeat: 0, keepEndedStates: true }).reset(4);
    const random = seedrandom('unseen-hands');
    let unseen = 0;
    let ends = 0;
    for (let t = 0; t < 20000 && unseen < 3; t++) {
      vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      if (!vec.terminated[0] && !vec.truncated[0]) continue;
      ends++;
      const info = vec.finalInfo(0)!;
      const ended = vec.tableView(0, 0, 'ended');
      expect(ended.settlements.length).toBe(info.hands);
      expect(ended.view.balances).toEqual(info.balances);
      const full = vec.fullRecord(0, 'ended');
      expect(full.numHands).toBe(info.hands);
      expect(full.record.hands!.length).toBe(info.hands);
      expect(full.complete).toBe(ended.complete);
      if (!ended.complete && vec.tableView(0, 0).settlements.length > info.hands) unseen++;
    }
    expect(unseen).toBe(3);
    expect(ends).toBeGreaterThan(3);
  });

  // An episode that ends before the learner acts (here cut off by maxSteps during the bots'
  // moves) is played through by the reset and never reported: "ended" must still show the
  // episode the last reported end described (probe finding: it showed the unreported one).
  it.each(['hand', 'session'] as const)('single-agent %s episodes: an episode played through unseen does not replace the ended one', (episode) => {
    const config = { episode, maxSteps: 3, rules: { players: 3, hands: 2 } };
    const vec = new VecEnv({ numEnvs: 1, config, opponents: new RandomPolicy(5), learnerSeat: 0, keepEndedStates: true }).reset(1);
    const random = seedrandom('unseen');
    let ends = 0;
    for (let t = 0; t < 300; t++) {
      vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      if (!vec.terminated[0] && !vec.truncated[0]) continue;
      ends++;
      const reported = decodeObservation(vec.finalObservations, 0);
      const ended = vec.tableView(0, 0, 'ended').view;
      expect({ hand: ended.hand, dealer: ended.dealer, playedBy: ended.playedBy, declarations: ended.declarations }).toEqual({
        hand: reported.hand,
        dealer: reported.dealer,
        playedBy: reported.playedBy,
        declarations: reported.declarations,
      });
    }
    expect(ends).toBeGreaterThan(50);
  });

  // A tavern5 hand whose walkover the learner deals has no learner decision: reset plays it
  // through, and its rewards go into the next episode's first step (probe finding: they were lost).
  it('single-agent hand episodes: the rewards of hands played through at a reset still reach the learner', () => {
    const config = { episode: 'hand' as const, rules: { profile: 'tavern5', players: 3, hands: 200 } };
    const vec = new VecEnv({ numEnvs: 1, config, opponents: new RandomPolicy(2), learnerSeat: 0 }).reset(2);
    const random = seedrandom('skip2');
    let sum = 0;
    let hands = 0;
    let skips = 0;
    for (let t = 0; t < 3000; t++) {
      vec.step([randomLegalAction(vec.masks, 0, NUM_ACTIONS, random)]);
      sum += vec.rewards[0]!;
      if (!vec.terminated[0] && !vec.truncated[0]) continue;
      const info = vec.finalInfo(0)!;
      if (info.hands < hands) break; // the session is over
      if (info.hands > hands + 1) skips++;
      hands = info.hands;
      expect(sum).toBeCloseTo(info.balances[0]!, 4);
    }
    expect(skips).toBeGreaterThan(0);
    expect(hands).toBeGreaterThan(150);
  });
});

describe('VecEnv finalObservationsOfEverySeat', () => {
  // A turn-based client shows every agent the table as the episode left it: the observer's
  // finalObservations row alone left the others with views from before the final actions.
  it('keeps each seat\'s observation of the end of every ended episode', () => {
    const numEnvs = 16;
    const vec = new VecEnv({ numEnvs, keepEndedStates: true, finalObservationsOfEverySeat: true, config: { rules: { profile: 'tavern5', players: 5, hands: 2 } } }).reset(3);
    expect(() => vec.finalObservationOf(0, 0, new Float32Array(OBS_SIZE))).toThrow(/env 0 has not ended an episode yet/);
    const random = seedrandom('every-seat');
    const actions = new Int32Array(numEnvs);
    const expected = new Float32Array(OBS_SIZE);
    const got = new Float32Array(OBS_SIZE);
    let checked = 0;
    for (let step = 0; step < 400; step++) {
      vec.step(randomLegalActions(vec.masks, numEnvs, NUM_ACTIONS, random, actions));
      for (let i = 0; i < numEnvs; i++) {
        if (!vec.terminated[i] && !vec.truncated[i]) continue;
        const ended = vec.endedStateOf(i)!;
        for (let seat = 0; seat < 5; seat++) {
          encodeObservation(ended, seat, expected);
          vec.finalObservationOf(i, seat, got);
          expect(got).toEqual(expected);
        }
        // The observer's is the finalObservations row.
        const observerSeat = decodeObservation(vec.finalObservations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE)).seat;
        vec.finalObservationOf(i, observerSeat, got);
        expect(got).toEqual(vec.finalObservations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(() => vec.finalObservationOf(0, 5, got)).toThrow(/seat must be a seat 0..4, got 5/);
    expect(() => vec.finalObservationOf(16, 0, got)).toThrow(RangeError);
  });

  it('is for multi-agent tables, and kept only when asked for', () => {
    expect(() => new VecEnv({ numEnvs: 1, finalObservationsOfEverySeat: true, opponents: new RandomPolicy(1) })).toThrow(/multi-agent tables/);
    const plain = new VecEnv({ numEnvs: 1 }).reset(0);
    expect(() => plain.finalObservationOf(0, 0, new Float32Array(OBS_SIZE))).toThrow(/observer only/);
  });
});

describe('VecEnv single-agent mode and reset mask', () => {
  it('steps the same trajectories as SingleAgentEnvs with the same opponents and seeds', () => {
    const config = { rules: { profile: 'tavern5', players: 5 }, episode: 'hand' } as const;
    const n = 3;
    const vec = new VecEnv({ numEnvs: n, config, opponents: new RandomPolicy(5), learnerSeat: 2 }).reset(8);
    // One shared opponent, acting for the envs in order: the same draws as three envs stepped in turn.
    const opponents = new RandomPolicy(5);
    const envs = Array.from({ length: n }, () => new SingleAgentEnv({ config, learnerSeat: 2, opponents }));
    const current: { obs: Float32Array; mask: Uint8Array }[] = envs.map((env, i) => env.reset({ seed: `8:${i}` }));
    const random = seedrandom('learner');
    let ended = 0;
    for (let t = 0; t < 300; t++) {
      for (let i = 0; i < n; i++) {
        expect(Array.from(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE))).toEqual(Array.from(current[i]!.obs));
        expect(Array.from(vec.masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS))).toEqual(Array.from(current[i]!.mask));
        expect(vec.seats[i]).toBe(2);
      }
      const actions = current.map((c) => randomLegalAction(c.mask, 0, NUM_ACTIONS, random));
      vec.step(actions);
      for (let i = 0; i < n; i++) {
        const step = envs[i]!.step(actions[i]!);
        expect(vec.rewards[i * MAX_SEATS + 2]).toBe(step.reward);
        expect(vec.terminated[i]).toBe(step.terminated ? 1 : 0);
        current[i] = step.terminated || step.truncated ? envs[i]!.reset() : step;
        ended += vec.terminated[i]!;
      }
    }
    expect(ended).toBeGreaterThan(10);
  });

  it('steps and resets an env a decision of its opponents at a time, as step and reset do in one piece', () => {
    const config = { rules: { profile: 'tavern5', players: 5 }, episode: 'hand' } as const;
    const n = 3;
    // Counts the opponents' decisions, which the pieces are to follow.
    let decisions = 0;
    const counted = (seed: number): Policy => {
      const random = new RandomPolicy(seed);
      return { act: (o, m, s) => (decisions++, random.act(o, m, s)) };
    };
    const whole = new VecEnv({ numEnvs: n, config, opponents: new RandomPolicy(5), learnerSeat: 2 }).reset(8);
    const pieces = new VecEnv({ numEnvs: n, config, opponents: counted(5), learnerSeat: 2 });
    const drainCounting = (steps: Generator<void, void>) => {
      let yields = 0;
      for (const _piece of steps) yields++;
      return yields;
    };
    for (let i = 0; i < n; i++) {
      decisions = 0;
      const yields = drainCounting(pieces.resetEnvSteps(i, 8));
      // A piece ends at each decision but the last (the learner acts after it).
      expect(yields).toBe(Math.max(0, decisions - 1));
    }
    const random = seedrandom('pieces');
    let ended = 0;
    let yieldsSeen = 0;
    for (let t = 0; t < 200; t++) {
      expect(Array.from(pieces.observations)).toEqual(Array.from(whole.observations));
      expect(Array.from(pieces.masks)).toEqual(Array.from(whole.masks));
      const actions = Array.from({ length: n }, (_, i) => randomLegalAction(whole.masks, i, NUM_ACTIONS, random));
      whole.step(actions);
      for (let i = 0; i < n; i++) yieldsSeen += drainCounting(pieces.stepEnvSteps(actions, i));
      expect(Array.from(pieces.rewards)).toEqual(Array.from(whole.rewards));
      expect(Array.from(pieces.terminated)).toEqual(Array.from(whole.terminated));
      expect(Array.from(pieces.finalObservations)).toEqual(Array.from(whole.finalObservations));
      ended += whole.terminated.reduce((a, b) => a + b, 0);
    }
    expect(ended).toBeGreaterThan(10);
    expect(yieldsSeen).toBeGreaterThan(200);

    // Stopped part-way (a server's client gone), the env is left failed, with no legal action,
    // until it is reset; the vector is not left busy.
    const env = 1;
    const actions = Array.from({ length: n }, (_, i) => randomLegalAction(pieces.masks, i, NUM_ACTIONS, random));
    /** Runs `start(k)` until one of them yields, then stops that one there: whether one did within 50. */
    const stopAtFirstPiece = (start: (k: number) => Generator<void, void>) => {
      for (let k = 0; k < 50; k++) {
        const steps = start(k);
        if (!steps.next().done) return steps.return(undefined), true;
      }
      return false;
    };
    const stopped = stopAtFirstPiece(() => {
      actions[env] = randomLegalAction(pieces.masks, env, NUM_ACTIONS, random);
      return pieces.stepEnvSteps(actions, env);
    });
    expect(stopped).toBe(true);
    expect(pieces.masks.subarray(env * NUM_ACTIONS, (env + 1) * NUM_ACTIONS).every((x) => x === 0)).toBe(true);
    expect(pieces.explainIllegal(env, actions[env]!)).toMatch(/stopped before its opponents had played: reset this env/);
    expect(() => pieces.step(actions)).toThrow(/stopped before its opponents had played: reset this env/);
    pieces.resetEnvs(Array.from({ length: n }, (_, i) => (i === env ? 1 : 0)));
    expect(pieces.masks.subarray(env * NUM_ACTIONS, (env + 1) * NUM_ACTIONS).some((x) => x === 1)).toBe(true);

    // A reset stopped part-way leaves its env failed the same way, and the vector free.
    expect(stopAtFirstPiece((seed) => pieces.resetEnvSteps(env, seed))).toBe(true);
    expect(pieces.masks.subarray(env * NUM_ACTIONS, (env + 1) * NUM_ACTIONS).every((x) => x === 0)).toBe(true);
    expect(pieces.explainIllegal(env, 0)).toMatch(/stopped before its opponents had played/);
    pieces.resetRange(env, env + 1, 3);
    expect(pieces.masks.subarray(env * NUM_ACTIONS, (env + 1) * NUM_ACTIONS).some((x) => x === 1)).toBe(true);
  });

  it('a reset that fails at one env clears the episode-end flags of the envs after it too', () => {
    let failing = false;
    const random = new RandomPolicy(4);
    const opponents: Policy = {
      act: (o, m, s) => {
        if (failing) throw new Error('opponent down');
        return random.act(o, m, s);
      },
    };
    const n = 4;
    const vec = new VecEnv({ numEnvs: n, config: { rules: { players: 4 }, episode: 'hand' }, opponents, learnerSeat: 1 }).reset(2);
    const pick = seedrandom('flags');
    let t = 0;
    // Until an env after the first ends an episode in a step.
    do vec.step(Array.from({ length: n }, (_, i) => randomLegalAction(vec.masks, i, NUM_ACTIONS, pick)));
    while (!vec.terminated.subarray(1).some((x) => x === 1) && ++t < 500);
    expect(t).toBeLessThan(500);
    failing = true;
    // Env 0's opponents act first at the reset (seat 0 leads before the learner's seat 1).
    expect(() => vec.reset(9)).toThrow(/env 0: opponent down/);
    expect(Array.from(vec.terminated)).toEqual([0, 0, 0, 0]);
    expect(vec.finalInfo(1)).toBeNull();
  });

  it('resetEnvs resets the marked envs only: seeded like reset(seed), or on in their own sequence', () => {
    const rowOf = (vec: VecEnv, i: number) => Array.from(vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE));
    const vec = new VecEnv({ numEnvs: 3 }).reset(1);
    const actions = [0, 1, 2].map((i) => vec.masks.indexOf(1, i * NUM_ACTIONS) - i * NUM_ACTIONS);
    vec.step(actions);
    const stepped = [0, 1, 2].map((i) => rowOf(vec, i));
    vec.resetEnvs([0, 1, 0], 5);
    expect(rowOf(vec, 0)).toEqual(stepped[0]);
    expect(rowOf(vec, 2)).toEqual(stepped[2]);
    expect(rowOf(vec, 1)).toEqual(rowOf(new VecEnv({ numEnvs: 3 }).reset(5), 1));
    // Without a seed env 0 moves on to its next session, "1:0/1".
    vec.resetEnvs([1, 0, 0]);
    const next = new VecEnv({ numEnvs: 1, config: {} });
    next.reset(1);
    expect(rowOf(vec, 0)).not.toEqual(rowOf(next, 0));
    expect(vec.terminated[0]).toBe(0);
  });
});

describe('WorkerVecEnv', () => {
  const workers: WorkerVecEnv[] = [];
  afterAll(async () => Promise.all(workers.map((w) => w.close())));

  it.each([
    [{ rules: { profile: 'didactic4', players: 4 } }, 7, 2, 200],
    [{ rules: { profile: 'tavern5', players: 5, exchange: {} }, episode: 'hand' as const }, 5, 3, 200],
    // Workers that never poll: every command goes through Atomics.wait / notify.
    [{ rules: { profile: 'didactic4', players: 4 } }, 6, 2, 0],
  ])('follows the same trajectories as VecEnv for the same seeds (%j, %i envs, %i workers, spin %i us)', (config, numEnvs, numWorkers, spinMicroseconds) => {
    const vec = new VecEnv({ numEnvs, config }).reset(11);
    const par = new WorkerVecEnv({ numEnvs, numWorkers, config, spinMicroseconds }).reset(11);
    workers.push(par);
    const random = seedrandom('w');
    const actions = new Int32Array(numEnvs);
    let finished = 0;
    for (let t = 0; t < 400; t++) {
      expect(Array.from(par.observations)).toEqual(Array.from(vec.observations));
      expect(Array.from(par.masks)).toEqual(Array.from(vec.masks));
      expect(Array.from(par.seats)).toEqual(Array.from(vec.seats));
      for (let i = 0; i < numEnvs; i++) actions[i] = randomLegalAction(vec.masks, i, NUM_ACTIONS, random);
      vec.step(actions);
      par.step(actions);
      expect(Array.from(par.rewards)).toEqual(Array.from(vec.rewards));
      expect(Array.from(par.terminated)).toEqual(Array.from(vec.terminated));
      for (let i = 0; i < numEnvs; i++) {
        expect(par.finalInfo(i)).toEqual(vec.finalInfo(i));
        finished += vec.terminated[i]!;
      }
    }
    expect(finished).toBeGreaterThan(0);
  });

  it('rejects a negative polling time before starting workers', () => {
    expect(() => new WorkerVecEnv({ numEnvs: 2, spinMicroseconds: -1 })).toThrow(/spinMicroseconds/);
  });

  it('reports an illegal action from a worker as an error', () => {
    const par = new WorkerVecEnv({ numEnvs: 2, numWorkers: 2 }).reset(1);
    workers.push(par);
    const illegal = new Int32Array([par.masks.indexOf(0), par.masks.indexOf(0)]);
    expect(() => par.step(illegal)).toThrow(/illegal/);
    // A seed past what shared memory carries is a bad seed, named as VecEnv names one (a bare RangeError).
    expect(() => par.reset('x'.repeat(2000))).toThrow(expect.objectContaining({ field: 'seed', reason: expect.stringMatching(/at most 1024 bytes/) }));
    expect(par.reset('é'.repeat(512)).numEnvs).toBe(2);
  });
});

describe('an amount overflow (docs/rules.md §3, Ledger)', () => {
  it('refuses a config whose first deal already overflows: no session could ever start', () => {
    for (const rules of [{ profile: 'tavern5', ante: 1801439850948198, failPenalty: 'pot' }, { profile: 'tavern5', players: 6, ante: 900719925474099, hands: 64 }]) {
      expect(() => parseEnvConfig({ rules }), JSON.stringify(rules)).toThrow(expect.objectContaining({ field: 'rules', reason: expect.stringMatching(/first deal/) }));
    }
    expect(parseEnvConfig({ rules: { profile: 'tavern5', ante: 4e14 } }).game.numPlayers).toBe(4);
  });
  it('ends the episode truncated, autoresets it, and keeps its history readable', () => {
    // Antes this large pass 2^53 units within a hand or two; the step used to throw after the
    // state had moved, leaving the env stopped for good.
    const numEnvs = 4;
    const vec = new VecEnv({ numEnvs, keepEndedStates: true, config: { rules: { profile: 'tavern5', players: 4, ante: 4e14, hands: 50 } } }).reset(1);
    const random = seedrandom('overflow');
    const actions = new Int32Array(numEnvs);
    let overflowed = -1;
    for (let step = 0; step < 3000 && overflowed < 0; step++) {
      for (let i = 0; i < numEnvs; i++) actions[i] = randomLegalAction(vec.masks, i, NUM_ACTIONS, random);
      vec.step(actions);
      for (let i = 0; i < numEnvs; i++) if (vec.buffers.truncated[i] && vec.endedStateOf(i)!.overflowed) overflowed = i;
    }
    expect(overflowed).toBeGreaterThanOrEqual(0);
    expect(vec.finalInfo(overflowed)).toMatchObject({ hands: expect.any(Number) });
    expect(vec.tableView(overflowed, 0, 'ended').history.length).toBeGreaterThan(0);
    expect(vec.seatToActIn(overflowed)).toBeGreaterThanOrEqual(0); // the next episode is under way
  });

  // Random play on a table whose antes pass 2^53 units within a hand or two: per env, the rewards
  // summed over each session episode, in chips, and the states of the sessions that overflowed.
  function playOverflowing(episode: 'hand' | 'session', steps: number, rules: Record<string, unknown> = { profile: 'tavern5', players: 4, ante: 4e14, hands: 50 }) {
    const numEnvs = 8;
    const vec = new VecEnv({ numEnvs, keepEndedStates: true, config: { episode, rules } }).reset(2);
    const random = seedrandom(`overflow-${episode}`);
    const actions = new Int32Array(numEnvs);
    const sums = Array.from({ length: numEnvs }, () => [0, 0, 0, 0]);
    // Copied when the episode ends: the VecEnv reuses the state objects (two per env, alternating).
    const ended: { inDeal: boolean; balances: number[]; last: HandResult | undefined; unitsPerChip: number; rewardSums: number[] }[] = [];
    for (let step = 0; step < steps; step++) {
      for (let i = 0; i < numEnvs; i++) actions[i] = randomLegalAction(vec.masks, i, NUM_ACTIONS, random);
      vec.step(actions);
      for (let i = 0; i < numEnvs; i++) {
        for (let s = 0; s < 4; s++) sums[i]![s]! += vec.buffers.rewards[i * MAX_SEATS + s]!;
        const state = vec.endedStateOf(i);
        if (vec.buffers.truncated[i] && state?.overflowed) {
          ended.push({
            // A deal that overflowed leaves the pot as the last settlement did (rules/scenarios.test.ts).
            inDeal: state.pot === state.results.at(-1)?.potAfter,
            balances: Array.from(state.balances).slice(0, 4),
            last: state.results.at(-1),
            unitsPerChip: state.game.unitsPerChip,
            rewardSums: sums[i]!,
          });
        }
        if (vec.buffers.terminated[i] || vec.buffers.truncated[i]) sums[i] = [0, 0, 0, 0];
      }
    }
    return { vec, ended };
  }

  it('pays the hand that settled before the next deal overflowed: a session episode sums to the ledger', () => {
    // The last hand's settlement went through and only the next deal's antes passed the bound:
    // its rewards used to be reported as 0, so the episode's rewards missed the hand. A
    // settlement that overflowed moved nothing, and its step's rewards stay 0.
    const { ended } = playOverflowing('session', 1500);
    expect(ended.filter((e) => e.inDeal).length).toBeGreaterThan(0);
    expect(ended.filter((e) => !e.inDeal).length).toBeGreaterThan(0);
    for (const { inDeal, balances, last, unitsPerChip, rewardSums } of ended) {
      if (inDeal) expect(balances).toEqual(last!.balances.slice(0, 4));
      for (let s = 0; s < 4; s++) {
        const chips = balances[s]! / unitsPerChip;
        expect(Math.abs(rewardSums[s]! - chips)).toBeLessThanOrEqual(Math.abs(chips) * 1e-5 + 1);
      }
    }
  });

  it('an exchange fee that would overflow moves nothing: the episode still sums to the ledger', () => {
    // The fee was taken from the balance before the pot's bound was checked.
    const { ended } = playOverflowing('session', 1500, { profile: 'tavern5', players: 4, ante: 1, hands: 50, exchange: { feePerCard: 1e15 } });
    expect(ended.length).toBeGreaterThan(0);
    for (const { balances, unitsPerChip, rewardSums } of ended) {
      for (let s = 0; s < 4; s++) expect(Math.abs(rewardSums[s]! - balances[s]! / unitsPerChip)).toBeLessThanOrEqual(Math.abs(balances[s]! / unitsPerChip) * 1e-5 + 1);
    }
  });

  it('hand episodes: a next deal that overflows starts a new session instead of throwing (docs/rules.md §3)', () => {
    // Hand episodes deal at the reset: an overflowing deal starts a new session there (the reset
    // used to throw), and the episodes that end truncated are those whose own hand overflowed.
    const { vec, ended } = playOverflowing('hand', 1500);
    expect(ended.length).toBeGreaterThan(0);
    expect(ended.every((e) => !e.inDeal)).toBe(true);
    // The sessions that stopped at a deal are kept as ended, their ledgers as their last hands left them.
    const stoppedAtDeal = [...Array(8).keys()].map((i) => vec.endedStateOf(i)).filter((st) => st?.overflowed && st.pot === st.results.at(-1)?.potAfter);
    expect(stoppedAtDeal.length).toBeGreaterThan(0);
  });
});

describe('refused vector steps change nothing [probe round 3b]', () => {
  const config = { rules: { players: 4 } };
  type VecLike = { buffers: Record<string, ArrayLike<number>>; masks: Uint8Array; numEnvs: number; step(a: ArrayLike<number>): unknown };
  const snapshot = (vec: VecLike) => Object.fromEntries(Object.entries(vec.buffers).map(([k, v]) => [k, Array.from(v)]));
  const legal = (vec: VecLike) => Int32Array.from({ length: vec.numEnvs }, (_, i) => randomLegalAction(vec.masks, i, NUM_ACTIONS, () => 0.5));
  /** Some action id not in env `i`'s mask row. */
  const illegalIn = (vec: VecLike, i: number) => Array.from({ length: NUM_ACTIONS }, (_, a) => a).find((a) => vec.masks[i * NUM_ACTIONS + a] === 0)!;

  it('VecEnv: a bad action at env 2 throws before env 0 moves, and the env steps on as a fresh one does', () => {
    // Envs 0 and 1 had stepped, their rows stale: the next legal-looking step was refused.
    const vec = new VecEnv({ numEnvs: 4, config }).reset(5);
    const fresh = new VecEnv({ numEnvs: 4, config }).reset(5);
    const before = snapshot(vec);
    const good = legal(vec);
    const cases: [string, ArrayLike<number>, RegExp][] = [
      ['illegal', Int32Array.from(good, (a, i) => (i === 2 ? illegalIn(vec, 2) : a)), /env 2: /],
      ['1.5', Float64Array.from(good, (a, i) => (i === 3 ? 1.5 : a)), /env 3: /],
      ['NaN', Float64Array.from(good, (a, i) => (i === 1 ? Number.NaN : a)), /env 1: /],
      ['a string', Array.from(good, (a, i) => (i === 0 ? (String(a) as unknown as number) : a)), /env 0: /],
    ];
    for (const [name, actions, message] of cases) {
      expect(() => vec.step(actions), name).toThrow(IllegalActionError);
      expect(() => vec.step(actions), name).toThrow(message);
      expect(snapshot(vec), name).toEqual(before);
    }
    for (const actions of [good.subarray(0, 3), Int32Array.from([...good, 0])]) expect(() => vec.step(actions)).toThrow(RangeError);
    expect(() => vec.stepRange(good, 0, 10)).toThrow(/env range \[0, 10\)/);
    expect(() => vec.resetRange(-5, 100)).toThrow(RangeError);
    expect(() => vec.resetEnvs([1])).toThrow(/one entry per env \(4\)/);
    expect(snapshot(vec)).toEqual(before);
    for (let step = 0; step < 30; step++) {
      const actions = legal(fresh);
      vec.step(actions);
      fresh.step(actions);
      expect(snapshot(vec)).toEqual(snapshot(fresh));
    }
  });

  it('VecEnv.refusedAction names the first action a whole step refuses by the config\'s policy, and none when illegal actions end episodes', () => {
    const vec = new VecEnv({ numEnvs: 4, config }).reset(5);
    const good = legal(vec);
    expect(vec.refusedAction(good)).toBeNull();
    const bad = Int32Array.from(good, (a, i) => (i >= 2 ? illegalIn(vec, i) : a));
    const refused = vec.refusedAction(bad)!;
    expect(refused).toMatchObject({ env: 2, action: bad[2], seat: vec.seats[2] });
    // The core's own reason, as step's error gives it.
    expect(refused.reason).toBe(vec.explainIllegal(2, bad[2]!));
    expect(() => vec.step(bad)).toThrow(refused.reason);
    const lenient = new VecEnv({ numEnvs: 4, config: { ...config, illegalAction: 'terminate' } }).reset(5);
    expect(lenient.refusedAction(bad)).toBeNull();
  });

  it('WorkerVecEnv: a bad action in one worker\'s block throws before any worker steps; 1.5, strings and short arrays are refused, not coerced', async () => {
    // set() had truncated 1.5 to 1, read '39' as 39 and kept old actions past a short array.
    const vec = new WorkerVecEnv({ numEnvs: 4, numWorkers: 2, config, spinMicroseconds: 0 }).reset(5);
    const fresh = new VecEnv({ numEnvs: 4, config }).reset(5);
    try {
      const before = snapshot(vec);
      const good = legal(vec);
      for (const actions of [
        Int32Array.from(good, (a, i) => (i === 3 ? illegalIn(vec, 3) : a)),
        Float64Array.from(good, (a, i) => (i === 2 ? a + 0.5 : a)),
        Array.from(good, (a, i) => (i === 1 ? (String(a) as unknown as number) : a)),
        Float64Array.from(good, (a, i) => (i === 0 ? a + 2 ** 32 : a)),
      ]) {
        expect(() => vec.step(actions)).toThrow(IllegalActionError);
        expect(snapshot(vec)).toEqual(before);
      }
      expect(() => vec.step(good.subarray(0, 3))).toThrow(RangeError);
      expect(snapshot(vec)).toEqual(before);
      for (let step = 0; step < 30; step++) {
        const actions = legal(fresh);
        vec.step(actions);
        fresh.step(actions);
        expect(Array.from(vec.observations)).toEqual(Array.from(fresh.observations));
      }
    } finally {
      await vec.close();
    }
  });

  it('WorkerVecEnv: sizes that are no positive integer are refused before any worker starts (numEnvs 0 crashed the process)', () => {
    for (const numEnvs of [0, -1, 1.5, Number.NaN, '4' as unknown as number]) {
      expect(() => new WorkerVecEnv({ numEnvs, config }), String(numEnvs)).toThrow(/^numEnvs must be a positive integer/);
    }
    for (const numWorkers of [0, -1, 1.5, '2' as unknown as number]) {
      expect(() => new WorkerVecEnv({ numEnvs: 4, numWorkers, config }), String(numWorkers)).toThrow(/^numWorkers must be an integer from 1 to 64/);
    }
  });
});

describe('seeds and decks [probe round 3b]', () => {
  const config = { rules: { players: 4 } };

  it('a seed is a safe integer or a string everywhere: every object was the seed "[object Object]", NaN the seed "NaN"', async () => {
    // A BigInt, or an object holding one or a cycle, made the error a TypeError of its own
    // ("Do not know how to serialize a BigInt") [probe round 14].
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const bad = [Number.NaN, Infinity, 1.5, 2 ** 53 + 2, {}, [], true, 10n, { n: 1n }, cycle] as unknown as (number | string)[];
    const env = new KratzenEnv(config);
    const vec = new VecEnv({ numEnvs: 2, config });
    const workers = new WorkerVecEnv({ numEnvs: 2, numWorkers: 1, config, spinMicroseconds: 0 });
    const game = createGame({ players: 4 });
    try {
      for (const seed of bad) {
        const name = typeof seed === 'object' ? Object.keys(seed).join() : String(seed);
        expect(() => env.reset({ seed }), name).toThrow(ValidationError);
        expect(() => vec.reset(seed), name).toThrow(/invalid seed: seed: a seed is an integer/);
        expect(() => vec.resetEnvs([1, 0], seed), name).toThrow(ValidationError);
        expect(() => workers.reset(seed), name).toThrow(ValidationError);
        expect(() => game.newState({ seed }), name).toThrow(ValidationError);
      }
      for (const seed of [0, -7, 2 ** 53 - 1, 'abc', '', '\u{1F0A1}']) expect(() => vec.reset(seed)).not.toThrow();
      // A lone surrogate has no UTF-8: the workers played '\uFFFD' for '\uD800' and '\uDC00' alike,
      // where VecEnv played two games [probe, session 38].
      for (const seed of ['\uD800', 'a\uDC00b', '\u{1F0A1}'.slice(0, 1)]) {
        expect(() => vec.reset(seed)).toThrow(/invalid seed: seed: a string seed must be well-formed Unicode text/);
        expect(() => workers.reset(seed)).toThrow(ValidationError);
        expect(() => env.reset({ seed })).toThrow(ValidationError);
      }
    } finally {
      await workers.close();
    }
  });

  it('newState copies the decks it checked: changing the caller\'s array afterwards changes nothing dealt', () => {
    const game = createGame({ players: 4 });
    const deck = Array.from({ length: 33 }, (_, c) => 32 - c);
    const changed = game.newState({ seed: 1, decks: [deck] });
    const kept = game.newState({ seed: 1, decks: [deck.slice()] });
    deck.fill(0);
    for (let s = 0; s < 4; s++) expect(changed.handOf(s)).toEqual(kept.handOf(s));
    expect(() => game.newState({ seed: 1, decks: 'abc' as unknown as number[][] })).toThrow(/invalid deck: decks: /);
  });
});

describe('what a caller holds after creating an env [probe, session 38]', () => {
  it('the config is the env\'s own frozen copy, and the default hand range cannot be changed', () => {
    const rules = { players: 4, exchange: null };
    const env = new VecEnv({ numEnvs: 1, config: { rules, maxSteps: 0 } }).reset(1);
    expect(env.config.rules).not.toBe(rules);
    rules.players = 6;
    expect(env.config.rules.players).toBe(4);
    expect(Object.isFrozen(env.config) && Object.isFrozen(env.config.rules)).toBe(true);
    // A write to maxSteps took effect mid-run; one to rewardScale did nothing.
    expect(() => ((env.config as { maxSteps: number }).maxSteps = 2)).toThrow(TypeError);
    expect(Object.isFrozen(ALL_HANDS)).toBe(true);
    expect(() => ((ALL_HANDS as { count: number }).count = 1)).toThrow(TypeError);
    // A rule set's own keys survive the copy, a nested one too.
    const tavern = new KratzenEnv({ rules: { profile: 'tavern5', players: 4, exchange: { maxCards: 2 } } });
    expect(tavern.config.rules).toEqual({ profile: 'tavern5', players: 4, exchange: { maxCards: 2 } });
    expect(Object.isFrozen(tavern.config.rules.exchange)).toBe(true);
  });
});

describe('buffers, indices and opponents that do not fit [probe round 3b]', () => {
  const config = { rules: { players: 4 } };

  it('buffers, env indices and offsets off their size are refused, naming them (writes past the end were dropped)', () => {
    expect(() => new VecEnv({ numEnvs: 4, config, buffers: allocateVecBuffers(1) })).toThrow(/buffers\.observations holds 490 entries, not 4 x 490/);
    const vec = new VecEnv({ numEnvs: 2, config }).reset(1);
    for (const i of [-1, 2, 1.5, Number.NaN]) {
      expect(() => vec.stateOf(i), String(i)).toThrow(/env must be an index 0\.\.1/);
      expect(() => vec.finalInfo(i), String(i)).toThrow(RangeError);
      expect(() => vec.explainIllegal(i, 0), String(i)).toThrow(RangeError);
    }
    expect(() => vec.observe(0, 0, new Float32Array(10), new Uint8Array(NUM_ACTIONS))).toThrow(/an observation needs 490 floats/);
    expect(() => vec.observe(0, 0, new Float32Array(OBS_SIZE), new Uint8Array(3))).toThrow(/mask must be a Uint8Array of 74/);
    const state = vec.stateOf(0);
    expect(() => encodeObservation(state, 0, new Float32Array(OBS_SIZE), OBS_SIZE)).toThrow(RangeError);
    expect(() => state.legalActionMask(new Uint8Array(5))).toThrow(/a mask needs 74 entries/);
    expect(() => state.legalActionMask(new Uint8Array(NUM_ACTIONS), -10)).toThrow(RangeError);
    // A fractional offset wrote nothing and returned an all-zero mask; '74' was added as text;
    // null failed inside [library probe, session 48].
    expect(() => state.legalActionMask(new Uint8Array(2 * NUM_ACTIONS), 1.5)).toThrow(/from offset 1\.5 \(a whole number\)/);
    expect(() => state.legalActionMask(new Uint8Array(2 * NUM_ACTIONS), '74' as unknown as number)).toThrow(RangeError);
    expect(() => state.legalActionMask(null as unknown as Uint8Array)).toThrow(/a mask is a Uint8Array, got null/);
    // Misspelt options were dropped without a word (the first dealer drawn instead).
    expect(() => state.game.newState({ seed: 1, start: { dealr: 0 } } as never)).toThrow(/newState start has no option "dealr"/);
    expect(() => state.game.newState({ sed: 5 } as never)).toThrow(/newState has no option "sed"/);
    expect(() => state.game.newState(null as never)).toThrow(/newState takes an object of options/);
    // A reader has no transitions (env.state and stateOf hand out readers); a state of its own checks its seat too.
    expect(() => vec.stateOf(0).game.newState({ seed: 1 }).applyAs('1' as unknown as number, 0)).toThrow(/seat must be a seat 0\.\.3/);
  });

  it('a vector env too big to allocate names numEnvs; an action given as a string is named as one [probe round 6]', () => {
    expect(() => new VecEnv({ numEnvs: 1e9, config })).toThrow(/^numEnvs 1000000000: the observations buffer \(1960000000000 bytes\) cannot be allocated/);
    // One past the engine's typed-array length but within memory was allocated, then its view
    // failed: "Invalid typed array length: undefined" [library probe, session 48].
    expect(() => new VecEnv({ numEnvs: 1e7, config })).toThrow(/^numEnvs 10000000: the observations buffer \(19600000000 bytes\) cannot be allocated/);
    const env = new KratzenEnv(config);
    env.reset({ seed: 1 });
    const legal = env.state.legalActions()[0]!;
    // "no such action id 36" read as a complaint about the id, which was legal.
    expect(() => env.step(String(legal) as unknown as number)).toThrow(new RegExp(`an action is an integer id 0\\.\\.73, got string "${legal}"`));
  });

  it('opponents must be policies, and one that chooses an illegal action is named, not the learner\'s episode ended', () => {
    for (const opponents of [{}, 5, [null, 3, null, null]] as unknown as Policy[]) {
      expect(() => new SingleAgentEnv({ config: { rules: { players: 4 } }, opponents }), JSON.stringify(opponents)).toThrow(/opponents: seat \d needs a policy/);
    }
    const broken: Policy = { act: () => Int32Array.from([99]) };
    const env = new SingleAgentEnv({ config: { rules: { players: 4 } }, opponents: broken, learnerSeat: 3 });
    expect(() => env.reset({ seed: 1 })).toThrow(/the opponent policy of seat [012] chose 99, not one of its legal actions/);
    // No actions at all: "Cannot read properties of undefined (reading '0')" [probe round 14].
    for (const returned of [undefined, null]) {
      const silent = new SingleAgentEnv({ config: { rules: { players: 4 } }, opponents: { act: () => returned as unknown as Int32Array }, learnerSeat: 3 });
      expect(() => silent.reset({ seed: 1 })).toThrow(new RegExp(`the opponent policy of seat [012] chose no actions \\(act returned ${returned}\\)`));
    }
  });

  it('judges an opponent\'s action by the state, not by the mask it was handed and wrote into [probe round 14]', () => {
    // The policy filled its mask with 1s and chose an illegal id: it passed the check, and with
    // illegalAction "terminate" the learner's legal step ended its episode as illegal.
    const cheat: Policy = {
      act: (_obs, mask) => {
        const illegal = mask.indexOf(0);
        mask.fill(1);
        return Int32Array.from([illegal]);
      },
    };
    for (const illegalAction of ['throw', 'terminate'] as const) {
      const env = new SingleAgentEnv({ config: { rules: { players: 4 }, illegalAction }, opponents: cheat, learnerSeat: 3 });
      expect(() => env.reset({ seed: 1 }), illegalAction).toThrow(/the opponent policy of seat [012] chose \d+, not one of its legal actions/);
    }
  });
});

describe('a closed VecEnv [probe round 3b]', () => {
  it('refuses steps and resets, as a closed WorkerVecEnv does (they went on before)', () => {
    const vec = new VecEnv({ numEnvs: 2, config: { rules: { players: 4 } } }).reset(1);
    const actions = Int32Array.from({ length: 2 }, (_, i) => randomLegalAction(vec.masks, i, NUM_ACTIONS, () => 0.5));
    vec.close();
    expect(() => vec.step(actions)).toThrow(/VecEnv is closed/);
    expect(() => vec.reset(2)).toThrow(/VecEnv is closed/);
  });
});

describe('careless and hostile use of the library [probe round 8]', () => {
  const RULES = { rules: { profile: 'didactic4' as const, players: 4 } };
  // Vector and single-agent envs take the config under `config`; KratzenEnv takes it itself.
  const OPTS = { config: RULES };
  const failing = (after: number): Policy => {
    let calls = 0;
    const random = new RandomPolicy(1);
    return {
      act(observations, masks, seats) {
        if (++calls === after + 1) throw new Error('policy crashed');
        return random.act(observations, masks, seats);
      },
    };
  };
  const firstLegal = (masks: Uint8Array, i: number) => masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS).indexOf(1);

  it('an opponent policy that fails mid-step leaves its env refusing steps until it is reset (the next step moved an opponent as the learner)', () => {
    const env = new SingleAgentEnv({ ...OPTS, opponents: failing(6) });
    expect(() => {
      let mask = env.reset({ seed: 4 }).mask;
      for (let t = 0; t < 50; t++) mask = env.step(mask.indexOf(1)).mask;
    }).toThrow(/policy crashed/);
    expect(() => env.step(0)).toThrow(/the opponents failed in this episode \(policy crashed\): reset this env/);
    const vec = new VecEnv({ numEnvs: 3, ...OPTS, opponents: [null, new RandomPolicy(2), new RandomPolicy(3), failing(8)] });
    let error: Error | undefined;
    for (let t = 0; t < 50 && !error; t++) {
      try {
        if (t === 0) vec.reset(4);
        else vec.step(Int32Array.from({ length: 3 }, (_, i) => firstLegal(vec.masks, i)));
      } catch (e) {
        error = e as Error;
      }
    }
    expect(error?.message).toMatch(/^env \d: policy crashed$/);
    const broken = Number(error!.message.match(/^env (\d)/)![1]);
    // The buffers show it as it is: no seat to act, no legal action; stepping it says why.
    expect(vec.seats[broken]).toBe(-1);
    expect(vec.masks.subarray(broken * NUM_ACTIONS, (broken + 1) * NUM_ACTIONS).every((m) => m === 0)).toBe(true);
    expect(() => vec.step(Int32Array.from({ length: 3 }, () => 0))).toThrow(/the opponents failed in this episode/);
    vec.resetEnvs([0, 1, 2].map((i) => (i === broken ? 1 : 0)));
    expect(vec.seats[broken]).toBe(0);
  });

  it('refuses use before the first reset by name (it failed inside the core)', () => {
    const vec = new VecEnv({ numEnvs: 2, ...OPTS });
    expect(() => vec.step([0, 0])).toThrow(/^env 0 has not been reset: call reset\(\)/);
    expect(() => vec.potOf(1)).toThrow(/^env 1 has not been reset/);
    vec.resetEnvs([0, 1]);
    expect(() => vec.step([0, 0])).toThrow(/^env 0 has not been reset/);
    const env = new KratzenEnv(RULES);
    for (const call of [() => env.observe(0), () => env.record(), () => env.last(), () => env.step(0)]) expect(call).toThrow(/^call reset\(\) first$/);
  });

  it('a reset without a seed moves every env on (it restarted seed 0 each time); the first plays seed 0, distinct deals per env [env probe, session 33]', async () => {
    const rows = (vec: { observations: Float32Array }) => Array.from(vec.observations);
    const seeded = new VecEnv({ numEnvs: 3, ...OPTS }).reset(0);
    const plain = new VecEnv({ numEnvs: 3, ...OPTS }).reset();
    expect(rows(plain)).toEqual(rows(seeded));
    const first = rows(plain);
    plain.reset();
    expect(rows(plain)).not.toEqual(first);
    // The same as the seeded sequence moving on: env i's next session is `0:<i>/1`.
    seeded.reset();
    expect(rows(plain)).toEqual(rows(seeded));
    const workers = new WorkerVecEnv({ numEnvs: 3, numWorkers: 2, ...OPTS });
    try {
      workers.reset();
      expect(rows(workers)).toEqual(first);
      workers.reset();
      expect(rows(workers)).toEqual(rows(plain));
    } finally {
      await workers.close();
    }
    // Envs first reset through a mask without a seed get distinct deals (all dealt seed "0" before).
    const masked = new VecEnv({ numEnvs: 3, ...OPTS }).resetEnvs([1, 1, 1]);
    expect(rows(masked)).toEqual(first);
  });

  it('a WorkerVecEnv says it was not reset, or is closed, before judging the actions (it called them illegal) [env probe, session 33]', async () => {
    const workers = new WorkerVecEnv({ numEnvs: 2, numWorkers: 1, ...OPTS });
    try {
      expect(() => workers.step([0, 0])).toThrow(/^WorkerVecEnv has not been reset: call reset\(\) first$/);
      workers.reset(1);
    } finally {
      await workers.close();
    }
    expect(() => workers.step([73, 73])).toThrow(/^WorkerVecEnv is closed$/);
  });

  it('checks reset masks, reset options and the options it would otherwise ignore', () => {
    const vec = new VecEnv({ numEnvs: 2, ...OPTS }).reset(1);
    const before = vec.observations.slice();
    for (const mask of [['0', '0'], [0.5, Number.NaN], [2, -1]]) expect(() => vec.resetEnvs(mask as never), JSON.stringify(mask)).toThrow(/reset mask entry 0 must be 0, 1, true or false/);
    expect(vec.observations).toEqual(before);
    vec.resetEnvs([true, 0]);
    const env = new KratzenEnv(RULES);
    expect(() => env.reset(5 as never)).toThrow(/reset takes an object/);
    expect(() => env.reset({ sed: 5 } as never)).toThrow(/reset has no option "sed"/);
    expect(() => env.reset({ options: { foo: 1 } } as never)).toThrow(/reset takes no options/);
    expect(() => new SingleAgentEnv({ ...OPTS, opponents: new RandomPolicy(1) }).reset({ seeds: 1 } as never)).toThrow(/reset has no option "seeds"/);
    expect(() => new VecEnv({ numEnvs: 1, ...OPTS, learnerSeat: 2 })).toThrow(/learnerSeat needs opponents/);
    for (const opponents of [0, '']) expect(() => new VecEnv({ numEnvs: 1, ...OPTS, opponents: opponents as never }), String(opponents)).toThrow(/opponents: seat 1 needs a policy/);
    // A misplaced or misspelt option is named (rules beside config gave a 4-player table) [env probe, session 33].
    expect(() => new VecEnv({ numEnvs: 2, rules: { players: 5 } } as never)).toThrow(/^VecEnv has no option "rules" \(it takes numEnvs, config, /);
    expect(() => new WorkerVecEnv({ numEnvs: 2, numWorker: 4 } as never)).toThrow(/^WorkerVecEnv has no option "numWorker"/);
    expect(() => new WorkerVecEnv({ numEnvs: 2, ...OPTS, opponents: new RandomPolicy(1) } as never)).toThrow(/^WorkerVecEnv has no option "opponents"/);
    expect(() => new SingleAgentEnv({ ...OPTS, opponent: new RandomPolicy(1) } as never)).toThrow(/^SingleAgentEnv has no option "opponent"/);
    expect(() => new WorkerVecEnv({ numEnvs: 2, numWorkers: 1, ...OPTS, spinMicroseconds: Infinity })).toThrow(/spinMicroseconds must be a number from 0 to 1e6/);
    expect(() => new WorkerVecEnv({ numEnvs: 2, numWorkers: 1, ...OPTS, spinMicroseconds: '200' as never })).toThrow(/spinMicroseconds/);
    // numWorkers 1000 started 1000 threads.
    expect(() => new WorkerVecEnv({ numEnvs: 1000, numWorkers: 1000, ...OPTS })).toThrow(/numWorkers must be an integer from 1 to 64/);
  });

  it('refuses buffers of another element type or sharing memory (aliased terminated and truncated reported no episode end)', () => {
    const aliased = { ...allocateVecBuffers(2) };
    Object.assign(aliased, { truncated: aliased.terminated });
    expect(() => new VecEnv({ numEnvs: 2, ...OPTS, buffers: aliased })).toThrow(/buffers.truncated shares memory with buffers.terminated/);
    const wrongType = allocateVecBuffers(2) as unknown as Record<string, unknown>;
    wrongType.rewards = new Int32Array(2 * MAX_SEATS);
    expect(() => new VecEnv({ numEnvs: 2, ...OPTS, buffers: wrongType as never })).toThrow(/buffers.rewards must be a Float32Array, got Int32Array/);
  });

  // Reused shared memory kept another env's mask entries: a stale 1 passed the up-front check and
  // the step failed part-way, after env 0 had moved [probe, session 38].
  it('clears given buffers: a reused buffer set reads as a fresh one', () => {
    const shared = viewVecBuffers(allocateVecMemory(2, (bytes) => new SharedArrayBuffer(bytes)));
    const first = new VecEnv({ numEnvs: 2, ...OPTS, buffers: shared }).reset(3);
    for (let t = 0; t < 7; t++) first.step(randomLegalActions(first.masks, 2, NUM_ACTIONS, seedrandom(`t${t}`), new Int32Array(2)));
    first.close();
    const reused = new VecEnv({ numEnvs: 2, ...OPTS, buffers: shared }).reset(1);
    const fresh = new VecEnv({ numEnvs: 2, ...OPTS }).reset(1);
    for (const name of VEC_BUFFER_NAMES) expect(Array.from(reused.buffers[name]), name).toEqual(Array.from(fresh.buffers[name]));
  });

  it('refuses a step or reset from inside its own step (an action chosen on one state was applied to another)', () => {
    let vec: VecEnv;
    const random = new RandomPolicy(1);
    let nested: unknown = null;
    const reentrant: Policy = {
      act(observations, masks, seats) {
        try {
          vec.reset(9);
        } catch (e) {
          nested = e;
        }
        return random.act(observations, masks, seats);
      },
    };
    vec = new VecEnv({ numEnvs: 1, ...OPTS, opponents: reentrant });
    vec.reset(1);
    expect(String(nested)).toMatch(/VecEnv is stepping or resetting already/);
    for (let t = 0; t < 20; t++) vec.step([firstLegal(vec.masks, 0)]);
  });

  it('a SingleAgentEnv refuses a step or reset from its own opponents too (the opponent\'s action was taken as the learner\'s) [env probe, session 33]', () => {
    let env: SingleAgentEnv;
    const random = new RandomPolicy(1);
    const refused: string[] = [];
    let inner: 'reset' | 'step' = 'reset';
    const reentrant: Policy = {
      act(observations, masks, seats) {
        try {
          if (inner === 'reset') env.reset({ seed: 9 });
          else env.step(firstLegal(masks, 0));
        } catch (e) {
          refused.push(String(e));
        }
        return random.act(observations, masks, seats);
      },
    };
    env = new SingleAgentEnv({ ...OPTS, opponents: reentrant, learnerSeat: 1 });
    const plain = new SingleAgentEnv({ ...OPTS, opponents: new RandomPolicy(1), learnerSeat: 1 });
    let r: { obs: Float32Array; mask: Uint8Array } = env.reset({ seed: 1 });
    let expected: { obs: Float32Array; mask: Uint8Array } = plain.reset({ seed: 1 });
    expect(refused.length).toBeGreaterThan(0);
    inner = 'step';
    for (let t = 0; t < 12; t++) {
      // Refused and nothing changed: the same trajectory as with the plain random opponents.
      expect(Array.from(r.obs)).toEqual(Array.from(expected.obs));
      const action = firstLegal(r.mask, 0);
      const [a, b] = [env.step(action), plain.step(action)];
      expect(a.reward).toBe(b.reward);
      r = a.terminated || a.truncated ? env.reset({ seed: 2 + t }) : a;
      expected = b.terminated || b.truncated ? plain.reset({ seed: 2 + t }) : b;
    }
    expect(refused.every((e) => /SingleAgentEnv is stepping or resetting already/.test(e))).toBe(true);
    expect(refused.length).toBeGreaterThan(5);
  });

  it('names a bad hand range, and an observe with a bad seat leaves the caller\'s buffer as it was', () => {
    const vec = new VecEnv({ numEnvs: 1, ...OPTS }).reset(1);
    for (const range of ['all', { from: 0, count: Number.NaN }, { from: -1, count: 2 }, { from: 1.5, count: 2 }]) {
      expect(() => vec.fullRecord(0, 'current', range as never), JSON.stringify(range)).toThrow(/^range must be \{ from/);
      expect(() => vec.tableView(0, 0, 'current', range as never), JSON.stringify(range)).toThrow(/^range must be \{ from/);
    }
    const obs = new Float32Array(OBS_SIZE).fill(7);
    expect(() => vec.observe(0, 9, obs, new Uint8Array(NUM_ACTIONS))).toThrow(RangeError);
    expect(obs.every((x) => x === 7)).toBe(true);
  });
});
