// Flags shared by the commands that set up a table: the rule set from --profile, --players,
// --hands and --variant. Errors are ValidationErrors naming the flag, for each command to report.

import { ValidationError } from '../env/rules/index.js';

export function integerFlag(value: string | boolean | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
    throw new ValidationError('invalid arguments', field, `--${field} must be an integer, got "${value}"`);
  }
  return Number(value);
}

/** A --seed value: an integer when it reads as one, else the string itself (0 when absent). */
export function seedFlag(value: string | boolean | undefined): number | string {
  if (typeof value !== 'string') return 0;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** The rule set the flags describe: --variant's JSON object, then --profile, --players, --hands. */
export function rulesFromFlags(values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  let rules: Record<string, unknown> = {};
  if (typeof values.variant === 'string') {
    try {
      rules = JSON.parse(values.variant);
    } catch (e) {
      throw new ValidationError('invalid arguments', 'variant', `--variant must be a JSON object: ${(e as Error).message}`);
    }
    if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) {
      throw new ValidationError('invalid arguments', 'variant', '--variant must be a JSON object');
    }
    rules = { ...rules };
  }
  if (values.profile !== undefined) rules.profile = values.profile;
  const players = integerFlag(values.players, 'players');
  if (players !== undefined) rules.players = players;
  const hands = integerFlag(values.hands, 'hands');
  if (hands !== undefined) rules.hands = hands;
  return rules;
}
