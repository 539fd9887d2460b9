import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { firstIssue } from './zod-issue.js';

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
});
