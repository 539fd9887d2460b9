// policy.act's fast path packs well-formed rows on the main thread; it must accept exactly what
// the schema and packRows accept, and pack them alike (a probe found three clients' 512-row
// requests, each checked by the schema and copied as arrays into a worker, holding pings up).
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS, createGame } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { REQUEST_SCHEMAS, type ParamsOf } from './protocol.js';
import { packPolicyAct, packRows, type PackedRows } from './policy-rows.js';

function rows(n: number): { observations: number[][]; masks: number[][] } {
  const observations: number[][] = [];
  const masks: number[][] = [];
  for (let i = 0; i < n; i++) {
    const state = createGame({ profile: 'tavern5' }).newState({ seed: i });
    const obs = new Float32Array(OBS_SIZE);
    const mask = new Uint8Array(NUM_ACTIONS);
    encodeObservation(state, state.currentSeat, obs);
    state.legalActionMask(mask);
    observations.push(Array.from(obs));
    masks.push(Array.from(mask));
  }
  return { observations, masks };
}

/** What the schema and packRows make of a request: packed rows, or the error. */
function slowPath(raw: Record<string, unknown>): PackedRows | Error {
  const parsed = REQUEST_SCHEMAS['policy.act'].safeParse(raw);
  if (!parsed.success) return new Error('schema');
  const params = (parsed.data as { params: ParamsOf<'policy.act'> }).params;
  if (params.record !== undefined) return new Error('record');
  try {
    return packRows(params);
  } catch (e) {
    return e as Error;
  }
}

function expectSame(raw: Record<string, unknown>): 'packed' | 'refused' {
  const fast = packPolicyAct(raw);
  const slow = slowPath(raw);
  if (fast === null) {
    expect(slow, JSON.stringify(raw).slice(0, 200)).toBeInstanceOf(Error);
    return 'refused';
  }
  expect(slow).not.toBeInstanceOf(Error);
  expect(fast.rows).toEqual(slow);
  return 'packed';
}

const request = (params: Record<string, unknown>) => ({ id: 1, method: 'policy.act', params });

describe('packPolicyAct', () => {
  it('packs well-formed rows as the schema and packRows do, seats or not', () => {
    const { observations, masks } = rows(3);
    expect(expectSame(request({ policy: 'p1', observations, masks }))).toBe('packed');
    expect(expectSame(request({ policy: 'p1', observations, masks, seats: [0, 5, 2] }))).toBe('packed');
    expect(expectSame(request({ policy: 'p1', observations: rows(512).observations, masks: rows(512).masks }))).toBe('packed');
  });

  it('leaves to the schema and packRows everything they refuse', () => {
    const { observations, masks } = rows(2);
    const o = () => observations.map((r) => r.slice());
    const m = () => masks.map((r) => r.slice());
    const cases: Record<string, unknown>[] = [
      request({ policy: 'p1', observations: o(), masks: m(), extra: 1 }),
      { ...request({ policy: 'p1', observations: o(), masks: m() }), extra: 1 },
      request({ policy: 'x'.repeat(65), observations: o(), masks: m() }),
      request({ policy: 1, observations: o(), masks: m() }),
      request({ policy: 'p1', observations: [], masks: [] }),
      request({ policy: 'p1', observations: rows(513).observations, masks: rows(513).masks }),
      request({ policy: 'p1', observations: o(), masks: m().slice(1) }),
      request({ policy: 'p1', observations: [o()[0]!.slice(1), o()[1]], masks: m() }),
      request({ policy: 'p1', observations: o(), masks: [m()[0]!.concat(1), m()[1]] }),
      request({ policy: 'p1', observations: [Object.assign(o()[0]!, { 3: '1' }), o()[1]], masks: m() }),
      request({ policy: 'p1', observations: o(), masks: [Object.assign(m()[0]!, { 3: true }), m()[1]] }),
      request({ policy: 'p1', observations: [Object.assign(o()[0]!, { 0: 1e39 }), o()[1]], masks: m() }),
      request({ policy: 'p1', observations: [Object.assign(o()[0]!, { 0: -3 }), o()[1]], masks: m() }),
      request({ policy: 'p1', observations: o(), masks: m(), seats: [0] }),
      request({ policy: 'p1', observations: o(), masks: m(), seats: [0, 6] }),
      request({ policy: 'p1', observations: o(), masks: m(), seats: [0, 1.5] }),
      request({ policy: 'p1', observations: o(), masks: m(), record: {} }),
      request({ policy: 'p1', observations: o() }),
      request({ policy: 'p1', observations: 'rows', masks: m() }),
    ];
    for (const raw of cases) expect(expectSame(raw), JSON.stringify(raw).slice(0, 120)).toBe('refused');
  });

  it('agrees with the slow path on randomly damaged requests', () => {
    const random = seedrandom('policy-rows');
    const odd = [NaN, Infinity, -1, 0.5, 2, 1e6, '0', null, true, [], {}, -0, 3.4e38, 1 + 1e-9];
    let packed = 0;
    for (let t = 0; t < 300; t++) {
      const { observations, masks } = rows(2);
      const seats = random() < 0.3 ? [0, 1] : undefined;
      const target = random() < 0.5 ? observations : masks;
      const row = target[Math.floor(random() * 2)]!;
      if (random() < 0.8) row[Math.floor(random() * row.length)] = odd[Math.floor(random() * odd.length)] as number;
      const outcome = expectSame(request(seats ? { policy: 'p', observations, masks, seats } : { policy: 'p', observations, masks }));
      if (outcome === 'packed') packed++;
    }
    expect(packed).toBeGreaterThan(30);
    expect(packed).toBeLessThan(300);
  });
});
