// checkEnv: Gymnasium's env checker for our envs. Runs seeded episodes of random play and
// throws an Error naming the first property that fails; returns what it checked otherwise.

import seedrandom from 'seedrandom';
import { MAX_SEATS, NUM_ACTIONS } from './rules/index.js';
import { KratzenEnv } from './env.js';
import { OBS_SIZE, observationSpec } from './observation.js';
import { randomLegalAction } from './policy.js';
import type { EnvConfigInput } from './table.js';
import { VecEnv } from './vec-env.js';

export interface CheckEnvOptions {
  /** Episodes played per check. @default 3 */
  episodes?: number;
  seed?: number;
}

export interface CheckEnvReport {
  episodes: number;
  steps: number;
  checks: string[];
}

function fail(check: string, detail: string): never {
  throw new Error(`checkEnv: ${check} failed: ${detail}`);
}

/** Plays one episode with seeded random actions; returns every step's obs, reward and mask. */
function episodeTrace(env: KratzenEnv, seed: number | string | undefined, actionSeed: string) {
  const random = seedrandom(actionSeed);
  const first = env.reset({ seed });
  const trace = { observations: [first.obs], masks: [first.mask], rewards: [] as Float32Array[], infos: [] as unknown[], seats: [first.seat] };
  let current = first;
  for (;;) {
    const action = randomLegalAction(current.mask, 0, NUM_ACTIONS, random);
    const step = env.step(action);
    trace.observations.push(step.obs);
    trace.masks.push(step.mask);
    trace.rewards.push(step.reward);
    trace.infos.push(step.info);
    trace.seats.push(step.seat);
    if (step.terminated || step.truncated) return trace;
    current = step;
  }
}

export function checkEnv(config: EnvConfigInput = {}, options: CheckEnvOptions = {}): CheckEnvReport {
  const episodes = options.episodes ?? 3;
  const seed = options.seed ?? 0;
  const spec = observationSpec();
  if (spec.size !== OBS_SIZE) fail('observation spec', `size ${spec.size} != OBS_SIZE ${OBS_SIZE}`);
  const last = spec.slices[spec.slices.length - 1]!;
  if (last.offset + last.size !== OBS_SIZE) fail('observation spec', 'slices do not end at OBS_SIZE');
  let steps = 0;

  const env = new KratzenEnv(config);
  const twin = new KratzenEnv(config);
  for (let e = 0; e < episodes; e++) {
    const a = episodeTrace(env, `${seed}:${e}`, `actions-${e}`);
    const b = episodeTrace(twin, `${seed}:${e}`, `actions-${e}`);
    steps += a.rewards.length;
    // Seeded reset and step determinism.
    if (a.observations.length !== b.observations.length) fail('determinism', `episode ${e} lengths differ`);
    a.observations.forEach((obs, t) => {
      if (!obs.every((v, k) => v === b.observations[t]![k])) fail('determinism', `episode ${e} step ${t} observations differ`);
      if (!a.masks[t]!.every((v, k) => v === b.masks[t]![k])) fail('determinism', `episode ${e} step ${t} masks differ`);
    });
    a.rewards.forEach((r, t) => {
      if (!r.every((v, k) => v === b.rewards[t]![k])) fail('determinism', `episode ${e} step ${t} rewards differ`);
    });
    // Shapes, dtypes, non-empty masks while running, bounds.
    a.observations.forEach((obs, t) => {
      if (!(obs instanceof Float32Array) || obs.length !== OBS_SIZE) fail('observation shape', `step ${t}`);
      const mask = a.masks[t]!;
      if (!(mask instanceof Uint8Array) || mask.length !== NUM_ACTIONS) fail('mask shape', `step ${t}`);
      const running = t < a.observations.length - 1;
      const legal = mask.reduce((x, y) => x + y, 0);
      if (running && legal === 0) fail('mask', `empty mask while running at episode ${e} step ${t}`);
      if (!running && legal !== 0) fail('mask', `non-empty mask after the episode ended (episode ${e})`);
      for (const slice of spec.slices) {
        for (let k = slice.offset; k < slice.offset + slice.size; k++) {
          const v = obs[k]!;
          if (!(v >= slice.low && v <= slice.high)) fail('observation bounds', `${slice.name}[${k - slice.offset}] = ${v} outside [${slice.low}, ${slice.high}]`);
        }
      }
    });
    // Rewards sum to the net balance change of the episode (session: from zero).
    const totals = new Array<number>(env.numPlayers).fill(0);
    for (const r of a.rewards) for (let s = 0; s < env.numPlayers; s++) totals[s]! += r[s]!;
    const state = env.state;
    const scale = env.config.rewardScale;
    if (env.config.episode === 'session' && env.config.rewardNormalization === 'chips') {
      Array.from(state.balances).forEach((units, s) => {
        const expected = state.game.toChips(units) * scale;
        if (Math.abs(totals[s]! - expected) > 1e-3 * Math.max(1, Math.abs(expected))) {
          fail('reward sum', `seat ${s} rewards sum to ${totals[s]} but its balance moved by ${expected}`);
        }
      });
    }
    const chipTotal = totals.reduce((x, y) => x + y, 0) + state.game.toChips(state.pot) * scale;
    if (env.config.episode === 'session' && env.config.rewardNormalization === 'chips' && Math.abs(chipTotal) > 1e-3 * Math.max(1, Math.abs(state.pot))) {
      fail('reward sum', `rewards plus the pot do not add to zero (${chipTotal})`);
    }
  }

  // Autoreset: a VecEnv row follows the single env with the same seeds across resets.
  const numEnvs = 2;
  const vec = new VecEnv({ numEnvs, config });
  vec.reset(seed);
  const singles = Array.from({ length: numEnvs }, () => new KratzenEnv(config));
  const currents = singles.map((single, i) => single.reset({ seed: `${seed}:${i}` }));
  const random = seedrandom('autoreset');
  const actions = new Int32Array(numEnvs);
  let resets = 0;
  for (let t = 0; resets < numEnvs * 2 && t < 20_000; t++) {
    for (let i = 0; i < numEnvs; i++) {
      const rowObs = vec.observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE);
      if (!rowObs.every((v, k) => v === currents[i]!.obs[k])) fail('autoreset', `env ${i} observation differs from a single env at step ${t}`);
      actions[i] = randomLegalAction(vec.masks, i, NUM_ACTIONS, random);
    }
    vec.step(actions);
    for (let i = 0; i < numEnvs; i++) {
      const step = singles[i]!.step(actions[i]!);
      for (let s = 0; s < vec.numPlayers; s++) {
        if (vec.rewards[i * MAX_SEATS + s] !== step.reward[s]) fail('autoreset', `env ${i} reward differs at step ${t}`);
      }
      const done = step.terminated || step.truncated;
      if ((vec.terminated[i] === 1) !== step.terminated || (vec.truncated[i] === 1) !== step.truncated) fail('autoreset', `env ${i} end flags differ at step ${t}`);
      if (done) {
        resets++;
        const finalRow = vec.finalObservations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE);
        if (!finalRow.every((v, k) => v === step.obs[k])) fail('autoreset', `env ${i} final observation is not the last one`);
        if (!vec.finalInfo(i)) fail('autoreset', `env ${i} has no final info`);
        currents[i] = singles[i]!.reset();
      } else {
        currents[i] = step;
        if (vec.finalInfo(i) !== null) fail('autoreset', `env ${i} has final info while running`);
      }
    }
  }
  if (resets < numEnvs * 2) fail('autoreset', 'episodes did not end');
  return {
    episodes,
    steps,
    checks: ['observation spec', 'determinism', 'observation shape', 'mask shape', 'mask', 'observation bounds', 'reward sum', 'autoreset'],
  };
}
