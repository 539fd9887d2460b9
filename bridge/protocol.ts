// The bridge's wire protocol: one `.strict()` zod schema per request, joined in a discriminated
// union on `method`, and the shapes of replies. protocol.schema.json is generated from here
// (bridge/schema.ts) for clients in other languages.
//
// Transport: WebSocket. A request is one UTF-8 JSON text frame
//   { "id": <string|integer>, "method": "<name>", "params": { ... } }
// and gets exactly one reply, in request order, carrying the same id:
//   { "id": ..., "result": { ... } }   or   { "id": ..., "error": { "code", "message", "field"? } }
// The id is null when the request could not be parsed far enough to read it.
// The first request must be `hello`; a server started with a token refuses every other method
// until a `hello` carrying that token succeeds.
//
// Binary replies. A session created with `encoding: "binary"` answers `env.reset` and
// `env.step` with a binary frame instead of a text frame:
//   bytes [0, 4)        uint32 little-endian H, the length of the header
//   bytes [4, 4 + H)    UTF-8 JSON header: the usual { "id", "result" } reply, whose result
//                       carries `session`, `numEnvs`, `rewardWidth`, `final` and `lengths`
//   padding to a multiple of 8 bytes, then the payload: the arrays below in this order, each
//   starting at an offset (from the frame start) that is a multiple of 8, `lengths[k]`
//   elements of array k; all numbers little-endian. A numpy client views each array in place.
//   (BINARY_ARRAYS below is this table in code.)
//     k  name                        dtype    shape
//     0  observations.indptr         uint32   [numEnvs + 1]
//     1  observations.indices        uint16   [nnz]
//     2  observations.values         float32  [nnz]
//     3  masks                       uint8    [numEnvs, NUM_ACTIONS]
//     4  seats                       int32    [numEnvs]
//     5  rewards                     float32  [numEnvs, rewardWidth] (multi: numPlayers; single: 1)
//     6  terminated                  uint8    [numEnvs]
//     7  truncated                   uint8    [numEnvs]
//     8  finalObservations.indptr    uint32   [len(final) + 1]
//     9  finalObservations.indices   uint16   [nnz]
//    10  finalObservations.values    float32  [nnz]
// Observations travel sparse, as CSR: row i's non-zeros are entries [indptr[i], indptr[i+1])
// of indices (the column) and values, in no particular order within a row. An observation has
// ~50 non-zeros of OBS_SIZE, so CSR is ~7x smaller than dense float32. `finalObservations` is a
// CSR over the rows of `result.final` (same order). Only element counts travel (the dtypes and
// the order are fixed), so the header stays small and fast to parse.

import { z } from 'zod';
import { envConfigSchema } from '../env/table.js';
import { MAX_SEATS, MAX_SEED_LENGTH, NUM_ACTIONS, ValidationError, checkSeed, rawJsonObject } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';

export type BinaryDtype = 'float32' | 'int32' | 'uint32' | 'uint16' | 'uint8';

/**
 * The arrays of a binary batch reply, in payload order: name, dtype, shape. The one list the
 * codec writes and reads and the schema's text describes (the table above shows it). Only their
 * element counts travel, in the header's `lengths`: a client computes every offset itself and a
 * small header parses fast.
 */
export const BINARY_ARRAYS = [
  ['observations.indptr', 'uint32', '[numEnvs+1]'],
  ['observations.indices', 'uint16', '[nnz]'],
  ['observations.values', 'float32', '[nnz]'],
  ['masks', 'uint8', '[numEnvs, NUM_ACTIONS]'],
  ['seats', 'int32', '[numEnvs]'],
  ['rewards', 'float32', '[numEnvs, rewardWidth]'],
  ['terminated', 'uint8', '[numEnvs]'],
  ['truncated', 'uint8', '[numEnvs]'],
  ['finalObservations.indptr', 'uint32', '[len(final)+1]'],
  ['finalObservations.indices', 'uint16', '[nnz]'],
  ['finalObservations.values', 'float32', '[nnz]'],
] as const satisfies readonly (readonly [string, BinaryDtype, string])[];

/** The binary reply layout above, for protocol.schema.json. */
export const BINARY_FRAME_LAYOUT = [
  'Sessions created with encoding "binary" answer env.reset and env.step with a binary frame:',
  'uint32 LE header length H; H bytes of UTF-8 JSON header ({id, result}: session, numEnvs, rewardWidth, final, lengths);',
  `zero padding to a multiple of 8; then ${BINARY_ARRAYS.length} arrays in this order, each starting 8-byte aligned (from the frame start), lengths[k] elements each:`,
  `${BINARY_ARRAYS.map(([name, dtype, shape]) => `${name} ${dtype}${shape}`).join(', ')}.`,
  'Observations are CSR: row i = entries indptr[i]..indptr[i+1], in no particular order within the row; numbers little-endian.',
].join(' ');

/**
 * Bumped on any incompatible change of a message; `hello` refuses other versions.
 * 2: binary replies list element counts (`lengths`) instead of per-array specs; `env.observe`;
 * `env.record` answers `kind` "full" or "seat".
 */
export const PROTOCOL_VERSION = 2;

const id = z.union([z.string().max(128), z.number().int()], { error: 'must be a string of at most 128 characters or an integer' }).describe('Request id, echoed in the reply.');
const seed = z
  .union([z.number().int(), z.string().max(MAX_SEED_LENGTH)], { error: `must be an integer or a string of at most ${MAX_SEED_LENGTH} characters` })
  // What the core refuses (a lone surrogate, which a single session's keyed seed and a policy's
  // generator took as U+FFFD, so that '\uD800' and '\uDC00' played alike) is refused here for every
  // request, naming the seed's own field.
  .superRefine((value, ctx) => {
    try {
      checkSeed(value);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      ctx.addIssue({ code: 'custom', message: e.reason });
    }
  })
  .describe('Integer or string seed (well-formed Unicode); 7 and "7" are the same seed.');
/** Longest session id a request may name (the server's are `s<number>`). */
export const MAX_SESSION_ID_LENGTH = 64;
/** Most envs of a session that keeps every seat's final observation (6 seats x 256 envs x OBS_SIZE floats: 3 MB). */
export const MAX_EVERY_SEAT_ENVS = 256;
/** Most actions one env.step may carry (one per env of its session). */
export const MAX_STEP_ACTIONS = 65_536;
const sessionId = z.string().max(MAX_SESSION_ID_LENGTH).describe('A session id returned by env.create.');
const policyId = z.string().max(64).describe('A policy id returned by policy.load.');
const agentSpec = z
  .string()
  .min(1)
  .max(1024)
  .describe('random, heuristic[:caution=x], pimc[:samples=k,timeBudgetMs=t,rollout=random|heuristic], or a checkpoint directory on the server');

function request<M extends string, P extends z.ZodType>(method: M, params: P, description: string) {
  return z.strictObject({ id, method: z.literal(method), params }).describe(description);
}

export const helloRequest = request(
  'hello',
  z.strictObject({
    protocolVersion: z.number().int().describe('Must equal the server protocol version.'),
    token: z.string().max(1024).optional().describe('Required when the server was started with --token.'),
  }),
  'Handshake; must come first.',
);

export const pingRequest = request('ping', z.strictObject({}).optional(), 'Liveness check; replies {}.');

export const specRequest = request('spec', z.strictObject({}).optional(), 'Observation layout and action table.');

export const createRequest = request(
  'env.create',
  z.strictObject({
    mode: z.enum(['multi', 'single']).default('multi').describe('multi: the client acts for every seat (the seat to act of each env); single: one learner seat, opponents played on the server.'),
    numEnvs: z.number().int().min(1).default(1),
    config: envConfigSchema.optional().describe('Env config: rules, episode, illegalAction, illegalActionPenalty, rewardScale, rewardNormalization, maxSteps.'),
    learnerSeat: z.number().int().min(0).optional().describe('single mode only: the learner seat. @default 0'),
    opponents: z.union([agentSpec, z.array(agentSpec.nullable()).max(6)], { error: 'must be an agent spec, or a list of at most 6 (one per seat, null for the learner)' }).optional().describe('single mode only: one agent spec for all other seats, or one per seat (the learner entry ignored; entries past the table\'s seats null or left out). @default "random"'),
    encoding: z.enum(['json', 'binary']).default('json').describe('How env.reset / env.step replies carry arrays (see the binary frame layout).'),
    finalObservations: z
      .enum(['observer', 'every-seat'])
      .default('observer')
      .describe(`multi mode only: observer: a reply's final entries carry the view of the table's observer only; every-seat: every seat's view of an episode's end is kept as well, for env.observe with episode "ended" (at most ${MAX_EVERY_SEAT_ENVS} envs)`),
  }).superRefine((p, ctx) => {
    if (p.finalObservations === 'every-seat') {
      if (p.mode !== 'multi') ctx.addIssue({ code: 'custom', path: ['finalObservations'], message: 'multi mode only: a single session ends with its learner\'s view' });
      else if (p.numEnvs > MAX_EVERY_SEAT_ENVS) ctx.addIssue({ code: 'custom', path: ['finalObservations'], message: `every-seat is kept for sessions of at most ${MAX_EVERY_SEAT_ENVS} envs, not ${p.numEnvs}` });
    }
    // A multi session plays every seat itself: these would be ignored, and a typo in them unseen.
    if (p.mode !== 'multi') return;
    for (const key of ['learnerSeat', 'opponents'] as const) {
      if (p[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'single mode only (mode "single"); a multi session plays every seat itself' });
    }
  }),
  'Creates an environment session of numEnvs tables; call env.reset before env.step.',
);

export const resetRequest = request(
  'env.reset',
  z.strictObject({
    session: sessionId,
    seed: seed.optional().describe('Env i plays the sessions "<seed>:<i>", "<seed>:<i>/1", ... Single sessions key it with the server\'s secret, the learner seat and the rules. Without a seed: a session\'s first reset plays a random seed; later, envs that just started an episode keep it, else the next seed of the sequence.'),
  }),
  'Starts an episode in every env of the session.',
);

/**
 * An action id as a client sends it: any whole number. One out of range (74, -1, 2^53, 1e308) is
 * an illegal action as the core explains it (`no such action id`), under the session's
 * illegalAction policy like any other; ids past 2^53 had been refused as "no integer" instead.
 */
const actionId = z.number().refine(Number.isInteger, { message: 'an action id is a whole number' }).meta({ type: 'integer' });

export const stepRequest = request(
  'env.step',
  z.strictObject({
    session: sessionId,
    actions: z.array(actionId).min(1).max(MAX_STEP_ACTIONS).describe('One action id per env (for its seat to act). With illegalAction "throw" a batch with an illegal action is refused whole and nothing is stepped.'),
  }),
  'Steps every env of the session; episodes that end are reset in the same step (final observations in result.final).',
);

export const closeRequest = request('env.close', z.strictObject({ session: sessionId }), 'Closes a session.');

const envIndex = z.number().int().min(0).default(0).describe('Which env of the session (0-based).');
/**
 * The most hands of history one env.view or env.record reply carries (about 2.2 KiB a hand):
 * a long session is read in pages, so no reply outgrows the server's buffers.
 */
export const MAX_HANDS_PER_REPLY = 256;
/** A seat of any table (0..MAX_SEATS-1). */
const seatIndex = z.number().int().min(0).max(MAX_SEATS - 1);
const fromHand = z.number().int().min(0).max(2 ** 31).default(0).describe('The first hand (0-based) whose history the reply carries.');
const maxHands = z
  .number()
  .int()
  .min(1)
  .max(MAX_HANDS_PER_REPLY)
  .default(MAX_HANDS_PER_REPLY)
  .describe(`At most this many hands of history from fromHand (at most ${MAX_HANDS_PER_REPLY}); read a longer session in pages.`);
const episodeChoice = z
  .enum(['current', 'ended'])
  .default('current')
  .describe('current: the episode in progress; ended: the last episode this env finished, the one the last `final` entry of a reply for this env described (envs auto-reset, so a frontend reads the finished one here; an episode that ends before a single-agent learner acts is played through at the reset, never reported, and never shown here). With episode "hand" the session goes on after a hand: ended shows it as that hand left it (replayed: its history and settlements up to that hand, no seat to act, nothing of the next hand); after a hand that ended the session (its last, or one cut short) it shows that finished session.');

export const viewRequest = request(
  'env.view',
  z.strictObject({
    session: sessionId,
    env: envIndex,
    seat: seatIndex.optional().describe('multi sessions: the seat whose view is given. @default the seat to act (seat 0 once the session is over); single sessions: always the learner seat'),
    episode: episodeChoice,
    fromHand,
    maxHands,
  }),
  "The public table as one seat sees it, for frontends: the observation view (own hand, face-up cards, trump, trick, declarations, pot, balances), the seat's legal moves, every hand's actions (other seats' discards masked) and tricks, and each finished hand's settlement (docs/rules.md §6).",
);

export const recordRequest = request(
  'env.record',
  z.strictObject({ session: sessionId, env: envIndex, episode: episodeChoice, fromHand, maxHands }),
  'The record of an env\'s session so far, finished hands only. Multi sessions (the client plays every seat): kind "full", a game record (docs/rules.md §5) with every deck and no seed. Single sessions: kind "seat", the learner seat\'s own record: its dealt cards, the face-up cards, every action with other seats\' discards masked, tricks and settlements, and no deck, so no hidden card ever reaches the client.',
);

export const observeRequest = request(
  'env.observe',
  z.strictObject({
    session: sessionId,
    env: envIndex,
    seat: seatIndex.optional().describe('multi sessions: any seat. @default the seat to act; single sessions: the learner seat only'),
    episode: z
      .enum(['current', 'ended'])
      .default('current')
      .describe('current: the episode in progress; ended: the end of the last episode this env finished (a multi session created with finalObservations "every-seat", seat given; the mask is all zero)'),
  }).superRefine((p, ctx) => {
    if (p.episode === 'ended' && p.seat === undefined) ctx.addIssue({ code: 'custom', path: ['seat'], message: 'episode "ended" has no seat to act: name the seat' });
  }),
  "One seat's current observation and legal-action mask (all zero unless it is to act) in env `env`, or its view of the last episode's end: what a multi-agent (AEC) client needs for `observe(agent)`.",
);

const matrix = z.array(z.array(z.number()));
/**
 * Rows of at most `width` numbers: zod checks a row's length before its entries, so a row of
 * 130,000 non-numbers gets one issue, not one per entry (whose merging overflowed the stack).
 */
const rowsOf = (width: number, what: string) => z.array(z.array(z.number()).max(width, `a row has ${width} entries (${what})`));

/**
 * The largest policy.act batch: 512 rows of the most compact JSON (one digit and a comma per
 * entry, ~1.1 KiB a row) fit the default 1 MiB message limit.
 */
export const MAX_POLICY_ROWS = 512;

export const policyLoadRequest = request(
  'policy.load',
  z.strictObject({
    agent: agentSpec,
    rules: rawJsonObject('a rule set').optional().describe("The rule set the policy plays; a checkpoint defaults to its own manifest's rules."),
    mode: z.enum(['greedy', 'sample']).default('greedy').describe('Checkpoints: play the most probable action or sample.'),
    seed: seed.default(0),
  }),
  'Loads an agent (a checkpoint directory gives a TF.js policy with probabilities).',
);

export const policyActRequest = request(
  'policy.act',
  // One object rather than a union of the two forms: a union's error is "Invalid input" for the
  // whole params, where this one names the field.
  z
    .strictObject({
      policy: policyId,
      observations: rowsOf(OBS_SIZE, 'OBS_SIZE')
        .min(1)
        .max(MAX_POLICY_ROWS, `at most ${MAX_POLICY_ROWS} rows`)
        .optional()
        .describe(`N observations of OBS_SIZE floats, each within its slice's bounds (observationSpec) and one-hot where every observation is (seat, numPlayers, profile, phase, kind; a seat at its table), for every policy (N at most ${MAX_POLICY_ROWS}); with masks, or a record instead.`),
      masks: rowsOf(NUM_ACTIONS, 'NUM_ACTIONS').min(1).max(MAX_POLICY_ROWS, `at most ${MAX_POLICY_ROWS} rows`).optional().describe('N masks of NUM_ACTIONS entries (nonzero = legal); with observations.'),
      seats: z.array(seatIndex).max(MAX_POLICY_ROWS, `at most ${MAX_POLICY_ROWS} rows`).optional().describe('With observations: the absolute seat of each row, which must be the seat the row encodes (refused otherwise). @default the seat encoded in each observation'),
      record: rawJsonObject('a game record').optional().describe('Instead of observations: a game record (docs/rules.md §5); the policy acts for the seat to act after replaying it.'),
    })
    .superRefine((p, ctx) => {
      if (p.record !== undefined) {
        for (const key of ['observations', 'masks', 'seats'] as const) {
          if (p[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'give observations and masks, or a record, not both' });
        }
        return;
      }
      if (p.observations === undefined) ctx.addIssue({ code: 'custom', path: ['observations'], message: 'required (observations and masks, or a record)' });
      else if (p.masks === undefined) ctx.addIssue({ code: 'custom', path: ['masks'], message: 'required with observations' });
    }),
  'Actions (and, for checkpoints, probabilities and values) for given observations or a record.',
);

export const policyCloseRequest = request('policy.close', z.strictObject({ policy: policyId }), 'Releases a loaded policy.');

export const requestSchema = z.discriminatedUnion('method', [
  helloRequest,
  pingRequest,
  specRequest,
  createRequest,
  resetRequest,
  stepRequest,
  closeRequest,
  viewRequest,
  recordRequest,
  observeRequest,
  policyLoadRequest,
  policyActRequest,
  policyCloseRequest,
]);

export type Request = z.output<typeof requestSchema>;
export type Method = Request['method'];
export type ParamsOf<M extends Method> = Extract<Request, { method: M }>['params'];

/** Each method's schema, for dispatch: the method is checked before its params. */
export const REQUEST_SCHEMAS: { [M in Method]: z.ZodType<Extract<Request, { method: M }>> } = {
  hello: helloRequest,
  ping: pingRequest,
  spec: specRequest,
  'env.create': createRequest,
  'env.reset': resetRequest,
  'env.step': stepRequest,
  'env.close': closeRequest,
  'env.view': viewRequest,
  'env.record': recordRequest,
  'env.observe': observeRequest,
  'policy.load': policyLoadRequest,
  'policy.act': policyActRequest,
  'policy.close': policyCloseRequest,
} as never;

export const METHODS = Object.keys(REQUEST_SCHEMAS) as Method[];

// ---- replies (documented for other languages; the server builds them, it does not parse them)

export const errorReply = z
  .strictObject({
    id: id.nullable(),
    error: z.strictObject({
      code: z.string().describe('One of ERROR_CODES (bridge/errors.ts).'),
      message: z.string(),
      field: z.string().optional().describe('Path of the offending field, e.g. params.config.rules.players.'),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .describe('An error reply; the connection stays usable, except after a refused hello on a connection not yet greeted (unauthorized, or limit_exceeded when the server is full), which closes it.');

const finalEntry = z.strictObject({
  env: z.number().int(),
  observation: z.array(z.number()).optional().describe('json encoding only; binary: finalObservations.* CSR rows.'),
  info: z.record(z.string(), z.unknown()),
});

export const batchResult = z
  .strictObject({
    session: sessionId,
    numEnvs: z.number().int(),
    observations: matrix.optional(),
    masks: matrix.optional(),
    seats: z.array(z.number().int()).optional(),
    rewards: z.union([matrix, z.array(z.number())]).optional(),
    terminated: z.array(z.boolean()).optional(),
    truncated: z.array(z.boolean()).optional(),
    lengths: z.array(z.number().int()).optional().describe('binary encoding: element counts of the payload arrays, in their fixed order.'),
    rewardWidth: z.number().int().optional(),
    final: z.array(finalEntry).describe('Envs whose episode ended in this step (auto-reset since).'),
  })
  .describe('Result of env.reset and env.step. JSON encoding: the arrays inline; binary: in buffers.');

export const resultReply = z.strictObject({ id, result: z.record(z.string(), z.unknown()) }).describe('A successful reply.');
