// The rules core is closed: outside env/rules/ a state can be read, never written. Compiles
// test/types/closed-state.ts, whose every write is marked @ts-expect-error: the compiler must
// report each as an error (an unused marker, i.e. a write that compiles, fails the build).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { compileTypesFile } from './helpers/compile.js';

const root = join(import.meta.dirname, '..');

it('writing a state\'s fields from outside the rules core does not compile', () => {
  const markers = readFileSync(join(root, 'test/types/closed-state.ts'), 'utf8').match(/@ts-expect-error/g)!.length;
  expect(markers).toBeGreaterThanOrEqual(10);
  const { status, output } = compileTypesFile('closed-state.ts');
  expect(status, output).toBe(0);
}, 120_000);
