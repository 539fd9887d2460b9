// Writes a tournament's result.json and an HTML report with an SVG chart, atomically.

import { basename, join } from 'node:path';
import { folderInPlaceOf, writeFilesAtomic } from './files.js';
import { barChartSvg, escapeHtml, heatMapSvg } from './svg.js';
import { dealsBetter, type TournamentResult } from './tournament.js';

// Three decimals written out, as the command line prints them (the table said -7.85 where it said -7.850).
const round = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : String(x));

export function tournamentHtml(result: TournamentResult): string {
  const { config } = result;
  const handsPerDeal = Math.round(result.hands / Math.max(1, config.deals * config.players));
  const chart = barChartSvg(
    'Mean chips per hand (95% CI)',
    result.agents.map((a) => ({ label: a.name, value: a.meanChipsPerHand, error: a.ci95 })),
    'chips per hand',
  );
  const names = result.agents.map((a) => a.name);
  const index = new Map(names.map((name, i) => [name, i]));
  const matrix = names.map(() => names.map((): number | null => null));
  const errors = names.map(() => names.map((): number | null => null));
  for (const h of result.headToHead) {
    const [a, b] = [index.get(h.a)!, index.get(h.b)!];
    [matrix[a]![b], matrix[b]![a]] = [h.meanDifference, -h.meanDifference];
    [errors[a]![b], errors[b]![a]] = [h.ci95, h.ci95];
  }
  const heatMap = heatMapSvg('Head to head: row minus column, chips per hand (± 95% CI)', names, matrix, errors);
  const agentRows = result.agents
    .map((a) => `<tr><td>${escapeHtml(a.name)}</td><td>${round(a.meanChipsPerHand)}</td><td>±${round(a.ci95)}</td><td>${round(a.rating, 0)}</td></tr>`)
    .join('');
  const h2hRows = result.headToHead
    .map(
      (h) =>
        `<tr><td>${escapeHtml(h.a)}</td><td>${escapeHtml(h.b)}</td><td>${round(h.meanDifference)}</td><td>±${round(h.ci95)}</td><td>${dealsBetter(h)} / ${h.deals}</td><td>${h.ties}</td></tr>`,
    )
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Kratzen duplicate tournament</title>
<style>body{font-family:sans-serif;max-width:760px;margin:2em auto;padding:0 12px}svg{display:block;margin:1em 0}.chart{overflow-x:auto}.chart svg{min-width:520px}table{border-collapse:collapse;margin:1em 0;display:block;overflow-x:auto;max-width:100%}@media (max-width:600px){body{font-size:14px}td,th{padding:3px 5px}}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>
<h1>Duplicate tournament</h1>
<p>Rules <code>${escapeHtml(JSON.stringify(config.rules))}</code>, ${config.players} seats, ${config.deals} deals (a deal is a session of ${handsPerDeal} hand${handsPerDeal === 1 ? '' : 's'}), each played in all ${config.players} seat rotations (${result.hands} hands), seed <code>${escapeHtml(String(config.seed))}</code>.</p>
<p>Duplicate play: every agent holds every hand of a deal in turn, so the luck of the cards cancels out of the differences. Chips per hand are an agent's winnings less its losses, averaged over the hands it played; they can be negative for every agent, as chips left in the pot belong to nobody. ± is a 95% confidence interval: an agent whose interval holds 0 cannot be told from breaking even, and two agents whose head-to-head interval holds 0 tie.</p>
<div class="chart">${chart}</div>
<h2>Agents</h2><table><tr><th>agent</th><th>chips / hand</th><th>95% CI</th><th>rating</th></tr>${agentRows}</table>
<h2>Head to head</h2><p>Mean difference of chips per hand (a − b) over deals, with its 95% CI, the deals a did better in, and those a and b did equally well in.</p>
<div class="chart">${heatMap}</div>
<table><tr><th>a</th><th>b</th><th>a − b</th><th>95% CI</th><th>a better</th><th>tied</th></tr>${h2hRows}</table>
<p>Ratings: ${escapeHtml(result.ratingMethod)}.</p>
</body></html>
`;
}

/** Writes `result.json` and `report.html` into `dir`; returns the report's path. */
export function writeTournamentReport(result: TournamentResult, dir: string): string {
  const path = join(dir, TOURNAMENT_REPORT_FILE);
  // Both or neither: a full disk leaves an earlier report in `dir` whole.
  writeFilesAtomic([
    [join(dir, RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`],
    [path, tournamentHtml(result)],
  ]);
  return path;
}

const RESULT_FILE = 'result.json';
/** The file name of a tournament's HTML report in its folder. */
export const TOURNAMENT_REPORT_FILE = 'report.html';

/**
 * Why writeTournamentReport could not write into `dir` (a folder holds a report file's name), or
 * null: checked before an evaluation, which found out only after all its deals.
 */
export function tournamentReportProblem(dir: string): string | null {
  const folder = folderInPlaceOf([RESULT_FILE, TOURNAMENT_REPORT_FILE].map((name) => join(dir, name)));
  return folder === null ? null : `${folder} is a folder, where the report's ${basename(folder)} goes`;
}
