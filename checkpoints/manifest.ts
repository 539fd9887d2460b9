// manifest.json: what a checkpoint was trained for (rules, observation version, action count),
// what it is (architecture, step, metrics, seed), and the sha256 of every other file in it.

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RuleSetError, parseRuleSet, ruleSetToJson } from '../env/rules/index.js';
import { ACTIVATIONS, MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH } from '../agents/policy-agent.js';

export const CHECKPOINT_FORMAT_VERSION = 1;

/** Hidden layer widths of a network (a policy's or a critic's), as configs and manifests give them. */
export const hiddenSizesSchema = z.array(z.number().int().positive().max(MAX_HIDDEN_WIDTH)).min(1).max(MAX_HIDDEN_LAYERS);
/** How a network relabels the suits (env/suit-symmetry.ts' SuitSymmetry), as configs and manifests give it. */
// Named in the error: "on" was refused with zod's bare "Invalid input".
export const suitSymmetrySchema = z.union([z.boolean(), z.literal('holding')], { error: 'must be true, false or "holding"' });
export const MANIFEST_FILE = 'manifest.json';
export const MODEL_FILE = 'model.json';
export const WEIGHTS_FILE = 'weights.bin';

/** Names of checkpoints and extras: plain file names, no paths, no hidden or temp entries. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');

export const manifestSchema = z
  .strictObject({
    formatVersion: z.literal(CHECKPOINT_FORMAT_VERSION),
    /**
     * The normalized rule set (ruleSetToJson of the parsed rules). Checked by the rules core on
     * the raw JSON: a record schema would copy a `__proto__` key into a prototype, unseen.
     */
    rules: z.unknown().transform((rules, ctx) => {
      try {
        return normalizeRules(rules);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: e instanceof RuleSetError ? `${e.field ? `${e.field}: ` : ''}${e.reason}` : (e as Error).message });
        return z.NEVER;
      }
    }),
    obsVersion: z.number().int().positive(),
    numActions: z.number().int().positive(),
    observationSize: z.number().int().positive(),
    architecture: z.strictObject({
      hiddenSizes: hiddenSizesSchema,
      activation: z.enum(ACTIVATIONS),
    }),
    /**
     * The network reads the cards with the suits relabelled so that trump is suit 0 (`true`), the
     * plain suits also ordered by the observer's holding with `"holding"` (env/suit-symmetry.ts).
     * Absent in checkpoints of networks that read them as dealt.
     */
    suitSymmetry: suitSymmetrySchema.optional(),
    /** Training step the weights belong to (the learner decides the unit, e.g. env steps). */
    step: z.number().int().nonnegative(),
    metrics: z.record(z.string(), z.number()),
    seed: z.number().int(),
    createdAt: z.iso.datetime(),
    /** TF.js backend that produced the weights (for reports; any backend loads them). */
    backend: z.string().min(1),
    /** Every file of the checkpoint except the manifest itself. */
    files: z.record(z.string().regex(NAME_PATTERN), z.strictObject({ sha256: sha256Hex, bytes: z.number().int().nonnegative() })),
    /** Named binary blobs (e.g. optimizer state) with a JSON description each. */
    extras: z.record(z.string().regex(NAME_PATTERN), z.strictObject({ file: z.string().regex(NAME_PATTERN), meta: z.json() })),
  })
  .superRefine((m, ctx) => {
    for (const file of [MODEL_FILE, WEIGHTS_FILE]) {
      if (!(file in m.files)) ctx.addIssue({ code: 'custom', path: ['files'], message: `files must list ${file}` });
    }
    for (const [name, extra] of Object.entries(m.extras)) {
      if (!(extra.file in m.files)) ctx.addIssue({ code: 'custom', path: ['extras', name, 'file'], message: `${extra.file} is not in files` });
    }
  });

export type CheckpointManifest = z.output<typeof manifestSchema>;
export type JsonValue = z.output<ReturnType<typeof z.json>>;

/** Bytes handed to the hash at a time: one update of 2 GiB or more fails ("data is too long"). */
const HASH_CHUNK_BYTES = 1 << 28;

export function sha256(data: Uint8Array): string {
  const hash = createHash('sha256');
  for (let at = 0; at < data.byteLength; at += HASH_CHUNK_BYTES) hash.update(data.subarray(at, Math.min(data.byteLength, at + HASH_CHUNK_BYTES)));
  return hash.digest('hex');
}

/** The rule set in the one form that manifests store and compare (throws RuleSetError if invalid). */
export function normalizeRules(rules: unknown): Record<string, unknown> {
  return ruleSetToJson(parseRuleSet(rules));
}

/** JSON with sorted keys, so equal rule sets compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
