#!/usr/bin/env node
// The `kratzen` command: parses flags and calls the modules; no game logic lives here.

import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { OutputError, fsErrorReason } from '../checkpoints/durable-fs.js';
import { failOutput, printable, reportOutputLost, warnIfTimed, writeStdout } from './output.js';
import {
  errorReport,
  randomSession,
  replayToText,
  replayResult,
  stateToRecord,
  createGame,
  parseRuleSet,
  ruleSetToJson,
  ValidationError,
  quoteInput,
} from '../env/rules/index.js';
import { ProgressBar, checkAgentSpec, dealsBetterText, dealsForHands, runTournament, tournamentReportProblem, writeTournamentReport, type RunOptions, type TournamentConfig, type TournamentResult } from '../training/index.js';
import { loadCheckpoint } from '../checkpoints/agent-loader.js';
import { CheckpointError } from '../checkpoints/errors.js';
import { agentListFlag, integerFlag, outputFolderFlag, parseArgsErrorField, parseFlags, redisFlag, rulesFromFlags, seedFlag } from './flags.js';
import { MAX_RECORD_BYTES, denseJsonReason, inputText, readInputBytes } from './read-input.js';
import { duplicateKeyAt, twiceReason } from '../env/json-scan.js';
import { runTrain } from './train.js';
import { runServe } from './serve.js';
import { runPlay } from './play.js';
import { runExploit } from './exploit.js';
import { runWorker } from './worker.js';
import { redactedUrl } from '../training/distributed/redis.js';
import { runTournamentOnRedis, type DistributedOptions } from '../training/distributed/tournament-jobs.js';
import { MAX_PRINTED_SESSION_HANDS, VERB_HELP, wantsHelp } from './help.js';
import { untilStopped } from './signals.js';

/** Every verb main() dispatches. */
const VERBS = ['replay', 'random', 'demo', 'train', 'play', 'serve', 'eval', 'worker', 'exploit'];

const USAGE = `kratzen <verb> [options]

The rules of the game, both profiles and every variant: docs/rules.md.

Every verb prints all its options with --help (kratzen eval --help); the lines below name the main ones.

verbs:
  replay <record.json|->      replay a record, print the result JSON (docs/rules.md §6)
  random --seed S [--profile didactic4|tavern5] [--players N] [--hands H] [--variant JSON]
                              print the record (docs/rules.md §5) of a session of uniformly random play
  demo [--seed S] [--profile P] [--players N] [--hands H] [--variant JSON]
                              play a random session and print its hands
  train [--name N] [--updates U] [--seed S] [--profile P] [--players N] [--variant JSON] [--config FILE]
        [--backend auto|tensorflow|wasm|cpu] [--resume]
                              self-play PPO training; writes runs/<name>/ (checkpoints, metrics.jsonl, report.html)
  play [--opponents A,B,...] [--seat S] [--seed S] [--profile P] [--players N] [--hands H] [--variant JSON]
       [--deck-style german|french|french-joker] [--record FILE]
                              play a session in the terminal against bots; saves the record for kratzen replay
  serve [--host 127.0.0.1] [--port 8765] [--token T] [--web]
                              WebSocket bridge (bridge/protocol.ts)
  eval --agents A,B[,...] [--hands N] [--profile P] [--players N] [--variant JSON] [--seed S] [--workers W]
       [--out DIR] [--json] [--redis URL] [--block-deals B]
                              duplicate tournament; agents: random, heuristic, pimc[:samples=K], or a checkpoint dir
  worker --redis URL [--concurrency N] [--lock-seconds S]
                              take tournament and rollout jobs from Redis (docs/scale-out.md)
  exploit --target A [--updates U] [--hands H] [--profile P] [--players N] [--variant JSON] [--seed S]
          [--imitation-updates K] [--backend B] [--json] [--out DIR]
                              train a best response against a frozen agent; its edge bounds the agent's exploitability
`;

function printJson(value: unknown): void {
  writeStdout(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Exit codes: 0 ok, 1 illegal action or amount overflow, 2 bad input, 3 output that could not be written.
 *
 * Exits with `code` and the error report as one JSON line on stderr: on stdout it went into the
 * file a command's output was redirected to (`random ... > session.json` wrote the error there,
 * and replaying that file then called it a record without rules).
 */
function fail(code: number, value: Record<string, unknown>): never {
  process.stderr.write(`${JSON.stringify(value)}\n`);
  process.exit(code);
}

function badInput(field: string, reason: string, error = 'invalid arguments'): never {
  fail(2, { error, field, reason });
}

function readJson(path: string): unknown {
  let bytes: Buffer;
  let text: string;
  try {
    bytes = readInputBytes(path, 'record', MAX_RECORD_BYTES);
    text = inputText(bytes, path, 'record');
  } catch (e) {
    if (e instanceof ValidationError) return badInput(e.field, e.reason, 'malformed record');
    throw e;
  }
  // Faults of the whole text are named `record`, as the size and encoding checks above name them.
  const dense = denseJsonReason(bytes, text);
  if (dense) return badInput('record', dense, 'malformed record');
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (e) {
    return badInput('record', `not JSON: ${(e as Error).message}`, 'malformed record');
  }
  const twice = duplicateKeyAt(bytes);
  if (twice !== null) return badInput(twice.field, twiceReason(twice.key), 'malformed record');
  return record;
}

/** Runs a function that may throw the rules core's typed errors and maps them to exit codes. */
function reportingErrors<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    failOnKnownError(e);
    throw e;
  }
}


function printedSessionRules(values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const rules = rulesFromFlags(values);
  const { hands } = parseRuleSet(rules);
  if (hands > MAX_PRINTED_SESSION_HANDS) {
    throw new ValidationError('invalid arguments', 'hands', `a printed session has at most ${MAX_PRINTED_SESSION_HANDS} hands, got ${hands}`);
  }
  return rules;
}

const SESSION_OPTIONS = {
  seed: { type: 'string' },
  profile: { type: 'string' },
  players: { type: 'string' },
  hands: { type: 'string' },
  variant: { type: 'string' },
} as const;

async function reportingAsyncErrors(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (e) {
    failOnKnownError(e);
    throw e;
  }
}

/**
 * Exits with the report of the rules core's typed errors, or of a checkpoint that cannot be used
 * (exit 2, naming its path); returns for any other error.
 */
function failOnKnownError(e: unknown): void {
  if (e instanceof OutputError) failOutput(e.field, e.reason);
  if (e instanceof CheckpointError) fail(2, { error: 'checkpoint error', field: 'checkpoint', code: e.code, path: e.path, reason: e.reason });
  const report = errorReport(e);
  if (report) fail(report.exitCode, report.output);
}

/**
 * runTournamentOnRedis, stopped by Ctrl-C, a kill or a closed terminal: the run's queued jobs are
 * taken back (workers played them for nobody, ahead of later runs), then the process exits with
 * the signal's code.
 */
function evalOnRedis(config: TournamentConfig, options: DistributedOptions): Promise<TournamentResult> {
  return untilStopped('stopping: taking the queued jobs back (again to quit at once)...', (signal) => runTournamentOnRedis(config, { ...options, signal }));
}

/**
 * runTournament here, stopped the same way after the deals in play: the tournament's copies of
 * checkpoints are removed (each stop left one behind, up to 256 MiB), then the process exits with
 * the signal's code.
 */
function evalLocally(config: TournamentConfig, options: RunOptions): Promise<TournamentResult> {
  return untilStopped('stopping after the deals in play (again to quit at once)...', (signal) => runTournament(config, { ...options, shouldStop: () => signal.aborted }));
}

async function runEval(args: string[]): Promise<void> {
  const { values } = parseFlags({
    args,
    options: {
      ...SESSION_OPTIONS,
      agents: { type: 'string' },
      workers: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      redis: { type: 'string' },
      'block-deals': { type: 'string' },
    },
  });
  if (!values.agents) badInput('agents', 'kratzen eval needs --agents A,B[,...]');
  const agents = reportingErrors(() => agentListFlag(values.agents!));
  if (agents.length < 2) badInput('agents', 'name at least two agents');
  reportingErrors(() => outputFolderFlag(values.out ?? 'runs', 'out'));
  const out = values.out ?? join('runs', `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const unwritable = tournamentReportProblem(out);
  if (unwritable) badInput('out', `cannot write the report: ${unwritable}`);
  // --hands is the evaluation's size here, not the session length.
  const game = reportingErrors(() => createGame(rulesFromFlags({ ...values, hands: undefined })));
  if (agents.length > game.numPlayers) badInput('agents', `${agents.length} agents for ${game.numPlayers} seats: a match seats at most one agent per seat`);
  // A built-in agent's bad options, or a name that is no agent and no path, are bad arguments as
  // in play and exploit (the run called them "evaluation failed"); checkpoints load in the run.
  for (const spec of agents) {
    try {
      await checkAgentSpec(spec, ruleSetToJson(game.rules));
    } catch (e) {
      badInput('agents', (e as Error).message);
    }
    // Same seed, other results: said before the run, not found out after two.
    warnIfTimed('eval', spec);
  }
  const hands = reportingErrors(() => integerFlag(values.hands, 'hands')) ?? 1000;
  // --hands counts hands over all rotations: deals x seats x hands per session.
  const deals = reportingErrors(() => dealsForHands(hands, game.numPlayers, game.rules.hands));
  // Out-of-range worker counts are refused by runTournament, naming `workers`.
  const workers = reportingErrors(() => integerFlag(values.workers, 'workers')) ?? Math.min(2, availableParallelism());
  const seed = reportingErrors(() => seedFlag(values.seed));
  // Given empty (an unset variable in --redis "$URL"), it ran locally without a word.
  const onRedis = values.redis !== undefined;
  if (values['block-deals'] !== undefined && !onRedis) badInput('block-deals', '--block-deals sizes the blocks of an evaluation on Redis: it needs --redis');
  // On Redis the deals are played by `kratzen worker` processes: a thread count went unused (and unchecked).
  if (values.workers !== undefined && onRedis) badInput('workers', '--workers sets the threads of a local evaluation; on Redis the `kratzen worker` processes play (their --concurrency)');
  const config: TournamentConfig = { agents, rules: ruleSetToJson(game.rules), deals, seed, workers };
  const bar = new ProgressBar('eval', deals);
  let result: TournamentResult;
  try {
    if (onRedis) {
      const connection = reportingErrors(() => redisFlag(values.redis!));
      const blockDeals = reportingErrors(() => integerFlag(values['block-deals'], 'block-deals'));
      if (blockDeals !== undefined && blockDeals < 1) badInput('block-deals', `--block-deals must be at least 1, got ${blockDeals}`);
      // Said at once: with no worker running the run waited without a word.
      process.stderr.write(`eval: ${deals} deals go to Redis at ${redactedUrl(values.redis!)}; \`kratzen worker --redis <url>\` processes play them (until one takes them, this waits)\n`);
      result = await evalOnRedis(config, { connection, blockDeals, onDeal: (done) => bar.update(done) });
    } else {
      result = await evalLocally(config, {
        loadCheckpoint,
        checkpointModule: new URL('../checkpoints/agent-loader.js', import.meta.url).href,
        onDeal: (done) => bar.update(done),
      });
    }
  } catch (e) {
    failOnKnownError(e);
    return badInput('agents', (e as Error).message, 'evaluation failed');
  }
  // The results go out even when the report cannot be written (a full disk, a report file's name
  // taken by a folder since the check above): a finished evaluation printed nothing. The report
  // is written whole or not at all, so an earlier one in the folder stays as it was.
  let path: string | null = null;
  let lost: string | null = null;
  try {
    path = writeTournamentReport(result, out);
  } catch (e) {
    lost = fsErrorReason(e);
  }
  for (const [spec, folder] of Object.entries(result.config.checkpoints ?? {})) {
    process.stderr.write(`eval: ${printable(spec)} played its latest checkpoint, ${printable(folder)}\n`);
  }
  if (values.json) {
    printJson(result);
    if (path !== null) process.stderr.write(`report: ${printable(path)}\n`);
  } else {
    // --hands rounds up to whole duplicate deals (each played from every seat), and tie-break hands
    // may add to them: say what was played.
    const note = result.hands === hands ? '' : ` (--hands ${hands}: whole deals, at least 2, plus any tie-break hands)`;
    writeStdout(`${deals} deals x ${game.numPlayers} seatings: ${result.hands} hands${note}\n`);
    for (const a of result.agents) {
      writeStdout(`${printable(a.name).padEnd(28)} ${a.meanChipsPerHand.toFixed(3).padStart(9)} ±${a.ci95.toFixed(3)} chips/hand, rating ${a.rating.toFixed(0)}\n`);
    }
    // The paired difference per deal is the sharper comparison (each deal's luck cancels): the
    // agents' own intervals overlapped where the duplicate difference was clear.
    for (const h of result.headToHead) {
      writeStdout(`${printable(h.a)} - ${printable(h.b)}: ${h.meanDifference >= 0 ? '+' : ''}${h.meanDifference.toFixed(3)} ±${h.ci95.toFixed(3)} chips/hand, ${printable(h.a)} ${dealsBetterText(h)}\n`);
    }
    if (path !== null) writeStdout(`report: ${printable(path)}\n`);
  }
  if (lost !== null) failOutput('out', lost);
}

/**
 * A reader that stops early (`kratzen random ... | head`) is no error: the command ends quietly,
 * except `play`, which plays on without its output and still saves its record.
 */
function endQuietlyOnClosedStdout(verb: string | undefined): void {
  let gone = false;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (gone) return;
    gone = true;
    if (e.code === 'EPIPE') {
      if (verb !== 'play') process.exit(0);
      return;
    }
    // The output is lost (a full disk, a closed descriptor): say so on stderr, not with a stack
    // trace. `play` still finishes and saves its record, then exits 3.
    if (verb !== 'play') failOutput('stdout', e.message);
    reportOutputLost('stdout', e.message);
    stdoutLost = true;
    // The write that fails may be the last one, its error coming after the game ended.
    if (e.code === 'EIO' && process.stdout.isTTY === true) process.once('exit', endAsHangUp);
  });
}

/** Whether stdout failed (not a reader that stopped early) while `play` went on. */
let stdoutLost = false;
/**
 * Ends the process as a closed terminal's SIGHUP would (exit status 129 in a shell), once the
 * record is saved: stdout was a terminal that has gone (writes fail with EIO). Exiting normally,
 * Node restores the terminal's settings, fails on the closed one and aborts (SIGABRT, 134):
 * `play` in a window that was closed got its end of input before its SIGHUP.
 */
function endAsHangUp(): void {
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
}

/**
 * Progress bars and notes go to stderr; when it is gone (a closed pipe, a full disk) they are
 * lost, not the work: unheard, the write error ended train with no checkpoint (exit 7) and eval
 * with no report (exit 1). Errors still set the exit code.
 */
function carryOnWithoutStderr(): void {
  process.stderr.on('error', () => undefined);
}

async function main(argv: string[]): Promise<void> {
  const [verb, ...rest] = argv;
  endQuietlyOnClosedStdout(verb);
  carryOnWithoutStderr();
  const help = verb === undefined ? undefined : VERB_HELP[verb];
  if (help && wantsHelp(rest)) {
    writeStdout(help);
    return;
  }
  switch (verb) {
    case 'replay': {
      const { positionals } = parseFlags({ args: rest, allowPositionals: true, options: {} });
      if (positionals.length !== 1) badInput('record', 'usage: kratzen replay <record.json|->');
      const record = readJson(positionals[0]!);
      const { exitCode, text } = replayToText(record);
      // A result that is lost is exit 3; a report of a bad record goes to stderr on one line, as fail's.
      if (exitCode === 0) writeStdout(`${text}\n`);
      else process.stderr.write(`${JSON.stringify(JSON.parse(text))}\n`);
      process.exitCode = exitCode;
      return;
    }
    case 'random': {
      const { values } = parseFlags({ args: rest, options: SESSION_OPTIONS });
      if (values.seed === undefined) badInput('seed', 'kratzen random needs --seed S');
      const seed = reportingErrors(() => seedFlag(values.seed));
      const state = reportingErrors(() => randomSession(printedSessionRules(values), seed));
      printJson(stateToRecord(state));
      return;
    }
    case 'demo': {
      const { values } = parseFlags({ args: rest, options: SESSION_OPTIONS });
      const seed = reportingErrors(() => seedFlag(values.seed));
      const state = reportingErrors(() => randomSession(printedSessionRules(values), seed));
      const result = replayResult(state);
      result.hands.forEach((hand, h) => {
        writeStdout(
          `hand ${h}: dealer ${hand.dealer}, trump ${hand.trump}, ${hand.kind}${hand.walkover ? ' (walkover)' : ''}, ` +
            `pot ${hand.potBeforePlay} -> ${hand.potAfter}, tricks [${hand.tricks}], balances [${hand.balances}]\n`,
        );
      });
      writeStdout(`final: balances [${result.final.balances}], pot ${result.final.pot}, winners [${result.final.winners}]\n`);
      return;
    }
    case 'eval':
      return runEval(rest);
    case 'train':
      return reportingAsyncErrors(() => runTrain(rest));
    case 'worker':
      return reportingAsyncErrors(() => runWorker(rest));
    case 'exploit':
      return reportingAsyncErrors(() => runExploit(rest));
    case 'serve':
      await runServe(rest);
      return;
    case 'play':
      process.exitCode = await runPlay(rest);
      if (stdoutLost && process.exitCode === 0) process.exitCode = 3;
      return;
    case undefined:
      // No verb is a mistake, as `git` and `npm` treat it: a script that ran `kratzen $VERB` with
      // an empty variable must not go on as if something had run.
      process.stderr.write(USAGE);
      process.exitCode = 2;
      return;
    case 'help': {
      // `kratzen help eval` printed the overview, and `kratzen help bogus` exited 0.
      const [topic] = rest;
      if (topic === undefined || topic === '--help' || topic === '-h') writeStdout(USAGE);
      else if (VERBS.includes(topic)) await main([topic, '--help']);
      else badInput('verb', `unknown verb ${quoteInput(topic)}; kratzen --help lists them`);
      return;
    }
    case '--help':
    case '-h':
      writeStdout(USAGE);
      return;
    default:
      badInput('verb', `unknown verb ${quoteInput(verb)}; kratzen --help lists them`);
  }
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) badInput(parseArgsErrorField(e), (e as Error).message);
  throw e;
}
