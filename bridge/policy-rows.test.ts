// policy.act's fast path packs well-formed rows on the main thread; it must accept exactly what
// the schema and packRows accept, and pack them alike (a probe found three clients' 512-row
// requests, each checked by the schema and copied as arrays into a worker, holding pings up).
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_ACTIONS, createGame } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation } from '../env/observation.js';
import { REQUEST_SCHEMAS, type ParamsOf } from './protocol.js';
import { packPolicyAct, packRows, screenPolicyAct, type PackedRows } from './policy-rows.js';
import { firstIssue } from '../env/rules/zod-issue.js';
import { toErrorBody, type ErrorBody } from './errors.js';

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

/** The error the whole schema, then packRows, give a request (what the server answered before screening). */
function wholeError(raw: Record<string, unknown>): ErrorBody | null {
  const parsed = REQUEST_SCHEMAS['policy.act'].safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    return { code: field.startsWith('params') ? 'invalid_params' : 'invalid_request', message, field };
  }
  const params = (parsed.data as { params: ParamsOf<'policy.act'> }).params;
  if (params.record !== undefined) return null;
  try {
    packRows(params);
    return null;
  } catch (e) {
    return toErrorBody(e);
  }
}

/** What `run` returns, and every input it handed policy.act's schema. */
function schemaInputsOf<T>(run: () => T): { result: T; seen: unknown[] } {
  const seen: unknown[] = [];
  const schema = REQUEST_SCHEMAS['policy.act'];
  const original = schema.safeParse.bind(schema);
  schema.safeParse = ((input: unknown) => (seen.push(input), original(input))) as typeof schema.safeParse;
  try {
    return { result: run(), seen };
  } finally {
    schema.safeParse = original;
  }
}

/** The error screening finds, or null when it leaves the request to the whole schema. */
function screenedError(raw: Record<string, unknown>): ErrorBody | null {
  const screened = screenPolicyAct(raw);
  if (screened === null) return null;
  return 'invalid' in screened ? screened.invalid : screened.params.refused;
}

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

describe('screenPolicyAct (a refused request checked a row at a time)', () => {
  const { observations, masks } = rows(512);
  const o = () => observations.map((r) => r.slice());
  const m = () => masks.map((r) => r.slice());
  const damaged = (list: number[][], row: number, at: number, value: unknown) => Object.assign(list, { [row]: Object.assign(list[row]!.slice(), { [at]: value }) });

  it('names the error the whole schema and packRows name, in the row of the whole request, for each single fault', () => {
    const cases: Record<string, unknown>[] = [
      request({ policy: 'p1', observations: damaged(o(), 511, OBS_SIZE - 1, 'x'), masks: m() }),
      request({ policy: 'p1', observations: damaged(o(), 300, 0, 1e39), masks: m() }),
      request({ policy: 'p1', observations: damaged(o(), 7, 3, -3), masks: m() }),
      request({ policy: 'p1', observations: Object.assign(o(), { 200: [1, 2] }), masks: m() }),
      request({ policy: 'p1', observations: Object.assign(o(), { 200: 'row' }), masks: m() }),
      request({ policy: 'p1', observations: o(), masks: damaged(m(), 499, 5, true) }),
      request({ policy: 'p1', observations: o(), masks: damaged(m(), 12, NUM_ACTIONS, 1) }),
      request({ policy: 'p1', observations: o(), masks: m().slice(1) }),
      request({ policy: 'p1', observations: o(), masks: m(), seats: Array.from({ length: 512 }, (_, i) => (i === 400 ? 6 : 0)) }),
      request({ policy: 'p1', observations: o(), masks: m(), seats: [0, 1] }),
      request({ policy: 'p1', observations: o(), masks: m(), extra: 1 }),
      { ...request({ policy: 'p1', observations: o(), masks: m() }), extra: 1 },
      request({ policy: 2, observations: o(), masks: m() }),
      request({ policy: 'p1', observations: o(), masks: m(), record: {} }),
      request({ policy: 'p1', observations: o() }),
      request({ policy: 'p1', observations: 'rows', masks: m() }),
      request({ policy: 'p1', observations: [], masks: [] }),
      request({ policy: 'p1', observations: rows(513).observations, masks: rows(513).masks }),
      // Two faults: a schema error anywhere comes before packRows' errors, as in the whole check.
      request({ policy: 'p1', observations: damaged(o().map((r) => r.slice(1)), 511, 5, 'x'), masks: m() }),
      request({ policy: 'p1', observations: damaged(o(), 3, 0, 9), masks: damaged(m(), 500, 0, 'x') }),
    ];
    for (const raw of cases) {
      const label = JSON.stringify(raw).slice(0, 100);
      const whole = wholeError(raw);
      expect(whole, label).not.toBeNull();
      expect(packPolicyAct(raw), label).toBeNull();
      expect(screenedError(raw), label).toEqual(whole);
    }
  });

  it('agrees with the whole schema on randomly damaged 512-row requests', () => {
    const random = seedrandom('screen');
    const odd = [NaN, Infinity, -1, 0.5, 2, 1e6, '0', null, true, [], {}, -0, 3.4e38, 1 + 1e-9, 40, -40];
    let refused = 0;
    for (let t = 0; t < 60; t++) {
      const obs = o();
      const mk = m();
      const target = random() < 0.5 ? obs : mk;
      const row = Math.floor(random() * 512);
      target[row] = target[row]!.slice();
      target[row]![Math.floor(random() * target[row]!.length)] = odd[Math.floor(random() * odd.length)] as number;
      const raw = request({ policy: 'p', observations: obs, masks: mk });
      const whole = wholeError(raw);
      if (whole === null) continue;
      refused++;
      expect(screenedError(raw), JSON.stringify(whole)).toEqual(whole);
    }
    expect(refused).toBeGreaterThan(20);
  });

  it('hands the schema one row of each list, so a refused request costs a row, not 512', () => {
    const raw = request({ policy: 'p1', observations: damaged(o(), 511, OBS_SIZE - 1, 'x'), masks: m() });
    const { result, seen } = schemaInputsOf(() => screenedError(raw));
    expect(result?.field).toBe(`params.observations[511][${OBS_SIZE - 1}]`);
    expect(seen).toHaveLength(1);
    const params = (seen[0] as { params: { observations: unknown[]; masks: unknown[] } }).params;
    expect([params.observations.length, params.masks.length]).toEqual([1, 1]);
  });

  it('checks a list longer than the limit as MAX_POLICY_ROWS + 1 empty rows, with the whole schema\'s error', () => {
    const raw = request({ policy: 'p1', observations: Array.from({ length: 5000 }, () => []), masks: [[1]] });
    const { result: screened, seen } = schemaInputsOf(() => screenedError(raw));
    expect(screened).toEqual(wholeError(raw));
    expect(screened).toMatchObject({ field: 'params.observations', message: 'params.observations: at most 512 rows' });
    expect((seen[0] as { params: { observations: unknown[] } }).params.observations).toHaveLength(513);
  });

  it('leaves requests without row lists, and well-formed ones, to the other paths', () => {
    expect(screenPolicyAct(request({ policy: 'p1', record: { rules: {} } }))).toBeNull();
    expect(screenPolicyAct(request({ policy: 'p1', observations: o(), masks: m() }))).toBeNull();
  });
});
