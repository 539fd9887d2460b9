// The rules core is closed: outside env/rules/ a state can be read, never written. Compiles
// test/types/closed-state.ts, whose every write is marked @ts-expect-error: the compiler must
// report each as an error (an unused marker, i.e. a write that compiles, fails the build).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

it('writing a state\'s fields from outside the rules core does not compile', () => {
  const file = join(root, 'test/types/closed-state.ts');
  const markers = readFileSync(file, 'utf8').match(/@ts-expect-error/g)!.length;
  expect(markers).toBeGreaterThanOrEqual(10);
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--skipLibCheck', '--types', 'node', file], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(run.status, run.stdout + run.stderr).toBe(0);
}, 120_000);
