// Generates protocol.schema.json (JSON Schema 2020-12) from the zod schemas of protocol.ts, for
// clients in other languages. `node dist/bridge/schema.js > bridge/protocol.schema.json`
// rewrites it; a test fails when the checked-in file is stale.

import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ERROR_CODES } from './errors.js';
import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { BINARY_ARRAYS, BINARY_FRAME_LAYOUT, PROTOCOL_VERSION, batchResult, errorReply, requestSchema, resultReply } from './protocol.js';

export function protocolJsonSchema(): Record<string, unknown> {
  // io 'input': defaults make fields optional for the sender, which is what a client writes.
  const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Kratzen Gym bridge protocol',
    description: `Protocol version ${PROTOCOL_VERSION}. Requests are JSON text frames, one reply each, in order, with the request id (null when unparseable).`,
    protocolVersion: PROTOCOL_VERSION,
    // Sizes and the binary arrays as data too, so clients in other languages can test their copies against them.
    numActions: NUM_ACTIONS,
    observationSize: OBS_SIZE,
    binaryFrame: BINARY_FRAME_LAYOUT,
    binaryArrays: BINARY_ARRAYS.map(([name, dtype, shape]) => ({ name, dtype, shape })),
    errorCodes: ERROR_CODES,
    request: schema(requestSchema),
    reply: { oneOf: [schema(resultReply), schema(errorReply)] },
    batchResult: schema(batchResult),
  };
}

export function protocolJsonSchemaText(): string {
  return `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(protocolJsonSchemaText());
}
