// The CLI's stdout: what a verb prints arrives whole, or its loss is reported (exit 3). Node
// writes a stdout that is a file or a device with one write(2) and drops, without an error, what
// a short write left over (a disk that fills up: `kratzen random > out.json` ended 0 with a cut
// record). There the text is written here until all of it is out, so the write that finds no
// room fails as it should. Pipes and terminals keep Node's stream (main.ts handles their errors).

import { fstatSync } from 'node:fs';
import { isatty } from 'node:tty';
import { fsErrorReason, writeAllSync } from '../checkpoints/durable-fs.js';
import { agentDependsOnTime } from '../agents/registry.js';

let writesSync: boolean | undefined;

function stdoutWritesSync(): boolean {
  if (writesSync === undefined) {
    try {
      const info = fstatSync(1);
      writesSync = info.isFile() || (info.isCharacterDevice() && !isatty(1));
    } catch {
      writesSync = false; // no stdout at all: Node's stream reports it
    }
  }
  return writesSync;
}

/** Writes `text` to stdout whole; returns the error that stopped it (a full disk), or null. */
export function tryWriteStdout(text: string): Error | null {
  if (!stdoutWritesSync()) {
    process.stdout.write(text);
    return null;
  }
  const bytes = Buffer.from(text);
  try {
    writeAllSync(1, bytes);
    return null;
  } catch (e) {
    return e as Error;
  }
}

/** Writes `text` to stdout whole, or exits 3 saying the output was lost. */
export function writeStdout(text: string): void {
  const error = tryWriteStdout(text);
  if (error) failOutput('stdout', fsErrorReason(error));
}

/** Says on stderr (stdout may be the output that failed) that output chosen by `field` could not be written. */
export function reportOutputLost(field: string, reason: string): void {
  process.stderr.write(`${JSON.stringify({ error: 'cannot write output', field, reason })}\n`);
}

/** Output that could not be written: one JSON line on stderr, exit 3. */
export function failOutput(field: string, reason: string): never {
  reportOutputLost(field, reason);
  process.exit(3);
}

/**
 * `text` with control, bidirectional-format and line-separator characters shown as escapes (\u001b): echoed
 * raw, an answer's escape sequences set the terminal's title or cleared its screen, and a name
 * holding a newline broke a table's lines.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Warns on stderr, before the run, when agent `spec` searches for a time (pimc:timeBudgetMs): the
 * same seed then gives other results, found out only after two runs. A spec that is no agent's
 * is left for the run to refuse, naming its flag.
 */
export function warnIfTimed(verb: string, spec: string): void {
  let timed = false;
  try {
    timed = agentDependsOnTime(spec);
  } catch {
    return;
  }
  if (timed) process.stderr.write(`${verb}: ${printable(spec)} searches for a time: its results depend on this machine's speed and load, not only on --seed\n`);
}

/**
 * `text` as one shell word: as is when it holds only safe characters, else in single quotes (in
 * double quotes, a pasted `$HOME` or backtick in a path was expanded or run).
 */
export function shellQuoted(text: string): string {
  return /^[\w./,:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
