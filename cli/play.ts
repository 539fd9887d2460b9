#!/usr/bin/env node
// `kratzen play`: a person plays a session in the terminal against bots. Reads moves from stdin
// (a number from the list of legal moves, or the action text), shows each trick and each hand's
// settlement, and saves the record for replay at the end, on `quit` or at end of input.
// Legality comes from the rules core (`legalActions`); this file only shows and asks.

import { existsSync, fstatSync, realpathSync } from 'node:fs';
import { basename, dirname, normalize, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { agentListFlag, parseArgsErrorField, parseFlags, rulesFromFlags, seedFlag } from './flags.js';
import {
  SUIT_LETTERS,
  SUIT_SYMBOLS,
  actionToString,
  cardHiddenFrom,
  cardLongName,
  cardShortName,
  createGame,
  errorReport,
  handReport,
  parseAction,
  ruleSetToJson,
  stateToRecord,
  suitDisplayName,
  type DeckStyle,
  type HandReport,
  type KratzenGame,
  type KratzenState,
  ValidationError,
} from '../env/rules/index.js';
import { observationView } from '../env/observation-view.js';
import type { Agent } from '../agents/agent.js';
import { LOCAL_AGENT_LIMITS, createAgent, type AgentLimits } from '../agents/registry.js';
import { DecisionRows, decide } from '../agents/play.js';
import { loadCheckpoint } from '../checkpoints/agent-loader.js';
import { HistoryRecorder, type TrickView } from '../env/table-view.js';
import { writeFileAtomic } from '../training/files.js';
import { entryExists, fsErrorReason, unwritableFolderReason } from '../checkpoints/durable-fs.js';
import { printable, reportOutputLost, shellQuoted } from './output.js';
import { wantsHelp } from './help.js';
import { STOP_SIGNALS, signalExitCode } from './signals.js';

/**
 * The opponents' limits in `play`: a bot decides on the thread that answers Ctrl-C, so its
 * decision must end within seconds (pimc:samples=99999 held a Ctrl-C off for minutes, and the
 * record was never saved).
 */
export const PLAY_AGENT_LIMITS: AgentLimits = { ...LOCAL_AGENT_LIMITS, maxPimcTimeBudgetMs: 5_000, maxPimcSimulatedActions: 200_000 };

export const PLAY_USAGE = `kratzen play [--opponents A,B,...] [--seat S] [--seed S] [--profile didactic4|tavern5] [--players N]
             [--hands H] [--variant JSON] [--deck-style german|french|french-joker]
             [--record FILE]
  Play a session against bots: opponents random, heuristic, pimc[:samples=K], or a checkpoint dir
  (cycled over the other seats; default heuristic). Answer with a move's number or its text
  (\`play Kc\`, \`in\`, \`out\`); \`help\` shows the table again, \`quit\` (or end of input, or Ctrl-C) saves and stops.
  The record goes to --record (default runs/play-<time>.json) for \`kratzen replay\`.
  A bot's decision ends within seconds, so that Ctrl-C is answered: pimc searches at most
  timeBudgetMs=${PLAY_AGENT_LIMITS.maxPimcTimeBudgetMs} and stops after ${PLAY_AGENT_LIMITS.maxPimcSimulatedActions.toLocaleString('en-US')} simulated actions (about 3 s here; work, not
  time, so a seeded game repeats).
  Exit code: 0 when the session ends or you quit, 130 after Ctrl-C (128 + the signal's number), 1 when
  an amount passes 2^53 units (docs/rules.md §3), 2 on bad arguments, 3 when the record cannot be written.
`;

/** Card and action texts for people, in the session's deck style (env/rules/card-names.ts). */
export class CardNames {
  constructor(private readonly style: DeckStyle) {}

  /** `K♣` */
  short(token: string): string {
    return cardShortName(token, this.style);
  }

  /** `Eichel König` / `King of Clubs` */
  long(token: string): string {
    return cardLongName(token, this.style);
  }

  suit(letter: string): string {
    return suitDisplayName(letter, this.style);
  }

  both(token: string): string {
    return `${this.short(token)} (${this.long(token)})`;
  }

  /** An action's text for people: `play K♣ (Eichel König)`. */
  action(text: string): string {
    const [verb, arg] = text.split(' ');
    if ((verb === 'play' || verb === 'discard') && arg) return `${verb} ${this.both(arg)}`;
    if (verb === 'trump' && arg) return `trump ${this.suit(arg)}`;
    return text;
  }
}

/**
 * Reads a person's answer as a legal action, or null. Numbers index `legal` (1-based); a move's
 * text as `shown` lists it is that move (the Weli was listed as `play W♦`, which the card parser
 * read as a card `Wd` and refused).
 */
/** A move's label without the card's long name: `play O♥` of `play O♥ (Herz Ober)`. */
function shortLabel(label: string): string {
  return label.replace(/\s*\(.*\)$/, '');
}

export function parseMove(input: string, legal: readonly number[], shown?: (action: number) => string): number | null {
  const text = input.trim().replace(/\s+/g, ' ');
  if (/^\d+$/.test(text)) {
    const k = Number(text);
    return k >= 1 && k <= legal.length ? legal[k - 1]! : null;
  }
  // As listed, its short part before the card's long name (`play W♦`), or that card alone (`O♥`:
  // the hand is shown so, and a bare card was read as the engine's token only).
  const asListed = (label: string) => [label, shortLabel(label), shortLabel(label).replace(/^(play|discard) /, '')].map((form) => form.trim().replace(/\s+/g, ' ').toLowerCase());
  const listed = shown ? legal.filter((a) => asListed(shown(a)).includes(text.toLowerCase())) : [];
  if (listed.length === 1) return listed[0]!;
  const candidates = new Set<number>();
  const normalized = text.replace(/[♣♠♥♦]/g, (s) => SUIT_LETTERS[SUIT_SYMBOLS.indexOf(s as never)]!);
  const normalizeCard = (t: string) => {
    const token = t.replace(/^10/, 'T');
    return token.length === 2 ? token[0]!.toUpperCase() + token[1]!.toLowerCase() : token.toUpperCase();
  };
  const words = normalized.split(' ');
  const verb = words[0]!.toLowerCase();
  if (words.length === 2 && ['play', 'discard', 'trump'].includes(verb)) {
    candidates.add(parseAction(`${verb} ${verb === 'trump' ? words[1]!.toLowerCase() : normalizeCard(words[1]!)}`));
  } else if (words.length === 1) {
    candidates.add(parseAction(verb));
    // A bare card: the one legal play or discard of it.
    const token = normalizeCard(words[0]!);
    candidates.add(parseAction(`play ${token}`));
    candidates.add(parseAction(`discard ${token}`));
  }
  const found = [...candidates].filter((a) => a >= 0 && legal.includes(a));
  return found.length === 1 ? found[0]! : null;
}

interface PlayIo {
  /** The person's answers (default stdin); destroyed when a signal stops the session. */
  input?: Readable;
  output?: Writable;
  /** Where a refused command line is reported (default stderr: stdout is the game). */
  errors?: Writable;
}

class BadArguments extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** The terminal session; `runPlay` parses flags and hands it the game. */
class TerminalGame {
  private readonly names: CardNames;
  private readonly recorder: HistoryRecorder;
  private readonly write: (text: string) => void;
  private shownHand = -1;

  constructor(
    private readonly state: KratzenState,
    private readonly agents: (Agent | null)[],
    private readonly seat: number,
    output: Writable,
    private readonly interactive: boolean,
  ) {
    this.names = new CardNames(state.rules.deckStyle);
    this.recorder = new HistoryRecorder(seat);
    this.write = (text) => void output.write(text);
  }

  private seatName(s: number): string {
    return s === this.seat ? 'You' : `Seat ${s} (${this.agents[s]!.name})`;
  }

  /** Plays until the session ends, the input runs dry or it is stopped; returns whether it was finished. */
  async play(reader: LineReader): Promise<boolean> {
    const state = this.state;
    const rows = new DecisionRows();
    while (!state.isTerminal) {
      if (state.phase === 'deal') state.dealNextHand();
      if (state.handIndex !== this.shownHand) this.showHandStart();
      const seat = state.currentSeat;
      let action: number;
      if (seat === this.seat) {
        const chosen = await this.ask(reader);
        if (chosen === null) return false;
        action = chosen;
      } else {
        // Bots move synchronously: a turn of the event loop lets a Ctrl-C in between bot moves.
        await new Promise(setImmediate);
        if (reader.stopped) {
          this.write('\n(stopped)\n');
          return false;
        }
        action = decide(this.agents[seat]!, state, seat, rows);
        this.write(`  ${this.seatName(seat)}: ${cardHiddenFrom(this.seat, seat, action) ? 'discards a card' : this.names.action(actionToString(action))}\n`);
      }
      const finished = state.results.length;
      const trick = this.recorder.observe(state, seat, action);
      state.apply(action);
      if (trick) this.showTrick(trick);
      for (let h = finished; h < state.results.length; h++) this.showSettlement(handReport(state, state.results[h]!), h);
    }
    this.showFinal();
    return true;
  }

  private showHandStart(): void {
    const state = this.state;
    this.shownHand = state.handIndex;
    const v = observationView(state, this.seat);
    const faceUp = v.faceUp.map((c) => this.names.both(c)).join(', ') || 'none';
    this.write(
      `\n=== Hand ${state.handIndex + 1} of ${state.rules.hands}${v.tieBreak ? ' (tie-break)' : ''}: ${v.kind}, dealer ${this.seatName(v.dealer)}, ` +
        `trump ${v.trump ? this.names.suit(v.trump) : 'not yet named'}, face up ${faceUp}, pot ${v.pot} ===\n`,
    );
  }

  private showTable(legal: readonly number[]): void {
    const v = observationView(this.state, this.seat);
    const n = v.numPlayers;
    this.write(`\nTrump ${v.trump ? this.names.suit(v.trump) : '(not yet named)'} · pot ${v.pot} · phase ${v.phase}\n`);
    for (let s = 0; s < n; s++) {
      const marks = [s === v.dealer ? 'dealer' : '', v.declarations[s] !== 'none' ? v.declarations[s] : '', v.dealtIn[s] ? `tricks ${v.tricksWon[s]}${v.quotas[s] ? `/${v.quotas[s]}` : ''}` : 'not dealt in']
        .filter(Boolean)
        .join(', ');
      this.write(`  ${this.seatName(s).padEnd(24)} ${String(v.balances[s]).padStart(7)} chips  ${marks}\n`);
    }
    if (v.phase === 'play') {
      const order = Array.from({ length: n }, (_, k) => (v.trickLeader + k) % n).filter((s) => v.currentTrick[s]);
      const trick = order.map((s) => `${this.names.short(v.currentTrick[s]!)} ${s === this.seat ? 'You' : `Seat ${s}`}`).join(', ');
      this.write(`Trick ${v.trickNumber + 1}: ${trick || '(you lead)'}\n`);
    }
    this.write(`Your hand: ${v.hand.map((c) => this.names.short(c)).join('  ')}\n`);
    this.write('Your moves:\n');
    legal.forEach((a, i) => this.write(`  ${String(i + 1).padStart(2)}) ${this.names.action(actionToString(a))}\n`));
  }

  /** Asks until the answer is a legal move; null at end of input or on quit. */
  private async ask(reader: LineReader): Promise<number | null> {
    const legal = this.state.legalActions();
    this.showTable(legal);
    for (;;) {
      // The example is written as the list shows moves (`play O♥`, not the engine's `play Qh`).
      this.write(`Your move [1-${legal.length}, text like "${shortLabel(this.names.action(actionToString(legal[0]!)))}", help, quit]: `);
      const line = await reader.next();
      if (line === null) {
        this.write(reader.stopped ? '\n(stopped)\n' : reader.cutShort ? `\n(end of input: ${reader.cutShort})\n` : '\n(end of input)\n');
        return null;
      }
      if (line.length > MAX_LINE_CHARS) {
        this.write(`${this.interactive ? '' : '\n'}  That line is over ${MAX_LINE_CHARS} characters; answer with a number 1-${legal.length} or a move's text.\n`);
        continue;
      }
      // Piped answers are not echoed by a terminal: show them, so a transcript reads right.
      if (!this.interactive) this.write(`${printable(line)}\n`);
      const answer = line.trim().toLowerCase();
      if (answer === 'quit' || answer === 'q' || answer === 'exit') return null;
      if (answer === 'help' || answer === '?' || answer === '') {
        this.showTable(legal);
        continue;
      }
      const action = parseMove(line, legal, (a) => this.names.action(actionToString(a)));
      if (action !== null) {
        this.write(`  You: ${this.names.action(actionToString(action))}\n`);
        return action;
      }
      this.write(`  "${printable(line.trim().slice(0, 40))}" is not one of your moves; answer with a number 1-${legal.length} or a move's text.\n`);
    }
  }

  private showTrick(trick: TrickView): void {
    const plays = trick.plays.map((p) => `${this.names.short(p.card)} ${p.seat === this.seat ? 'You' : `Seat ${p.seat}`}`).join(', ');
    this.write(`  -> Trick ${trick.trick + 1}: ${plays}; won by ${trick.winner === this.seat ? 'you' : `Seat ${trick.winner}`}\n`);
  }

  private showSettlement(r: HandReport, h: number): void {
    this.write(`\n--- Settlement of hand ${h + 1}: ${r.kind}${r.walkover ? ' (walkover)' : ''}, trump ${this.names.suit(r.trump)}, pot ${r.potBeforePlay} -> ${r.potAfter} ---\n`);
    this.write(`  ${'seat'.padEnd(24)} ${'in'.padEnd(4)} tricks  payout  penalty${r.fees ? '   fees' : ''}  balance\n`);
    r.balances.forEach((b, s) => {
      const fee = r.fees ? String(r.fees[s]).padStart(7) : '';
      this.write(
        `  ${this.seatName(s).padEnd(24)} ${(r.in[s] ? 'in' : 'out').padEnd(4)} ${String(r.tricks[s]).padStart(6)} ${String(r.payouts[s]).padStart(7)} ${String(r.penalties[s]).padStart(8)}${fee} ${String(b).padStart(8)}\n`,
      );
    });
  }

  private showFinal(): void {
    const state = this.state;
    const chips = (units: number) => state.game.toChips(units);
    const winners = state.winners();
    this.write('\n=== Final standings ===\n');
    const order = Array.from({ length: state.numPlayers }, (_, s) => s).sort((a, b) => state.balances[b]! - state.balances[a]!);
    for (const s of order) this.write(`  ${this.seatName(s).padEnd(24)} ${String(chips(state.balances[s]!)).padStart(8)} chips${winners.includes(s) ? '  winner' : ''}\n`);
    this.write(`  left in the pot: ${chips(state.pot)}\n`);
  }
}

/**
 * Longest answer line read: a longer line is answered as too long, whichever chunks it arrives in
 * (`next()` gives its first MAX_LINE_CHARS + 1 characters, the rest is dropped up to its newline).
 */
const MAX_LINE_CHARS = 4096;
/**
 * Characters dropped from one line before the input counts as ended (`< /dev/zero` has no
 * newline): far more than any pasted line (at 1 MiB a pasted 2 MB line ended the session, and
 * the answers after it were lost), and read from /dev/zero in a fraction of a second.
 */
const MAX_DROPPED_CHARS = 1 << 26;

function stdinIsDirectory(): boolean {
  try {
    return fstatSync(0).isDirectory();
  } catch {
    return false;
  }
}

/** Lines of the person's input; `stopped` once interrupted (Ctrl-C), when `next()` gives null. */
interface LineReader {
  next: () => Promise<string | null>;
  readonly stopped: boolean;
  /** Why the input counts as ended before its end, when it does (a line without end). */
  readonly cutShort: string | null;
  interrupt: () => void;
  close: () => void;
}

/**
 * Lines of `input`, one per `next()`; null once it ends. `interrupt()` ends it early: a pending
 * `next()` resolves to null at once, and `close()` then destroys `input`, whose read is still
 * pending (it would keep the process alive).
 */
function lineReader(input: Readable): LineReader {
  const chunks = input.setEncoding('utf8')[Symbol.asyncIterator]() as AsyncIterator<string>;
  let pending = '';
  /** The head of an over-long line whose newline has not come yet, and how much of it was dropped. */
  let longHead: string | null = null;
  let dropped = 0;
  let ended = false;
  let interrupted = false;
  let wake: ((value: null) => void) | null = null;
  return {
    next: async () => {
      for (;;) {
        if (interrupted) return null;
        const newline = pending.indexOf('\n');
        if (newline >= 0) {
          const line = longHead ?? pending.slice(0, Math.min(newline, MAX_LINE_CHARS + 1)).replace(/\r$/, '');
          pending = pending.slice(newline + 1);
          longHead = null;
          dropped = 0;
          return line;
        }
        if (pending.length > MAX_LINE_CHARS) {
          longHead ??= pending.slice(0, MAX_LINE_CHARS + 1);
          dropped += pending.length;
          pending = '';
          if (dropped > MAX_DROPPED_CHARS) ended = true;
        }
        if (ended) {
          const last = longHead ?? (pending.length > 0 ? pending : null);
          pending = '';
          longHead = null;
          return dropped > MAX_DROPPED_CHARS ? null : last;
        }
        const r = await new Promise<IteratorResult<string> | null>((resolve, reject) => {
          wake = resolve;
          chunks.next().then(resolve, reject);
        });
        wake = null;
        if (r === null) return null;
        if (r.done) ended = true;
        else pending += r.value;
      }
    },
    get stopped() {
      return interrupted;
    },
    get cutShort() {
      return dropped > MAX_DROPPED_CHARS ? `a line of over ${MAX_DROPPED_CHARS} characters without a newline` : null;
    },
    interrupt: () => {
      interrupted = true;
      wake?.(null);
    },
    close: () => {
      void chunks.return?.();
      if (interrupted) input.destroy();
    },
  };
}

function defaultRecordPath(): string {
  return `runs/play-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
}

/** `kratzen play`: returns the exit code (0 also when the person quits; 128 + its number after a stop signal; 2 on bad arguments). */
export async function runPlay(args: string[], io: PlayIo = {}): Promise<number> {
  const output = io.output ?? process.stdout;
  const out = (text: string) => void output.write(text);
  const errors = io.errors ?? process.stderr;
  const refuse = (field: string, reason: string) => void errors.write(`${JSON.stringify({ error: 'invalid arguments', field, reason })}\n`);
  let game: KratzenGame;
  let values: Record<string, string | boolean | undefined>;
  // As for every verb: --help anywhere before `--` is help, also after a flag that takes a value.
  if (wantsHelp(args)) {
    out(PLAY_USAGE);
    return 0;
  }
  try {
    ({ values } = parseFlags({
      args,
      options: {
        opponents: { type: 'string' },
        seat: { type: 'string' },
        seed: { type: 'string' },
        profile: { type: 'string' },
        players: { type: 'string' },
        hands: { type: 'string' },
        variant: { type: 'string' },
        'deck-style': { type: 'string' },
        record: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
    if (values.help) {
      out(PLAY_USAGE);
      return 0;
    }
    try {
      game = createGame(rulesFromFlags(values));
    } catch (e) {
      const report = errorReport(e);
      if (!report) throw e;
      // A bad --deck-style is named by its flag, as the other flags are (it was the rule set's `deckStyle`).
      const field = String(report.output.field);
      throw new BadArguments(field === 'deckStyle' && values['deck-style'] !== undefined ? 'deck-style' : field, String(report.output.reason));
    }
  } catch (e) {
    const field = e instanceof BadArguments ? e.field : parseArgsErrorField(e);
    refuse(field, (e as Error).message);
    return 2;
  }
  const n = game.numPlayers;
  const seatText = typeof values.seat === 'string' ? values.seat : '0';
  const seat = Number(seatText);
  if (!/^\d+$/.test(seatText) || seat >= n) {
    refuse('seat', `--seat must be a seat 0..${n - 1}`);
    return 2;
  }
  const seedText = typeof values.seed === 'string' ? values.seed : String(Date.now() % 1_000_000_000);
  let seed: number | string;
  try {
    seed = seedFlag(seedText);
  } catch (e) {
    refuse('seed', (e as ValidationError).reason);
    return 2;
  }
  let specs: string[];
  try {
    specs = agentListFlag(typeof values.opponents === 'string' ? values.opponents : 'heuristic', 'opponents');
    if (specs.length > n - 1) throw new BadArguments('opponents', `${n} players leave ${n - 1} seats for opponents, got ${specs.length}: ${specs.join(', ')}`);
  } catch (e) {
    refuse('opponents', e instanceof ValidationError ? e.reason : (e as Error).message);
    return 2;
  }
  const rules = ruleSetToJson(game.rules);
  const agents: (Agent | null)[] = new Array(n).fill(null);
  try {
    for (let s = 0, k = 0; s < n; s++) {
      if (s === seat) continue;
      agents[s] = await createAgent(specs[k++ % specs.length]!, { rules, seed: `${seed}:seat${s}`, loadCheckpoint, limits: PLAY_AGENT_LIMITS });
    }
  } catch (e) {
    refuse('opponents', (e as Error).message);
    return 2;
  }
  /** An amount past 2^53 - 1 units (docs/rules.md §3), reported as `kratzen random` reports it (stderr). */
  const reportStop = (report: NonNullable<ReturnType<typeof errorReport>>): number => {
    errors.write(`${JSON.stringify(report.output)}\n`);
    return report.exitCode;
  };
  let state: KratzenState;
  try {
    state = game.newState({ seed });
  } catch (e) {
    // The first deal's stakes can pass 2^53 - 1 units.
    const report = errorReport(e);
    if (!report) throw e;
    for (const agent of agents) agent?.dispose?.();
    return reportStop(report);
  }
  // Normalized as the checks below read it: `nodir/../x.json` passed them as x.json, and the
  // rename after the game then failed on the missing nodir.
  let recordPath = typeof values.record === 'string' ? (values.record === '' ? '' : normalize(values.record)) : defaultRecordPath();
  // Checked before the game, so a typo costs no session. The record is written by rename, which
  // would replace any file at that path (README.md, or a system file when run as root): it never
  // goes to an existing path, and its folder must exist.
  const recordProblem = recordPath === ''
    ? 'the record path is empty'
    : values.record === '-'
    ? // Elsewhere `-` is stdin or stdout; here it made a file named "-" that `replay -` does not read.
      'the game itself is on stdout: name a file for the record (--record - is not stdout here)'
    : entryExists(recordPath)
    ? `${recordPath} exists: kratzen play never overwrites a file; name a new one`
    : typeof values.record === 'string' && !existsSync(dirname(resolve(recordPath)))
      ? `the folder of ${recordPath} does not exist`
      : Buffer.byteLength(basename(recordPath)) > 255
        ? `the file name of ${recordPath.slice(0, 40)}... is too long`
        : unwritableFolderReason(dirname(resolve(recordPath)));
  if (recordProblem) {
    for (const agent of agents) agent?.dispose?.();
    refuse('record', recordProblem);
    return 2;
  }
  // Node reads a directory given as stdin (`< somedir`) as an input that ends at once: the
  // session stopped at its first question, "(end of input)", as if the person had quit.
  if (io.input === undefined && stdinIsDirectory()) {
    for (const agent of agents) agent?.dispose?.();
    refuse('stdin', 'the input is a directory: give the moves on a terminal, a pipe or a file');
    return 2;
  }
  out(`Kratzen: ${game.rules.profile}, ${n} players, ${game.rules.hands} hand${game.rules.hands === 1 ? '' : 's'}, seed ${JSON.stringify(seed)}. You are seat ${seat}.\n`);
  const input = io.input ?? process.stdin;
  const reader = lineReader(input);
  // Ctrl-C, a closed terminal or a kill end the session as `quit` does, so its record is saved,
  // but exit as a shell reports that signal (130 for Ctrl-C), as every verb a signal stops does;
  // the handlers go after the first signal, and a second Ctrl-C ends the process at once.
  let stopSignal: NodeJS.Signals | null = null;
  const stopHandlers = STOP_SIGNALS.map((signal) => [signal, () => {
    stopSignal = signal;
    removeStopHandlers();
    reader.interrupt();
  }] as const);
  const removeStopHandlers = () => {
    for (const [signal, handler] of stopHandlers) process.off(signal, handler);
  };
  for (const [signal, handler] of stopHandlers) process.on(signal, handler);
  let finished = false;
  // An amount past 2^53 - 1 units stops the session: its record is saved, then it is reported.
  let stoppedBy: ReturnType<typeof errorReport> = null;
  try {
    finished = await new TerminalGame(state, agents, seat, output, input === process.stdin && process.stdin.isTTY === true).play(reader);
  } catch (e) {
    stoppedBy = errorReport(e);
    if (!stoppedBy) throw e;
  } finally {
    removeStopHandlers();
    reader.close();
    for (const agent of agents) agent?.dispose?.();
    // A file that appeared at that path during the game is not replaced either; the player is
    // told why the record went elsewhere (it was saved under another name without a word).
    let taken: string | null = null;
    if (entryExists(recordPath)) {
      taken = recordPath;
      recordPath = defaultRecordPath();
    }
    try {
      writeFileAtomic(recordPath, `${JSON.stringify(stateToRecord(state), null, 2)}\n`);
      // Quoted for a shell, control characters escaped: a name holding a newline or an escape
      // sequence broke the suggested command and reached the terminal raw.
      const shown = printable(shellQuoted(recordPath));
      const elsewhere = taken === null ? '' : ` (${printable(shellQuoted(taken))} appeared during the game and is kept as it is)`;
      out(`\n${finished ? 'Session over.' : 'Session stopped.'} Record saved: ${shown}${elsewhere}\nReplay it: npx kratzen replay ${shown}\n`);
    } catch (e) {
      // Checked before the game; the disk can still fill up or the folder go away meanwhile.
      // Output that cannot be written, as every verb reports it: one line on stderr, exit 3.
      reportOutputLost('record', fsErrorReason(e));
      return 3;
    }
  }
  if (stoppedBy) return reportStop(stoppedBy);
  return stopSignal !== null && !finished ? signalExitCode(stopSignal) : 0;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runPlay(process.argv.slice(2));
}
