// protocol.schema.json is generated from the zod schemas; this fails when it is stale.

import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { protocolJsonSchema, protocolJsonSchemaText } from './schema.js';

it('the checked-in protocol.schema.json matches the zod schemas', () => {
  const checkedIn = readFileSync(new URL('./protocol.schema.json', import.meta.url), 'utf8');
  expect(checkedIn, 'regenerate: npm run build --silent && node dist/bridge/schema.js > bridge/protocol.schema.json').toBe(protocolJsonSchemaText());
});

it('describes every method as a strict object', () => {
  const request = protocolJsonSchema().request as { oneOf?: { properties: { method: { const: string } }; additionalProperties: boolean }[]; anyOf?: unknown[] };
  const variants = (request.oneOf ?? request.anyOf) as { properties: { method: { const: string } }; additionalProperties: boolean }[];
  expect(variants.map((v) => v.properties.method.const)).toContain('env.step');
  for (const v of variants) expect(v.additionalProperties).toBe(false);
});
