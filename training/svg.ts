// Dependency-free SVG charts for reports: bars with error whiskers, and line charts.

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(2));

/** Horizontal bars (one per label) with a ±error whisker, around a zero line. */
export function barChartSvg(title: string, bars: { label: string; value: number; error?: number }[]): string {
  const width = 640;
  const rowHeight = 34;
  const left = 170;
  const right = 40;
  const height = 50 + rowHeight * bars.length;
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
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end" font-size="13">${escape(b.label)}</text>` +
      `<rect x="${x0}" y="${y + 2}" width="${Math.max(1, w)}" height="18" fill="${color}" opacity="0.8"/>${whisker}` +
      `<text x="${width - right + 4}" y="${y + 15}" font-size="11">${fmt(b.value)}</text>`
    );
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">` +
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escape(title)}</text>` +
    `<line x1="${x(0)}" x2="${x(0)}" y1="32" y2="${height - 8}" stroke="#888"/>${rows.join('')}</svg>`
  );
}

/** A line chart of one or more series over a shared x axis. */
export function lineChartSvg(title: string, series: { name: string; points: [number, number][] }[], xLabel = ''): string {
  const width = 640;
  const height = 300;
  const pad = { left: 60, right: 20, top: 34, bottom: 40 };
  const all = series.flatMap((s) => s.points).filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b));
  if (all.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="60" font-family="sans-serif"><text x="10" y="30">${escape(title)}: no data yet</text></svg>`;
  }
  const [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const sx = (v: number) => pad.left + ((v - x0) / Math.max(1e-9, x1 - x0)) * (width - pad.left - pad.right);
  const sy = (v: number) => height - pad.bottom - ((v - y0) / (y1 - y0)) * (height - pad.top - pad.bottom);
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
  const lines = series.map((s, i) => {
    const d = s.points
      .filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b))
      .map(([a, b], k) => `${k ? 'L' : 'M'}${sx(a).toFixed(1)},${sy(b).toFixed(1)}`)
      .join('');
    return (
      `<path d="${d}" fill="none" stroke="${colors[i % colors.length]}" stroke-width="1.8"/>` +
      `<text x="${pad.left + 8 + i * 130}" y="${pad.top - 8}" font-size="12" fill="${colors[i % colors.length]}">${escape(s.name)}</text>`
    );
  });
  const axes =
    `<line x1="${pad.left}" x2="${width - pad.right}" y1="${height - pad.bottom}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<text x="${pad.left - 6}" y="${sy(y1) + 4}" text-anchor="end" font-size="11">${fmt(y1)}</text>` +
    `<text x="${pad.left - 6}" y="${sy(y0) + 4}" text-anchor="end" font-size="11">${fmt(y0)}</text>` +
    `<text x="${pad.left}" y="${height - pad.bottom + 16}" font-size="11">${fmt(x0)}</text>` +
    `<text x="${width - pad.right}" y="${height - pad.bottom + 16}" text-anchor="end" font-size="11">${fmt(x1)}</text>` +
    `<text x="${width / 2}" y="${height - 8}" text-anchor="middle" font-size="12">${escape(xLabel)}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">` +
    `<text x="${width / 2}" y="16" text-anchor="middle" font-size="14">${escape(title)}</text>${axes}${lines.join('')}</svg>`
  );
}

export { escape as escapeHtml };
