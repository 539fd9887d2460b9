// Dependency-free SVG charts for the reports: bars with error whiskers, line charts with ticks,
// grid and optional 95% bands, and a heat map. Every chart has a viewBox and scales to the page
// width, so reports read on a phone; nothing is fetched, so they work offline.

// Markup characters become entities; direction controls (U+202E made `safe\u202Efdp.exe` read
// as `safeexe.pdf`) are shown as their escapes.
const escape = (text: string) =>
  text.replace(/[&<>"\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? `\\u${c.charCodeAt(0).toString(16)}`);
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(2));
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function svgOpen(width: number, height: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" style="max-width:${width}px;height:auto" font-family="sans-serif">`;
}

/** Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const ratio = raw / power;
  const step = (ratio < 1.5 ? 1 : ratio < 3 ? 2 : ratio < 7 ? 5 : 10) * power;
  const ticks: number[] = [];
  // Multiples of the step, not a running sum: no 2.8e-17 where zero belongs.
  for (let i = Math.ceil(lo / step - 1e-9); i <= Math.floor(hi / step + 1e-9); i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** A tick label: thousands as k and millions as M, so long step counts stay short. */
function tickLabel(x: number): string {
  const a = Math.abs(x);
  if (a >= 1e6) return `${Number((x / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((x / 1e3).toPrecision(3))}k`;
  return String(Number(x.toPrecision(4)));
}

/** Longest label a chart writes beside its plot (a 170 px margin); longer ones keep their end. */
const MAX_LABEL_CHARS = 24;

/**
 * A chart's label: names such as checkpoint paths keep their last characters (`…/step-000280`),
 * the whole name in a tooltip; tables beside the chart carry it in full.
 */
function chartLabel(label: string, attributes: string): string {
  // Cut by code points: a cut inside a surrogate pair showed U+FFFD.
  const points = Array.from(label);
  const shown = points.length > MAX_LABEL_CHARS ? `…${points.slice(-(MAX_LABEL_CHARS - 1)).join('')}` : label;
  return `<text ${attributes}><title>${escape(label)}</title>${escape(shown)}</text>`;
}

/**
 * Horizontal bars (one per label) with a ±error whisker, around a zero line, over an axis of
 * ticks labelled `xLabel`; each bar's value (`digits` decimals) is written at the right.
 */
export function barChartSvg(title: string, bars: { label: string; value: number; error?: number }[], xLabel = '', digits = 3): string {
  const width = 640;
  const rowHeight = 34;
  const left = 170;
  const right = 60;
  const axisY = 40 + rowHeight * bars.length + 4;
  const height = axisY + 44;
  const extent = Math.max(1e-9, ...bars.map((b) => Math.abs(b.value) + (Number.isFinite(b.error) ? b.error! : 0)));
  const x = (v: number) => left + ((v + extent) / (2 * extent)) * (width - left - right);
  const rows = bars.map((b, i) => {
    const y = 40 + i * rowHeight;
    const x0 = x(Math.min(0, b.value));
    const w = Math.abs(x(b.value) - x(0));
    const color = b.value >= 0 ? '#2f7d4f' : '#b3453a';
    const whisker = Number.isFinite(b.error)
      ? `<line x1="${x(b.value - b.error!)}" x2="${x(b.value + b.error!)}" y1="${y + 11}" y2="${y + 11}" stroke="#222" stroke-width="1.5"/>`
      : '';
    return (
      chartLabel(b.label, `x="${left - 8}" y="${y + 15}" text-anchor="end" font-size="13"`) +
      `<rect x="${x0}" y="${y + 2}" width="${Math.max(1, w)}" height="18" fill="${color}" opacity="0.8"/>${whisker}` +
      `<text x="${width - right + 6}" y="${y + 15}" font-size="12">${Number.isFinite(b.value) ? b.value.toFixed(digits) : String(b.value)}</text>`
    );
  });
  // The scale: without it the whiskers' ends could not be read.
  const ticks = niceTicks(-extent, extent, 6).map(
    (t) =>
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${axisY}" y2="${axisY + 5}" stroke="#888"/>` +
      `<text x="${x(t).toFixed(1)}" y="${axisY + 17}" text-anchor="middle" font-size="11">${tickLabel(t)}</text>`,
  );
  return (
    svgOpen(width, height) +
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escape(title)}</text>` +
    `<line x1="${x(0)}" x2="${x(0)}" y1="32" y2="${axisY}" stroke="#888"/>${rows.join('')}` +
    `<line x1="${left}" x2="${width - right}" y1="${axisY}" y2="${axisY}" stroke="#888"/>${ticks.join('')}` +
    (xLabel ? `<text x="${(left + width - right) / 2}" y="${axisY + 36}" text-anchor="middle" font-size="12">${escape(xLabel)}</text>` : '') +
    '</svg>'
  );
}

export interface LineSeries {
  name: string;
  points: [number, number][];
  /** Half-width of a 95% interval at each point (same order as `points`): drawn as a band. */
  errors?: number[];
  /** Draw faintly (raw values behind a smoothed line). */
  faint?: boolean;
  /** Mark each point (sparse series such as periodic evaluations). */
  markers?: boolean;
}

/** A line chart of one or more series over a shared x axis, with ticks, grid lines and bands. */
export function lineChartSvg(title: string, series: LineSeries[], xLabel = '', yLabel = ''): string {
  const width = 640;
  const height = 300;
  const pad = { left: 62, right: 20, top: 40, bottom: 46 };
  const finite = ([a, b]: [number, number]) => Number.isFinite(a) && Number.isFinite(b);
  // An error band that is not finite (no interval yet) is left out of the range: it made every coordinate NaN.
  const spread = (s: LineSeries, k: number) => (Number.isFinite(s.errors?.[k]) ? s.errors![k]! : 0);
  const all = series.flatMap((s) => s.points.flatMap((p, k) => (finite(p) ? [[p[0], p[1] - spread(s, k)], [p[0], p[1] + spread(s, k)]] : [])));
  if (all.length === 0) {
    return `${svgOpen(width, 60)}<text x="10" y="30">${escape(title)}: no data yet</text></svg>`;
  }
  let [x0, x1] = [Math.min(...all.map((p) => p[0]!)), Math.max(...all.map((p) => p[0]!))];
  let [y0, y1] = [Math.min(...all.map((p) => p[1]!)), Math.max(...all.map((p) => p[1]!))];
  // One value spans a tenth of its size each way (at least 1): ±1 labelled 8192 steps
  // "8191 8192 8192 8193 8193", and vanished beside values past 2^53 (y0 === y1 again: NaN).
  const widen = (v: number) => Math.max(1, Math.abs(v) * 0.1);
  if (x0 === x1) [x0, x1] = [x0 - widen(x0), x1 + widen(x1)];
  if (y0 === y1) [y0, y1] = [y0 - widen(y0), y1 + widen(y1)];
  const margin = (y1 - y0) * 0.05;
  [y0, y1] = [y0 - margin, y1 + margin];
  const sx = (v: number) => pad.left + ((v - x0) / (x1 - x0)) * (width - pad.left - pad.right);
  const sy = (v: number) => height - pad.bottom - ((v - y0) / (y1 - y0)) * (height - pad.top - pad.bottom);
  const grid: string[] = [];
  for (const t of niceTicks(y0, y1)) {
    grid.push(
      `<line x1="${pad.left}" x2="${width - pad.right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="${t === 0 ? '#999' : '#e6e6e6'}"/>` +
        `<text x="${pad.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" font-size="11">${tickLabel(t)}</text>`,
    );
  }
  for (const t of niceTicks(x0, x1, 6)) {
    grid.push(
      `<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${height - pad.bottom}" y2="${height - pad.bottom + 5}" stroke="#888"/>` +
        `<text x="${sx(t).toFixed(1)}" y="${height - pad.bottom + 17}" text-anchor="middle" font-size="11">${tickLabel(t)}</text>`,
    );
  }
  let legendX = pad.left + 8;
  const drawn = series.map((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const kept = s.points.map((p, k) => [p, spread(s, k)] as const).filter(([p]) => finite(p));
    const d = kept.map(([[a, b]], k) => `${k ? 'L' : 'M'}${sx(a).toFixed(1)},${sy(b).toFixed(1)}`).join('');
    let band = '';
    if (s.errors && kept.length) {
      const upper = kept.map(([[a, b], e]) => `${sx(a).toFixed(1)},${sy(b + e).toFixed(1)}`);
      const lower = kept.map(([[a, b], e]) => `${sx(a).toFixed(1)},${sy(b - e).toFixed(1)}`).reverse();
      band = `<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" opacity="0.15"/>`;
    }
    const markers = s.markers ? kept.map(([[a, b]]) => `<circle cx="${sx(a).toFixed(1)}" cy="${sy(b).toFixed(1)}" r="2.5" fill="${color}"/>`).join('') : '';
    const legend = `<text x="${legendX}" y="${pad.top - 10}" font-size="12" fill="${color}">${escape(s.name)}</text>`;
    legendX += 7 * s.name.length + 24;
    return `${band}<path d="${d}" fill="none" stroke="${color}" stroke-width="${s.faint ? 1 : 1.8}" opacity="${s.faint ? 0.35 : 1}"/>${markers}${legend}`;
  });
  const axes =
    `<line x1="${pad.left}" x2="${width - pad.right}" y1="${height - pad.bottom}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<text x="${(pad.left + width - pad.right) / 2}" y="${height - 8}" text-anchor="middle" font-size="12">${escape(xLabel)}</text>` +
    (yLabel ? `<text transform="translate(14 ${(pad.top + height - pad.bottom) / 2}) rotate(-90)" text-anchor="middle" font-size="12">${escape(yLabel)}</text>` : '');
  return (
    svgOpen(width, height) +
    `<text x="${width / 2}" y="16" text-anchor="middle" font-size="14">${escape(title)}</text>${grid.join('')}${axes}${drawn.join('')}</svg>`
  );
}

/**
 * A square heat map: cell [r][c] coloured by its value (green above zero, red below, white at
 * zero, full colour at the largest magnitude), labelled with the value and, when given, its ±error.
 */
export function heatMapSvg(title: string, labels: string[], values: (number | null)[][], errors?: (number | null)[][]): string {
  const n = labels.length;
  const cell = Math.max(56, Math.min(96, Math.floor(440 / Math.max(1, n))));
  const left = 170;
  // Room above the grid for column labels of MAX_LABEL_CHARS at -35 degrees, below the title.
  const top = 130;
  // Wide enough for the title too (about 7.6 px a character at 15 px): with two agents the grid
  // alone was narrower, and the title's ends were cut off.
  const width = Math.max(left + n * cell + 20, Math.ceil(title.length * 7.6) + 20);
  const height = top + n * cell + 20;
  const extent = Math.max(1e-9, ...values.flat().filter((v): v is number => v !== null && Number.isFinite(v)).map(Math.abs));
  const colour = (v: number) => {
    const t = Math.min(1, Math.abs(v) / extent);
    const [r, g, b] = v >= 0 ? [47, 125, 79] : [179, 69, 58];
    const mix = (c: number) => Math.round(255 + (c - 255) * t);
    return `rgb(${mix(r)},${mix(g)},${mix(b)})`;
  };
  const parts: string[] = [];
  labels.forEach((label, i) => {
    parts.push(chartLabel(label, `x="${left - 8}" y="${top + i * cell + cell / 2 + 4}" text-anchor="end" font-size="12"`));
    const cx = left + i * cell + cell / 2;
    parts.push(chartLabel(label, `transform="translate(${cx} ${top - 8}) rotate(-35)" font-size="12"`));
  });
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const v = values[r]?.[c] ?? null;
      const x = left + c * cell;
      const y = top + r * cell;
      if (v === null || !Number.isFinite(v)) {
        parts.push(`<rect x="${x}" y="${y}" width="${cell}" height="${cell}" fill="#f4f4f4" stroke="#fff"/>`);
        continue;
      }
      const e = errors?.[r]?.[c];
      parts.push(
        `<rect x="${x}" y="${y}" width="${cell}" height="${cell}" fill="${colour(v)}" stroke="#fff"><title>${escape(`${labels[r]} vs ${labels[c]}: ${fmt(v)}${e != null ? ` ± ${fmt(e)}` : ''}`)}</title></rect>` +
          `<text x="${x + cell / 2}" y="${y + cell / 2 + (e != null ? -2 : 4)}" text-anchor="middle" font-size="13">${v >= 0 ? '+' : ''}${fmt(v)}</text>` +
          (e != null ? `<text x="${x + cell / 2}" y="${y + cell / 2 + 13}" text-anchor="middle" font-size="10">±${fmt(e)}</text>` : ''),
      );
    }
  }
  return `${svgOpen(width, height)}<text x="${width / 2}" y="20" text-anchor="middle" font-size="15">${escape(title)}</text>${parts.join('')}</svg>`;
}

export { escape as escapeHtml };
