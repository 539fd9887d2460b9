// The package's exported types as a TypeScript user meets them (test/types/binary-frame.ts).
import { expect, it } from 'vitest';
import { compileTypesFile } from './helpers/compile.js';

it('types a binary reply\'s arrays by their dtypes, so denseFromCsr takes them without casts', () => {
  const { status, output } = compileTypesFile('binary-frame.ts');
  expect(status, output).toBe(0);
}, 120_000);
