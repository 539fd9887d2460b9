// The training report: learning curves as SVG in one HTML page, rewritten as training goes.

import { writeFileAtomic } from './files.js';
import { escapeHtml, lineChartSvg } from './svg.js';

export interface MetricsLine {
  update: number;
  envSteps: number;
  [key: string]: number | string | undefined;
}

function curve(lines: MetricsLine[], key: string): [number, number][] {
  return lines.filter((l) => typeof l[key] === 'number').map((l) => [l.envSteps, l[key] as number]);
}

export function trainingHtml(title: string, config: unknown, lines: MetricsLine[], final?: string): string {
  const charts = [
    lineChartSvg('Duplicate evaluation: learner minus opponent, chips per hand', [
      { name: 'vs random', points: curve(lines, 'evalVsRandom') },
      { name: 'vs heuristic', points: curve(lines, 'evalVsHeuristic') },
    ], 'environment steps'),
    lineChartSvg('Learner reward per hand (scaled chips)', [{ name: 'return', points: curve(lines, 'learnerReturn') }], 'environment steps'),
    lineChartSvg('Losses', [
      { name: 'policy', points: curve(lines, 'policyLoss') },
      { name: 'value', points: curve(lines, 'valueLoss') },
    ], 'environment steps'),
    lineChartSvg('Entropy', [{ name: 'entropy', points: curve(lines, 'entropy') }], 'environment steps'),
    lineChartSvg('Approximate KL and clip fraction', [
      { name: 'KL', points: curve(lines, 'approxKl') },
      { name: 'clip fraction', points: curve(lines, 'clipFraction') },
    ], 'environment steps'),
    lineChartSvg('Throughput (environment steps per second)', [{ name: 'steps/s', points: curve(lines, 'stepsPerSec') }], 'environment steps'),
  ];
  const last = lines[lines.length - 1];
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;max-width:760px;margin:2em auto}pre{background:#f4f4f4;padding:8px;overflow:auto}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${last ? `Update ${last.update}, ${last.envSteps.toLocaleString('en-US')} environment steps.` : 'No update yet.'}</p>
${final ? `<h2>Final evaluation</h2><pre>${escapeHtml(final)}</pre>` : ''}
${charts.join('\n')}
<h2>Configuration</h2><pre>${escapeHtml(JSON.stringify(config, null, 2))}</pre>
</body></html>
`;
}

export function writeTrainingReport(path: string, title: string, config: unknown, lines: MetricsLine[], final?: string): void {
  writeFileAtomic(path, trainingHtml(title, config, lines, final));
}
