// The HTML reports (training/train-report.ts, training/eval-report.ts) and their SVG charts:
// readable axes, the evaluations' intervals, a head-to-head heat map, pages that need no network.
import { describe, expect, it } from 'vitest';
import { barChartSvg, heatMapSvg, lineChartSvg, niceTicks } from './svg.js';
import { smooth, trainingHtml, type MetricsLine } from './train-report.js';
import { tournamentHtml } from './eval-report.js';
import { summarize } from './tournament.js';

const offline = (html: string) => expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

describe('charts', () => {
  it('ticks are round numbers spanning the range', () => {
    expect(niceTicks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-3.2, 7.9)).toEqual([-2, 0, 2, 4, 6]);
    expect(niceTicks(0, 1_000_000, 4)).toEqual([0, 200_000, 400_000, 600_000, 800_000, 1_000_000]);
  });
  it('a line chart labels its ticks and draws a band for the intervals', () => {
    const svg = lineChartSvg('t', [{ name: 'a', points: [[0, 1], [50_000, 2]], errors: [0.5, 0.5], markers: true }], 'steps', 'chips');
    expect(svg).toContain('>50k<');
    expect(svg).toContain('<polygon');
    expect(svg.match(/<circle/g)).toHaveLength(2);
    expect(svg).toContain('viewBox="0 0 640 300"');
  });
  it('a chart of one value labels distinct round ticks around it, however large, and leaves out bands that are not finite [probe]', () => {
    // ±1 around 8192 steps read "8191 8192 8192 8193 8193"; 1e17 and an infinite band gave NaN.
    const tickTexts = (svg: string) => [...svg.matchAll(/font-size="11">([^<]+)</g)].map((m) => m[1]!);
    for (const [x, y] of [[8192, 5000], [1e17, 3e16], [0, 7], [-3, -0.5]] as const) {
      const svg = lineChartSvg('t', [{ name: 'a', points: [[x, y]], errors: [Infinity], markers: true }], 'steps', 'v');
      expect(svg, `${x}`).not.toContain('NaN');
      const labels = tickTexts(svg);
      expect(new Set(labels).size, `${x}: ${labels.join(' ')}`).toBe(labels.length);
    }
  });

  it('the heat map colours n x n cells, green for a positive row, red for a negative one', () => {
    const svg = heatMapSvg('h', ['a', 'b'], [[null, 1.5], [-1.5, null]], [[null, 0.2], [0.2, null]]);
    expect(svg.match(/<rect/g)).toHaveLength(4);
    expect(svg).toContain('>+1.50<');
    expect(svg).toContain('>-1.50<');
    expect(svg).toContain('fill="rgb(47,125,79)"');
    expect(svg).toContain('fill="rgb(179,69,58)"');
    // A long title widens the picture rather than running past its edges.
    const title = 'Head to head: row minus column, chips per hand (± 95% CI)';
    const width = Number(/viewBox="0 0 (\d+)/.exec(heatMapSvg(title, ['a', 'b'], [[null, 1], [-1, null]]))![1]);
    expect(width).toBeGreaterThan(title.length * 7);
    // A checkpoint path keeps its end on the chart, and the whole of it in the tooltip.
    const path = '/tmp/fresh/runs/train-20261203-065638/checkpoints/step-000000000280';
    for (const svg of [heatMapSvg('h', [path, 'b'], [[null, 1], [-1, null]]), barChartSvg('b', [{ label: path, value: 1 }])]) {
      expect(svg).toContain(`<title>${path}</title>…${path.slice(-23)}</text>`);
      expect(svg).not.toContain(`>${path}</text>`);
    }
  });
  it('smoothing averages neighbours and keeps the x values', () => {
    expect(smooth([[0, 0], [1, 3], [2, 0]])).toEqual([[0, 1.5], [1, 1], [2, 1.5]]);
  });
});

describe('reports', () => {
  it('the training report plots evaluations with intervals against steps and wall-clock minutes', () => {
    const lines: MetricsLine[] = [1, 2, 3, 4].map((u) => ({
      update: u,
      envSteps: u * 4096,
      learnerReturn: u / 10,
      elapsed: u * 30,
      ...(u % 2 === 0 ? { evalVsRandom: u, evalVsRandomCi95: 0.8, evalVsHeuristic: u / 4, evalVsHeuristicCi95: 0.9 } : {}),
    }));
    const html = trainingHtml('run', { evalDeals: 100 }, lines);
    expect(html).toContain('name="viewport"');
    expect(html).toContain('wall-clock minutes');
    expect(html).toContain('(100 deals each)');
    expect(html.match(/<polygon/g)!.length).toBeGreaterThanOrEqual(4);
    offline(html);
    // The final evaluation's lines wrap on a phone instead of running off the screen.
    const withFinal = trainingHtml('run', { evalDeals: 100 }, lines, 'learner beats heuristic: +0.850 ± 0.280 chips per hand (better in 890.5 of 1600 deals)');
    expect(withFinal).toMatch(/<pre class="summary">learner beats heuristic/);
    expect(withFinal).toContain('pre.summary{white-space:pre-wrap}');
    // A run without periodic evaluations said "no data yet" of ones that never come [probe].
    const never = trainingHtml('run', { evalDeals: 2, evalEvery: 0 }, lines.map(({ update, envSteps, learnerReturn, elapsed }) => ({ update, envSteps, learnerReturn, elapsed })));
    expect(never).toContain('chips per hand (none: evalEvery is 0): no data yet');
    // Where the run stands, imitation included, and the reward's unit from the config; each loss
    // on its own scale (they shared one, the policy's flat on zero) [report review, session 48].
    const reported = trainingHtml('run', { updates: 6, imitationUpdates: 10, rewardNormalization: 'pot' }, lines, 'done');
    expect(reported).toContain('Update 4 of 16 (10 imitating the heuristic, then 6 of PPO), 16,384 environment steps; finished.');
    expect(reported).toContain('Learner reward per hand (chips / pot)');
    expect(trainingHtml('run', { rewardNormalization: 'chips', rewardScale: 0.1 }, lines)).toContain('Learner reward per hand (chips × 0.1)');
    for (const title of ['Policy loss', 'Value loss', 'Clip fraction']) expect(reported).toContain(`>${title}: no data yet<`);
    expect(reported).toContain('an interval that holds 0 is a tie');
    expect(reported).toContain('<a href="eval-vs-random/report.html">vs random</a> · <a href="eval-vs-heuristic/report.html">vs heuristic</a>');
  });
  it('the tournament report shows the head-to-head matrix as a heat map', () => {
    const config = { agents: ['x', 'y', 'z'], rules: {}, deals: 2, seed: 0 };
    const result = summarize(config, 3, [
      { deal: 0, chipsPerHand: [1, 0, -1], hands: 12 },
      { deal: 1, chipsPerHand: [2, -1, -1], hands: 12 },
    ]);
    const html = tournamentHtml(result);
    expect(html).toContain('Head to head: row minus column');
    expect(html).toContain('>+2.00<'); // x - y: (1 + 3) / 2 over the two deals
    offline(html);
    // What a deal is (13 deals x 4 rotations read as 208 hands unexplained), the terms, a scale
    // under the bars, and three decimals as the command line prints them [report review, session 48].
    expect(html).toContain('2 deals (a deal is a session of 4 hands), each played in all 3 seat rotations (24 hands)');
    expect(html).toContain('± is a 95% confidence interval');
    expect(html).toContain('>chips per hand</text>');
    expect(html).toMatch(/<td>1\.500<\/td>/);
  });
});

describe('reports of odd inputs [probe round 9]', () => {
  it('number an agent given twice, so the head-to-head map keeps every pair (it keyed them by name and lost three cells)', () => {
    const deals = [0, 1, 2].map((deal) => ({ deal, chipsPerHand: [1 + deal, -2, 1 - deal], hands: 16 }));
    const result = summarize({ agents: ['random', 'random', 'heuristic'], rules: { profile: 'didactic4', players: 4 }, deals: 3, seed: 1 }, 4, deals);
    expect(result.agents.map((a) => a.name)).toEqual(['random #1', 'random #2', 'heuristic']);
    expect(result.config.agents).toEqual(['random', 'random', 'heuristic']);
    expect(result.headToHead.map((h) => `${h.a}|${h.b}`)).toEqual(['random #1|random #2', 'random #1|heuristic', 'random #2|heuristic']);
    const html = tournamentHtml(result);
    // Every off-diagonal cell of the heat map holds a value.
    expect((html.match(/<title>[^<]*±/g) ?? []).length).toBe(6);
  });

  it('skip a number that another agent already is: a checkpoint folder named "heuristic #1" beside two heuristics made two agents "heuristic #1" [eval probe, session 37]', () => {
    const deals = [0, 1].map((deal) => ({ deal, chipsPerHand: [deal, -1, 1 - deal], hands: 16 }));
    const result = summarize({ agents: ['heuristic', 'heuristic', 'heuristic #1'], rules: { profile: 'didactic4', players: 4 }, deals: 2, seed: 1 }, 4, deals);
    const names = result.agents.map((a) => a.name);
    expect(names).toEqual(['heuristic #2', 'heuristic #3', 'heuristic #1']);
    expect(result.headToHead.every((h) => h.a !== h.b)).toBe(true);
    expect((tournamentHtml(result).match(/<title>[^<]*±/g) ?? []).length).toBe(6);
  });

  it('show direction controls as escapes and cut long labels between characters (U+202E reversed a path; a cut split an emoji)', () => {
    const bidi = barChartSvg('t', [{ label: 'safe\u202efdp.exe', value: 1, error: 0 }]);
    expect(bidi).not.toContain('\u202e');
    expect(bidi).toContain('safe\\u202efdp.exe');
    const emoji = barChartSvg('t', [{ label: `a${'😀'.repeat(30)}`, value: 1, error: 0 }]);
    expect(emoji).not.toContain('\ufffd');
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
