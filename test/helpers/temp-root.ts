// Vitest global setup: the run's temporary files live in one folder made for it and removed
// after it. Tests, and the CLI processes and worker threads they start, make their folders with
// os.tmpdir(), which reads TMPDIR; without this every `npm test` left ~80 MB behind in /tmp.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'kratzen-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
