// How every layer reports a failed zod parse: the first issue, as the path of the bad field and
// what is wrong with it. An unknown key is named in the path itself, so `rules.foo` points at
// the key to remove rather than at the object holding it.

import type { z } from 'zod';

export interface FieldIssue {
  /** Dotted path of the bad field (`league.selfPlay`, `params.actions[3]`); '' for the root. */
  field: string;
  reason: string;
  /** `<field>: <reason>`, the root shown as `(root)`. */
  message: string;
}

/** Unknown keys an error names before it only counts the rest. */
export const MAX_NAMED_KEYS = 8;

/** The longest key an error repeats whole. */
export const MAX_KEY_ECHO = 64;

/**
 * A key as errors name it: cut after MAX_KEY_ECHO characters. An error names a key up to three
 * times (path, reason, field): whole, a huge unknown key made the answer several times the size
 * of the request.
 */
export function echoedKey(key: string): string {
  return key.length > MAX_KEY_ECHO ? `${key.slice(0, MAX_KEY_ECHO)}...` : key;
}

/**
 * Why unknown keys are refused: the first `named` (at most MAX_NAMED_KEYS) by name, the rest of
 * `total` counted; a rule set of 30,000 unknown keys gave a 229 KB error message.
 */
export function unknownKeysReason(named: readonly string[], total: number): string {
  const more = total > named.length ? ` and ${total - named.length} more` : '';
  return `unknown field${total > 1 ? 's' : ''} ${named.map(echoedKey).join(', ')}${more}`;
}

export function firstIssue(error: z.ZodError, prefix: readonly string[] = []): FieldIssue {
  const issue = error.issues[0]!;
  // Keys of records come from the input too: every part is cut as unknown keys are.
  const path = [...prefix, ...issue.path.map((part) => echoedKey(String(part)))];
  let reason = issue.message;
  if (issue.code === 'unrecognized_keys' && issue.keys.length) {
    path.push(echoedKey(issue.keys[0]!));
    reason = unknownKeysReason(issue.keys.slice(0, MAX_NAMED_KEYS), issue.keys.length);
  }
  // Array indices in brackets (`params.actions[3]`), as every hand-written check names them.
  const field = path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
  return { field, reason, message: `${field || '(root)'}: ${reason}` };
}
