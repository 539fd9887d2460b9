import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_KEY_ECHO, firstIssue } from './zod-issue.js';
import { parseRuleSet } from './ruleset.js';

const schema = z.strictObject({ league: z.strictObject({ selfPlay: z.number().min(0) }), name: z.string() });

function issueOf(input: unknown, prefix?: string[]) {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error('expected a failure');
  return firstIssue(parsed.error, prefix);
}

describe('firstIssue: one way to name a bad field', () => {
  it('names the path of a bad value', () => {
    expect(issueOf({ league: { selfPlay: -1 }, name: 'a' })).toMatchObject({ field: 'league.selfPlay' });
    expect(issueOf({ league: { selfPlay: -1 }, name: 'a' }).message).toMatch(/^league\.selfPlay: /);
  });

  it('puts an unknown key in the path, under an optional prefix', () => {
    expect(issueOf({ league: { selfPlay: 1, extra: 1 }, name: 'a' }, ['params', 'config'])).toEqual({
      field: 'params.config.league.extra',
      reason: 'unknown field extra',
      message: 'params.config.league.extra: unknown field extra',
    });
  });

  it('writes array indices in brackets, as hand-written checks do', () => {
    const rows = z.strictObject({ actions: z.array(z.number().int()) });
    const parsed = rows.safeParse({ actions: [1, 2.5] });
    expect(firstIssue(parsed.error!, ['params']).field).toBe('params.actions[1]');
  });

  it('shows the root as (root)', () => {
    expect(issueOf(5).field).toBe('');
    expect(issueOf(5).message).toMatch(/^\(root\): /);
  });

  // One unknown key of 500,000 characters came back three times over (path, reason, field): a
  // 1.5 MB error for a 0.5 MB request [bridge probe, session 42].
  it('cuts a long key where it names it, in the field and in the reason', () => {
    const key = 'k'.repeat(100_000);
    const shown = `${'k'.repeat(MAX_KEY_ECHO)}...`;
    expect(issueOf({ league: { selfPlay: 1, [key]: 1 }, name: 'a' })).toEqual({ field: `league.${shown}`, reason: `unknown field ${shown}`, message: `league.${shown}: unknown field ${shown}` });
    const records = z.strictObject({ extras: z.record(z.string(), z.number()) });
    expect(firstIssue(records.safeParse({ extras: { [key]: 'x' } }).error!).field).toBe(`extras.${shown}`);
    // Rule sets refuse unknown keys before the schema: cut the same way.
    for (const rules of [{ [key]: 1 }, { exchange: { [key]: 1 } }]) {
      let error: unknown;
      try {
        parseRuleSet({ profile: 'tavern5', ...rules });
      } catch (e) {
        error = e;
      }
      expect(JSON.stringify(error).length + String((error as Error).message).length).toBeLessThan(1_000);
      expect((error as { field: string }).field).toMatch(new RegExp(`${shown.replace(/\./g, '\\.')}$`));
    }
  });
});
