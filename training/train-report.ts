// The training report: learning curves as SVG in one HTML page, rewritten as training goes.

import { writeFileAtomic } from './files.js';
import { escapeHtml, lineChartSvg, type LineSeries } from './svg.js';
import { TOURNAMENT_REPORT_FILE } from './eval-report.js';

/** The run's final evaluations: opponent, and the folder (in the run's) of its report. */
export const FINAL_EVAL_FOLDERS = [['random', 'eval-vs-random'], ['heuristic', 'eval-vs-heuristic']] as const;

export interface MetricsLine {
  update: number;
  envSteps: number;
  [key: string]: number | string | undefined;
}

type Axis = 'envSteps' | 'minutes';

function xOf(line: MetricsLine, axis: Axis): number {
  return axis === 'envSteps' ? line.envSteps : Number(line.elapsed ?? NaN) / 60;
}

function curve(lines: MetricsLine[], key: string, axis: Axis = 'envSteps'): [number, number][] {
  return lines.filter((l) => typeof l[key] === 'number').map((l) => [xOf(l, axis), l[key] as number]);
}

/** The periodic evaluations against one opponent, with their 95% intervals as a band. */
function evaluations(lines: MetricsLine[], opponent: 'Random' | 'Heuristic', axis: Axis): LineSeries {
  const evaluated = lines.filter((l) => typeof l[`evalVs${opponent}`] === 'number');
  return {
    name: `vs ${opponent.toLowerCase()} (95% interval)`,
    points: evaluated.map((l) => [xOf(l, axis), l[`evalVs${opponent}`] as number]),
    errors: evaluated.map((l) => Number(l[`evalVs${opponent}Ci95`] ?? 0)),
    markers: true,
  };
}

/** Centred moving average over about a twentieth of the run (at least 1 point each side). */
export function smooth(points: [number, number][]): [number, number][] {
  const half = Math.max(1, Math.round(points.length / 40));
  return points.map(([x], i) => {
    const window = points.slice(Math.max(0, i - half), i + half + 1);
    return [x, window.reduce((sum, p) => sum + p[1], 0) / window.length];
  });
}

interface ReportedConfig {
  evalDeals?: number;
  evalEvery?: number;
  updates?: number;
  imitationUpdates?: number;
  rewardNormalization?: string;
  rewardScale?: number;
}

/** Where the run stands: "Update 12 of 16 (10 imitating the heuristic, then 6 of PPO), ...". */
function progressLine(config: ReportedConfig, last: MetricsLine | undefined, finished: boolean): string {
  if (!last) return 'No update yet.';
  const imitation = config.imitationUpdates ?? 0;
  const total = config.updates !== undefined ? config.updates + imitation : undefined;
  const of = total === undefined ? '' : ` of ${total}${imitation > 0 ? ` (${imitation} imitating the heuristic, then ${config.updates} of PPO)` : ''}`;
  return `Update ${last.update}${of}, ${last.envSteps.toLocaleString('en-US')} environment steps${finished ? '; finished' : ''}.`;
}

export function trainingHtml(title: string, config: unknown, lines: MetricsLine[], final?: string): string {
  const reported = (config as ReportedConfig | null) ?? {};
  const { evalDeals: deals, evalEvery } = reported;
  // The reward's unit follows the config: chips over the pot by default, scaled chips otherwise.
  const rewardUnit = reported.rewardNormalization === 'chips' ? `chips × ${reported.rewardScale ?? 'rewardScale'}` : 'chips / pot';
  // With evalEvery 0 the charts said "no data yet" of evaluations that never come.
  const when = evalEvery === 0 ? ' (none: evalEvery is 0)' : deals ? ` (${deals} deals each)` : '';
  const evalTitle = `Duplicate evaluation: learner minus opponent, chips per hand${when}`;
  const returns = curve(lines, 'learnerReturn');
  const charts = [
    lineChartSvg(evalTitle, [evaluations(lines, 'Random', 'envSteps'), evaluations(lines, 'Heuristic', 'envSteps')], 'environment steps', 'chips per hand'),
    lineChartSvg(`${evalTitle}, over time`, [evaluations(lines, 'Random', 'minutes'), evaluations(lines, 'Heuristic', 'minutes')], 'wall-clock minutes', 'chips per hand'),
    lineChartSvg(`Learner reward per hand (${rewardUnit})`, [
      { name: 'per update', points: returns, faint: true },
      { name: 'smoothed', points: smooth(returns) },
    ], 'environment steps', `reward (${rewardUnit})`),
    // Each on its own scale: the policy loss (~0.01) lay flat on zero beside the value loss (~0.6),
    // and the KL (~0.001) beside the clip fraction (0 to 1).
    lineChartSvg('Policy loss', [{ name: 'policy (clipped surrogate)', points: curve(lines, 'policyLoss') }], 'environment steps', 'loss'),
    lineChartSvg('Value loss', [{ name: 'value (squared error)', points: curve(lines, 'valueLoss') }], 'environment steps', 'loss'),
    lineChartSvg('Entropy', [{ name: 'entropy', points: curve(lines, 'entropy') }], 'environment steps', 'nats'),
    lineChartSvg('Approximate KL between the policy before and after an update', [{ name: 'KL', points: curve(lines, 'approxKl') }], 'environment steps', 'nats'),
    lineChartSvg('Clip fraction', [{ name: 'samples whose ratio was clipped', points: curve(lines, 'clipFraction') }], 'environment steps', 'fraction'),
    lineChartSvg('Throughput', [{ name: 'environment steps per second', points: curve(lines, 'stepsPerSec', 'minutes') }], 'wall-clock minutes', 'steps/s'),
  ];
  const last = lines[lines.length - 1];
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;max-width:760px;margin:2em auto;padding:0 12px}svg{display:block;margin:1em 0}.chart{overflow-x:auto}.chart svg{min-width:520px}pre{background:#f4f4f4;padding:8px;overflow:auto}pre.summary{white-space:pre-wrap}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(progressLine(reported, last, final !== undefined))}</p>
<p>The evaluations are duplicate matches: each deal is played once per seat rotation, so the luck of the cards cancels out. Their figures are the learner's chips per hand minus the opponent's, with a 95% confidence interval (± and the shaded bands): an interval that holds 0 is a tie. The imitation updates (cloning the heuristic) come before PPO; the PPO figures (policy loss, entropy, KL, clip fraction) start after them.</p>
${final ? `<h2>Final evaluation</h2><pre class="summary">${escapeHtml(final)}</pre><p>Their reports: ${FINAL_EVAL_FOLDERS.map(([opponent, folder]) => `<a href="${folder}/${TOURNAMENT_REPORT_FILE}">vs ${opponent}</a>`).join(' · ')}.</p>` : ''}
${charts.map((chart) => `<div class="chart">${chart}</div>`).join('\n')}
<h2>Configuration</h2><pre>${escapeHtml(JSON.stringify(config, null, 2))}</pre>
</body></html>
`;
}

export function writeTrainingReport(path: string, title: string, config: unknown, lines: MetricsLine[], final?: string): void {
  writeFileAtomic(path, trainingHtml(title, config, lines, final));
}
