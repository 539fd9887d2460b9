// Hand-made records (test/fixtures/records), written from docs/rules.md alone by someone other than the
// engine's author, replayed to their hand-computed results or errors (see NOTES.md there).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayToJson, replayToText } from './index.js';

const DIR = join(import.meta.dirname, '../../test/fixtures/records');
const names = readdirSync(DIR)
  .filter((f) => f.endsWith('.record.json'))
  .map((f) => f.replace('.record.json', ''));
const read = (file: string) => JSON.parse(readFileSync(join(DIR, file), 'utf8'));

describe('hand-made records replay to their hand-computed results', () => {
  it('has fixtures', () => expect(names.length).toBeGreaterThan(20));
  it.each(names)('%s', (name) => {
    const expected = read(`${name}.expected.json`);
    const { exitCode, output } = replayToJson(read(`${name}.record.json`));
    // Amounts this small print exactly either way: the exact printer lays out JSON as JSON.stringify does.
    expect(replayToText(read(`${name}.record.json`))).toEqual({ exitCode, text: JSON.stringify(output, null, 2) });
    if (expected.exitCode === undefined) {
      expect(exitCode).toBe(0);
      expect(output).toEqual(expected);
      return;
    }
    const { exitCode: expectedCode, field, ...rest } = expected;
    expect(exitCode).toBe(expectedCode);
    expect(output).toMatchObject(rest);
    expect(typeof (output as { reason?: unknown }).reason).toBe('string');
    if (field !== undefined) expect((output as { field: string }).field.startsWith(field)).toBe(true);
  });
});
