// Type-checks one file of test/types/ on its own, as a user's project would compile against the
// package: strict, NodeNext. Those files mark each misuse the compiler must refuse with an
// expect-error directive, so a misuse that compiles (an unused directive) fails too.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** The compiler's exit status and output for test/types/<name>. */
export function compileTypesFile(name: string): { status: number | null; output: string } {
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const file = join(root, 'test/types', name);
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--skipLibCheck', '--types', 'node', file], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, output: run.stdout + run.stderr };
}
