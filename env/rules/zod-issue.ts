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
const MAX_NAMED_KEYS = 8;

export function firstIssue(error: z.ZodError, prefix: readonly string[] = []): FieldIssue {
  const issue = error.issues[0]!;
  const path = [...prefix, ...issue.path.map(String)];
  let reason = issue.message;
  if (issue.code === 'unrecognized_keys' && issue.keys.length) {
    path.push(issue.keys[0]!);
    // At most a few named: a rule set of 30,000 unknown keys gave a 229 KB error message.
    const named = issue.keys.slice(0, MAX_NAMED_KEYS).join(', ');
    const more = issue.keys.length > MAX_NAMED_KEYS ? ` and ${issue.keys.length - MAX_NAMED_KEYS} more` : '';
    reason = `unknown field${issue.keys.length > 1 ? 's' : ''} ${named}${more}`;
  }
  // Array indices in brackets (`params.actions[3]`), as every hand-written check names them.
  const field = path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
  return { field, reason, message: `${field || '(root)'}: ${reason}` };
}
