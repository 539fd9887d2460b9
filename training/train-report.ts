// The training report: learning curves as SVG in one HTML page, rewritten as training goes.

import { writeFileAtomic } from './files.js';
import { escapeHtml, lineChartSvg, type LineSeries } from './svg.js';

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

export function trainingHtml(title: string, config: unknown, lines: MetricsLine[], final?: string): string {
  const { evalDeals: deals, evalEvery } = (config as { evalDeals?: number; evalEvery?: number } | null) ?? {};
  // With evalEvery 0 the charts said "no data yet" of evaluations that never come.
  const when = evalEvery === 0 ? ' (none: evalEvery is 0)' : deals ? ` (${deals} deals each)` : '';
  const evalTitle = `Duplicate evaluation: learner minus opponent, chips per hand${when}`;
  const returns = curve(lines, 'learnerReturn');
  const charts = [
    lineChartSvg(evalTitle, [evaluations(lines, 'Random', 'envSteps'), evaluations(lines, 'Heuristic', 'envSteps')], 'environment steps', 'chips per hand'),
    lineChartSvg(`${evalTitle}, over time`, [evaluations(lines, 'Random', 'minutes'), evaluations(lines, 'Heuristic', 'minutes')], 'wall-clock minutes', 'chips per hand'),
    lineChartSvg('Learner reward per hand (scaled chips)', [
      { name: 'per update', points: returns, faint: true },
      { name: 'smoothed', points: smooth(returns) },
    ], 'environment steps', 'reward'),
    lineChartSvg('Losses', [
      { name: 'policy', points: curve(lines, 'policyLoss') },
      { name: 'value', points: curve(lines, 'valueLoss') },
    ], 'environment steps'),
    lineChartSvg('Entropy', [{ name: 'entropy', points: curve(lines, 'entropy') }], 'environment steps', 'nats'),
    lineChartSvg('Approximate KL and clip fraction', [
      { name: 'KL', points: curve(lines, 'approxKl') },
      { name: 'clip fraction', points: curve(lines, 'clipFraction') },
    ], 'environment steps'),
    lineChartSvg('Throughput', [{ name: 'environment steps per second', points: curve(lines, 'stepsPerSec', 'minutes') }], 'wall-clock minutes', 'steps/s'),
  ];
  const last = lines[lines.length - 1];
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;max-width:760px;margin:2em auto;padding:0 12px}svg{display:block;margin:1em 0}pre{background:#f4f4f4;padding:8px;overflow:auto}pre.summary{white-space:pre-wrap}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${last ? `Update ${last.update}, ${last.envSteps.toLocaleString('en-US')} environment steps.` : 'No update yet.'}</p>
${final ? `<h2>Final evaluation</h2><pre class="summary">${escapeHtml(final)}</pre>` : ''}
${charts.join('\n')}
<h2>Configuration</h2><pre>${escapeHtml(JSON.stringify(config, null, 2))}</pre>
</body></html>
`;
}

export function writeTrainingReport(path: string, title: string, config: unknown, lines: MetricsLine[], final?: string): void {
  writeFileAtomic(path, trainingHtml(title, config, lines, final));
}
