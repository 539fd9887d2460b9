// What a `kratzen` command ended with: its results go to stdout, its error report is the last
// line of stderr (after any progress or notes), one JSON object.

/** The JSON object on the last line of `text` (a command's stderr, or stdout for a JSON result). */
export function lastJsonLine(text: string): any {
  return JSON.parse(text.trim().split('\n').at(-1)!);
}
