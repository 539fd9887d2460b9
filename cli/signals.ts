// The signals that stop a long-running verb (Ctrl-C, a kill, a closed terminal), and the exit
// code of a run they stopped: a stopped run that exited 0 let `train && eval` go on as if it had
// finished.

import { constants } from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** 128 + the signal's number, as a shell reports a process that signal ended (130 for Ctrl-C). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}

/**
 * Runs `work`, which a stop signal asks to stop through `signal` (aborted with the signal's
 * name; `notice` goes to stderr); a second signal quits at once. A run that ends after a stop,
 * however it ends, exits the process with that signal's code.
 */
export async function untilStopped<T>(notice: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(signalExitCode(signal));
    process.stderr.write(`\n${notice}\n`);
    controller.abort(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    return await work(controller.signal);
  } catch (e) {
    if (controller.signal.aborted) process.exit(signalExitCode(controller.signal.reason as NodeJS.Signals));
    throw e;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}
