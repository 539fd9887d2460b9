// Flags shared by the commands that set up a table: the rule set from --profile, --players,
// --hands and --variant. Errors are ValidationErrors naming the flag, for each command to report.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ValidationError, quoteInput } from '../env/rules/index.js';
import { unwritableFolderReason } from '../checkpoints/durable-fs.js';
import type { SuitSymmetry } from '../env/suit-symmetry.js';
import { repeatedKeyIn } from './read-input.js';
import { repeatedKeyReason } from '../env/json-scan.js';
import { parseRedisUrl, type RedisConnection } from '../training/distributed/redis.js';

export function integerFlag(value: string | boolean | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
    throw new ValidationError('invalid arguments', field, `--${field} must be an integer, got ${quoteInput(String(value))}`);
  }
  // Past 2^53 the number read is another one (9007199254740993 became ...992, echoed so in errors).
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new ValidationError('invalid arguments', field, `--${field} ${quoteInput(value)} is beyond what any flag takes (2^53 - 1)`);
  return number;
}

/** `--suit-symmetry on|off|holding` as a SuitSymmetry (undefined when absent). */
export function suitSymmetryFlag(value: string | boolean | undefined, field: string): SuitSymmetry | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off' && value !== 'holding') throw new ValidationError('invalid arguments', field, `--${field} must be on, off or holding, got ${quoteInput(String(value))}`);
  return value === 'holding' ? 'holding' : value === 'on';
}

/**
 * A --seed value: an integer when it reads as a safe one, else the string itself (0 when absent),
 * so 10^30 and 10^30 + 1 stay two seeds rather than one rounded double.
 */
export function seedFlag(value: string | boolean | undefined): number | string {
  if (typeof value !== 'string') return 0;
  // `--seed "$SEED"` with SEED unset ran with the seed "" without a word.
  if (value === '') throw new ValidationError('invalid arguments', 'seed', '--seed is empty: give an integer or a non-empty string');
  return /^-?\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

/** The rule set the flags describe: --variant's JSON object, then --profile, --players, --hands (and play's --deck-style). */
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
    const twice = repeatedKeyIn(values.variant);
    if (twice !== null) throw new ValidationError('invalid arguments', 'variant', `--variant: ${repeatedKeyReason(twice)}`);
    rules = { ...rules };
  }
  // A flag and the variant naming one field differently: which was meant? (The flag won without a word.)
  const set = (field: 'profile' | 'players' | 'hands' | 'deckStyle', value: unknown, flag: string = field) => {
    if (value === undefined) return;
    if (rules[field] !== undefined && rules[field] !== value) {
      // A number as written: JSON.stringify wrote 1e400 (Infinity) as null.
      const shown = (v: unknown) => (typeof v === 'number' ? String(v) : JSON.stringify(v)?.slice(0, 40));
      throw new ValidationError('invalid arguments', flag, `--${flag} ${shown(value)} and --variant's ${field} ${shown(rules[field])} differ: give it once`);
    }
    rules[field] = value;
  };
  set('profile', values.profile);
  set('players', integerFlag(values.players, 'players'));
  set('hands', integerFlag(values.hands, 'hands'));
  // Only `play` takes --deck-style (display names); the other verbs never see the flag.
  set('deckStyle', values['deck-style'], 'deck-style');
  return rules;
}

/**
 * Checks an output folder flag before any work: not empty, and a folder this process can write
 * in, or one it can create (a report would otherwise fail after the whole run). Creates nothing.
 * `from` names where the value came from in errors (a config file's field is no flag).
 */
export function outputFolderFlag(value: string, field: string, from: { label: string; error: string } = { label: `--${field}`, error: 'invalid arguments' }): string {
  if (value === '') throw new ValidationError(from.error, field, `${from.label} is empty`);
  const reason = unwritableFolderReason(value);
  if (reason !== null) throw new ValidationError(from.error, field, `cannot write in ${value}: ${reason}`);
  return value;
}

/**
 * A comma-separated agent list such as `heuristic,pimc:samples=8,rollout=random,runs/x`: an
 * agent's own options are comma-separated too, so a `key=value` item continues the agent before it.
 */
export function agentListFlag(value: string, field = 'agents'): string[] {
  const agents: string[] = [];
  for (const item of value.split(',').map((a) => a.trim())) {
    if (!item) throw new ValidationError('invalid arguments', field, `--${field} has an empty entry: ${quoteInput(value)}`);
    if (/^[A-Za-z]\w*=/.test(item) && agents.length > 0 && agents[agents.length - 1]!.includes(':')) agents[agents.length - 1] += `,${item}`;
    else agents.push(item);
  }
  return agents;
}

/**
 * The field of a node:util parseArgs error: the flag its message names (`--updates -1` is an
 * ambiguous argument of `updates`, `--bogus` an unknown option), else `arguments`.
 */
export function parseArgsErrorField(error: unknown): string {
  const message = (error as Error).message ?? '';
  // "Option '-h, --help' does not take an argument": the long name (the short one was the field, "h").
  return /'(?:-\w, )?--([A-Za-z][\w-]*)/.exec(message)?.[1] ?? /'-([A-Za-z])\b/.exec(message)?.[1] ?? 'arguments';
}

/**
 * node:util's parseArgs, refusing a value flag given twice (unless it is `multiple`): parseArgs
 * keeps the last, so `--players 9 --players 4` ran with 4 and never reported the 9. The refusal
 * is a parse error like parseArgs' own (code ERR_PARSE_ARGS_INVALID_OPTION_VALUE, naming the flag).
 */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  let parsed: ReturnType<typeof parseArgs<T & { tokens: true }>>;
  try {
    parsed = parseArgs({ ...config, tokens: true });
  } catch (e) {
    throw clearerParseError(e, config);
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    const option = config.options?.[token.name];
    if (option?.multiple) continue;
    if (seen.has(token.name)) {
      throw Object.assign(new TypeError(`Option '--${token.name}' is given more than once: give it once`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
    }
    seen.add(token.name);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}

/**
 * parseArgs' error for a value that starts with a dash (`--hands -1`) said it was "ambiguous" in
 * three sentences, and never which value: the same error, saying what was read and how to write it.
 */
function clearerParseError(error: unknown, config: ParseArgsConfig): unknown {
  const message = (error as Error)?.message ?? '';
  // A bare --help or -h never gets here (wantsHelp answers it first): this is one with a value
  // (`--help=x`), which parseArgs called an unknown option where a verb does not declare help,
  // as if there were no help at all. Every verb answers it in the same words.
  if (/^Unknown option '(--help|-h)'/.test(message) || message.startsWith("Option '-h, --help' does not take an argument")) {
    return Object.assign(new TypeError(`Option '--help' takes no value: give --help (or -h) alone`), { code: (error as { code?: string }).code });
  }
  const flag = /^Option '(-[^']+)' argument is ambiguous/.exec(message)?.[1];
  if (flag === undefined) return error;
  const short = flag.startsWith('--') ? undefined : flag.slice(1);
  const name = short === undefined ? flag.slice(2) : (Object.entries(config.options ?? {}).find(([, option]) => option.short === short)?.[0] ?? short);
  const args = config.args ?? [];
  const value = args[args.indexOf(flag) + 1] ?? '';
  const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return Object.assign(new TypeError(`Option '${flag}' takes a value, and "${shown}" after it reads as a flag: write a value starting with "-" as --${name}=${shown}`), {
    code: (error as { code?: string }).code,
  });
}

/** Where a Redis password can come from instead of the URL (see redisFlag). */
export const REDIS_PASSWORD_ENV = 'KRATZEN_REDIS_PASSWORD';

/**
 * A --redis URL as a connection. A URL without a password takes KRATZEN_REDIS_PASSWORD when it
 * is set and not empty: a password in the URL is on the command line, which `ps` shows every
 * user of the machine. One in the URL wins.
 */
export function redisFlag(url: string, env: NodeJS.ProcessEnv = process.env): RedisConnection {
  const connection = parseRedisUrl(url);
  const password = env[REDIS_PASSWORD_ENV];
  return connection.password === undefined && password ? { ...connection, password } : connection;
}
