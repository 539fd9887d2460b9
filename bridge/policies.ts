// Policy serving: agents loaded by spec (a checkpoint directory gives a TF.js PolicyAgent, which
// also reports probabilities and values), acting on given observations or on a record's state.

import path from 'node:path';
import { NUM_ACTIONS, RuleSetError, ValidationError, actionToString, createGame, parseRuleSet, replayRecordSteps, ruleSetToJson } from '../env/rules/index.js';
import { OBS_SIZE, encodeObservation, observationSpec, type SliceName } from '../env/observation.js';
import { RULE_SET_SLICES, observedSeat } from '../env/observation-view.js';
import { decodeRow, type Agent } from '../agents/agent.js';
import { createAgent, type AgentLimits } from '../agents/registry.js';
import { PolicyAgent, policyWeightBytes } from '../agents/policy-agent.js';
import { selectBackend, type BackendChoice } from '../agents/tfjs.js';
import type { RulesInput } from '../checkpoints/checkpoint.js';
import { loadPolicyCheckpoint } from '../checkpoints/agent-loader.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { BridgeError, checkpointMessage } from './errors.js';
import { resolveCheckpoint } from './checkpoint-roots.js';
import type { ParamsOf } from './protocol.js';
import { drive, type StepControl } from './session.js';
import { SLICE_OF_ENTRY, packRows, type PolicyActParams } from './policy-rows.js';

export interface ServedPolicy {
  id: string;
  agent: Agent;
  /** Set for checkpoints: the policy behind probabilities and values. */
  policy?: PolicyAgent;
  /** Set for checkpoints: the rule-set entries its observations carry (see rulesEntries). */
  rulesEntries?: Map<number, number>;
  info: Record<string, unknown>;
}

/** The rules a loaded checkpoint plays: those asked for, else its manifest's. */
const rulesOfCheckpoint = new WeakMap<PolicyAgent, unknown>();

/** Column -> value of every rule-set entry in an observation of `rules` (the encoder's own output). */
function rulesEntries(rules: unknown): Map<number, number> {
  const game = createGame(rules as Record<string, unknown>);
  const row = new Float32Array(OBS_SIZE);
  encodeObservation(game.newState({ seed: 0 }), 0, row);
  const entries = new Map<number, number>();
  for (const slice of observationSpec().slices) {
    if (!RULE_SET_SLICES.includes(slice.name as SliceName)) continue;
    for (let k = slice.offset; k < slice.offset + slice.size; k++) entries.set(k, row[k]!);
  }
  return entries;
}

/** A checkpoint's network acts on observations of its own rules only: another table's rows are refused, naming the slice. */
function checkRowsRules(entries: Map<number, number>, observations: Float32Array, rows: number, field: string): void {
  for (let i = 0; i < rows; i++) {
    for (const [column, value] of entries) {
      if (observations[i * OBS_SIZE + column] === value) continue;
      const slice = SLICE_OF_ENTRY[column]!;
      const at = field === 'params.record' ? field : `${field}[${i}]`;
      throw new BridgeError('invalid_params', `${at}: a table of other rules than this policy plays (slice "${slice.name}" differs); load it with those rules (policy.load params.rules)`, at);
    }
  }
}

/**
 * Loads a checkpoint (or a store's `latest`) for `rules`, or for its own manifest rules when
 * `rules` is absent (loadPolicyCheckpoint), on the backend the server chose, refusing a network
 * of more than `maxModelBytes` of weights.
 * `dir` must already be resolved inside the server's checkpoint roots (checkpoint-roots.ts).
 */
export async function loadCheckpointAgent(
  dir: string,
  options: { rules?: unknown; mode?: 'greedy' | 'sample'; seed?: number | string; backend: BackendChoice; maxModelBytes: number },
): Promise<PolicyAgent> {
  await selectBackend(options.backend);
  const loaded = await loadPolicyCheckpoint(dir, options.rules as RulesInput | undefined, options.maxModelBytes);
  const agent = loaded.toAgent({ mode: options.mode ?? 'greedy', name: `policy:${path.basename(path.resolve(dir))}` });
  if (options.seed !== undefined) agent.reseed(options.seed);
  rulesOfCheckpoint.set(agent, options.rules ?? loaded.manifest.rules);
  return agent;
}

export async function loadPolicy(
  id: string,
  params: ParamsOf<'policy.load'>,
  options: { backend: BackendChoice; checkpointRoots: readonly string[]; agentLimits: AgentLimits },
): Promise<ServedPolicy> {
  checkPolicyRules(params.rules);
  let agent: Agent;
  try {
    agent = await createAgent(params.agent, {
      rules: params.rules,
      seed: params.seed,
      limits: options.agentLimits,
      loadCheckpoint: async (spec) =>
        loadCheckpointAgent(await resolveCheckpoint(spec, options.checkpointRoots, 'params.agent'), {
          rules: params.rules,
          mode: params.mode,
          seed: params.seed,
          backend: options.backend,
          maxModelBytes: options.agentLimits.maxModelBytes,
        }),
    });
  } catch (e) {
    if (e instanceof BridgeError) throw e;
    if (e instanceof CheckpointError) {
      // Rules the client named that the checkpoint was not trained for are that field's fault.
      const field = e.code === 'incompatible-rules' && params.rules !== undefined ? 'params.rules' : 'params.agent';
      throw new BridgeError('checkpoint_error', `${field}: ${checkpointMessage(e, params.agent)}`, field, { reason: e.code });
    }
    throw new BridgeError('invalid_params', `params.agent: ${(e as Error).message}`, 'params.agent');
  }
  const policy = agent instanceof PolicyAgent ? agent : undefined;
  const info: Record<string, unknown> = { policy: id, name: agent.name, probabilities: policy !== undefined };
  const rules = policy ? rulesOfCheckpoint.get(policy) : undefined;
  // The rule set a checkpoint plays (its manifest's unless params.rules named one): a client
  // could not learn it, and had to guess the table to seat it at.
  if (policy) Object.assign(info, { architecture: policy.architecture, mode: policy.mode, rules: ruleSetToJson(parseRuleSet(rules)) });
  return { id, agent, policy, info, rulesEntries: rules === undefined ? undefined : rulesEntries(rules) };
}

/**
 * The absolute seat row `row` was encoded for. A row no encoder writes there (no seat, two, a
 * seat off its table: all-zero rows above all) is refused for every policy: the random one,
 * which reads nothing else, acted on it as seat 0's.
 */
function seatOf(observations: Float32Array, row: number): number {
  try {
    return decodeRow(row, () => observedSeat(observations, row * OBS_SIZE));
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    throw observationsError(e);
  }
}

/** A ValidationError over the client's observation rows (decodeRow's, naming `observations[i]`) as the reply names it. */
function observationsError(e: ValidationError): BridgeError {
  const namesRow = e.field.startsWith('observations[');
  const field = namesRow ? `params.${e.field}` : 'params.observations';
  return new BridgeError('invalid_params', `${field}: ${namesRow ? e.reason : `a row is no observation this encoder writes (${e.message})`}`, field);
}

/**
 * Checked for every agent, also those that play any rule set (random, heuristic, pimc): a bad
 * rule set is an error naming its field, never ignored.
 */
export function checkPolicyRules(rules: unknown): void {
  if (rules === undefined) return;
  try {
    parseRuleSet(rules);
  } catch (e) {
    if (!(e instanceof RuleSetError)) throw e;
    const field = e.field ? `params.rules.${e.field}` : 'params.rules';
    throw new BridgeError('invalid_params', `${field}: ${e.reason}`, field);
  }
}

/**
 * Acts for every row. A checkpoint's network takes the batch a slice of rows at a time
 * (rowsPerSlice); the other agents (search above all: up to its time budget per row) a row at a
 * time. Between them the work gives way through `control`, so other clients' requests take turns
 * and a client that has gone stops its work.
 */
export async function actWithPolicy(served: ServedPolicy, params: PolicyActParams, control?: StepControl): Promise<Record<string, unknown>> {
  let observations: Float32Array;
  let masks: Uint8Array;
  let seats: Int32Array;
  let fromRecord: { seat: number } | null = null;
  if ('record' in params && params.record !== undefined) {
    let state;
    try {
      // A long record (thousands of hands) gives way between hands, as env.record does.
      state = await drive(replayRecordSteps(params.record), control);
    } catch (e) {
      if (e instanceof ValidationError) {
        const field = e.field ? `params.record.${e.field}` : 'params.record';
        throw new BridgeError('invalid_record', `${field}: ${e.reason}`, field);
      }
      throw e; // ReplayIllegalActionError maps to invalid_record in errors.ts
    }
    const seat = state.currentSeat;
    if (seat < 0) throw new BridgeError('no_decision', `nobody is to act after the record (phase ${state.phase})`, 'params.record');
    observations = new Float32Array(OBS_SIZE);
    masks = new Uint8Array(NUM_ACTIONS);
    encodeObservation(state, seat, observations);
    state.legalActionMask(masks);
    seats = Int32Array.of(seat);
    fromRecord = { seat };
  } else {
    if ('refused' in params) throw new BridgeError(params.refused.code, params.refused.message, params.refused.field, params.refused.details);
    const rows = 'rows' in params ? params.rows : packRows(params);
    observations = rows.observations;
    masks = rows.masks;
    const n = observations.length / OBS_SIZE;
    for (let i = 0; i < n; i++) {
      if (!masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS).includes(1)) {
        throw new BridgeError('invalid_params', `params.masks[${i}]: no legal action`, `params.masks[${i}]`);
      }
    }
    seats = Int32Array.from({ length: n }, (_, i) => seatOf(observations, i));
    // Given seats must be the rows' own: a seat the row was not written for (or one the table
    // lacks) was passed to the agent unchecked.
    const wrong = rows.seats ? rows.seats.findIndex((seat, i) => seat !== seats[i]) : -1;
    if (wrong >= 0) {
      throw new BridgeError('invalid_params', `params.seats[${wrong}]: row ${wrong} is seat ${seats[wrong]}'s observation, not seat ${rows.seats![wrong]}'s`, `params.seats[${wrong}]`);
    }
  }
  if (served.rulesEntries) checkRowsRules(served.rulesEntries, observations, seats.length, fromRecord ? 'params.record' : 'params.observations');
  let actions: Int32Array;
  try {
    if (!control) actions = served.agent.act(observations, masks, seats);
    else if (served.policy) actions = await actInSlices(served.policy, observations, masks, seats, control);
    else actions = await actRowByRow(served.agent, observations, masks, seats, control);
  } catch (e) {
    // Agents that rebuild the table from an observation (heuristic, pimc) meet one no encoder
    // wrote: the fault is in the observations the client sent, not in some rules field.
    if (fromRecord || !(e instanceof ValidationError)) throw e;
    throw observationsError(e);
  }
  const result: Record<string, unknown> = { actions: Array.from(actions), actionNames: Array.from(actions, actionToString) };
  if (fromRecord) result.seat = fromRecord.seat;
  if (served.policy) {
    const { probs, values } = control ? await evaluateInSlices(served.policy, observations, masks, control) : served.policy.evaluate(observations, masks);
    const n = seats.length;
    result.probabilities = Array.from({ length: n }, (_, i) => Array.from(probs.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS)));
    result.values = Array.from(values);
  }
  return result;
}

// About 5-8 ms of a network's work on this kind of machine (wasm, one thread: 5-8 billion
// multiply-adds a second): 351 rows of a network of three 2048-wide layers, 38 MB of weights
// under the checkpoint size limit, ran as one piece of 0.4-0.7 s (twice: act, then evaluate),
// and held every other client's request that long.
const SLICE_MULTIPLY_ADDS = 4e7;
/** TF.js' predict runs rows in batches of 32: slices of whole batches act as the batch at once does. */
const PREDICT_BATCH = 32;

/** Rows of a checkpoint's batch run between pauses: the pretrained networks take up to 448 rows (a whole request) at once. */
export function rowsPerSlice(policy: PolicyAgent): number {
  const multiplyAddsPerRow = policyWeightBytes(policy.architecture) / 4;
  const rows = Math.floor(SLICE_MULTIPLY_ADDS / multiplyAddsPerRow);
  return rows >= PREDICT_BATCH ? rows - (rows % PREDICT_BATCH) : Math.max(1, rows);
}

async function actInSlices(policy: PolicyAgent, observations: Float32Array, masks: Uint8Array, seats: Int32Array, control: StepControl): Promise<Int32Array> {
  const n = seats.length;
  const size = rowsPerSlice(policy);
  if (n <= size) return policy.act(observations, masks, seats);
  const actions = new Int32Array(n);
  await forEachSlice(n, size, control, false, (from, to) => {
    actions.set(policy.act(observations.subarray(from * OBS_SIZE, to * OBS_SIZE), masks.subarray(from * NUM_ACTIONS, to * NUM_ACTIONS), seats.subarray(from, to)), from);
  });
  return actions;
}

/** evaluate, a slice of rows at a time; it follows the act, so it may give way before its first slice too. */
async function evaluateInSlices(policy: PolicyAgent, observations: Float32Array, masks: Uint8Array, control: StepControl): Promise<{ probs: Float32Array; values: Float32Array }> {
  const n = observations.length / OBS_SIZE;
  const size = rowsPerSlice(policy);
  if (n <= size) return policy.evaluate(observations, masks);
  const probs = new Float32Array(n * NUM_ACTIONS);
  const values = new Float32Array(n);
  await forEachSlice(n, size, control, true, (from, to) => {
    const slice = policy.evaluate(observations.subarray(from * OBS_SIZE, to * OBS_SIZE), masks.subarray(from * NUM_ACTIONS, to * NUM_ACTIONS));
    probs.set(slice.probs, from * NUM_ACTIONS);
    values.set(slice.values, from);
  });
  return { probs, values };
}

/** `run(from, to)` over rows [0, n) in slices of `size`, giving way through `control` between them (and before the first, with `pauseFirst`). */
async function forEachSlice(n: number, size: number, control: StepControl, pauseFirst: boolean, run: (from: number, to: number) => void): Promise<void> {
  for (let from = 0; from < n; from += size) {
    if ((from > 0 || pauseFirst) && control.due()) await control.pause();
    run(from, Math.min(n, from + size));
  }
}

async function actRowByRow(agent: Agent, observations: Float32Array, masks: Uint8Array, seats: Int32Array, control: StepControl): Promise<Int32Array> {
  const actions = new Int32Array(seats.length);
  for (let i = 0; i < seats.length; i++) {
    let row: Int32Array;
    try {
      row = agent.act(observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE), masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS), seats.subarray(i, i + 1));
    } catch (e) {
      // The agent saw a batch of one: its row 0 is row i of the request.
      if (e instanceof ValidationError && e.field === 'observations[0]') throw new ValidationError(e.error, `observations[${i}]`, e.reason);
      throw e;
    }
    actions[i] = row[0]!;
    if (i + 1 < seats.length && control.due()) await control.pause();
  }
  return actions;
}
