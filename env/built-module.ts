// Worker scripts and modules that threads load by URL: the compiled file beside the caller when
// it runs from dist/, else (TypeScript sources under vitest) the build, which `npm test` makes first.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `beside` if that file exists, else `built`. */
export function builtModule(beside: URL, built: URL): URL {
  return existsSync(fileURLToPath(beside)) ? beside : built;
}
