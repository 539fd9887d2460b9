// The signals that stop a long-running verb (Ctrl-C, a kill, a closed terminal), and the exit
// code of a run they stopped: a stopped run that exited 0 let `train && eval` go on as if it had
// finished.

import { constants } from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** 128 + the signal's number, as a shell reports a process that signal ended (130 for Ctrl-C). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}
