// The README's TypeScript examples compile as a user's project would compile them against the
// package (its name, `kratzen-gym`, resolves to this package's own build).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { compileTypesFile } from './helpers/compile.js';

const root = join(import.meta.dirname, '..');
const snippets = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

it('finds the README\'s TypeScript examples', () => {
  expect(snippets.length).toBeGreaterThanOrEqual(2);
});

it.each(snippets.map((code, k) => [k, code] as const))('README example %i compiles (the vector env one used an undeclared `actions`) [docs probe, session 37]', (k, code) => {
  const name = `readme-snippet-${k}.generated.ts`;
  const file = join(root, 'test/types', name);
  writeFileSync(file, `${code}\nexport {};\n`);
  try {
    const { status, output } = compileTypesFile(name);
    expect(status, output).toBe(0);
  } finally {
    rmSync(file, { force: true });
  }
}, 120_000);
