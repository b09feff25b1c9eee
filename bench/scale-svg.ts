// A small line chart as SVG text, for the scale section's curves in docs/ (bytes per lock and CPU
// per pair against table size). Pure: the same spec gives the same text, so a test can read the
// shape back. x is log-scaled (table sizes span 10k to 5M), y linear from 0; one polyline and
// its dots per series, a legend, gridlines at powers of ten and at five y steps.

export interface Series {
  name: string;
  color: string;
  /** [x, y] pairs; x > 0 (log axis), y >= 0, both finite. */
  points: Array<[number, number]>;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** A dashed horizontal line (a goal), labelled. */
  goal?: { y: number; label: string };
}

const W = 640;
const H = 360;
const M = { left: 64, right: 16, top: 40, bottom: 48 };

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fixed = (n: number) => Number(n.toFixed(1));

/** The smallest of 1, 2, 5 x 10^k at or above `max` (so y ticks are round numbers). */
export function niceCeiling(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return (([1, 2, 5, 10].find((m) => m * p >= max) ?? 10) as number) * p;
}

const short = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);

export function lineChartSvg(spec: ChartSpec): string {
  const all = spec.series.flatMap((s) => s.points);
  if (all.length === 0) throw new Error('lineChartSvg: no points to draw');
  for (const [x, y] of all) {
    if (!(Number.isFinite(x) && Number.isFinite(y) && x > 0 && y >= 0)) throw new Error(`lineChartSvg: point (${x}, ${y}) is not a finite x > 0, y >= 0`);
  }
  const lx = all.map(([x]) => Math.log10(x));
  const [x0, x1] = [Math.floor(Math.min(...lx)), Math.ceil(Math.max(...lx))];
  const xSpan = Math.max(1, x1 - x0);
  const yMax = niceCeiling(Math.max(...all.map(([, y]) => y), spec.goal?.y ?? 0));
  const px = (x: number) => fixed(M.left + ((Math.log10(x) - x0) / xSpan) * (W - M.left - M.right));
  const py = (y: number) => fixed(H - M.bottom - (y / yMax) * (H - M.top - M.bottom));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${xml(spec.title)}</text>`,
  ];
  for (let k = x0; k <= x0 + xSpan; k++) {
    const x = px(10 ** k);
    out.push(`<line x1="${x}" y1="${M.top}" x2="${x}" y2="${H - M.bottom}" stroke="#dddddd"/>`);
    out.push(`<text x="${x}" y="${H - M.bottom + 16}" text-anchor="middle">${short(10 ** k)}</text>`);
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yMax / 5) * i;
    const y = py(v);
    out.push(`<line x1="${M.left}" y1="${y}" x2="${W - M.right}" y2="${y}" stroke="#dddddd"/>`);
    out.push(`<text x="${M.left - 6}" y="${y + 4}" text-anchor="end">${Number(v.toPrecision(3))}</text>`);
  }
  out.push(`<text x="${(M.left + W - M.right) / 2}" y="${H - 10}" text-anchor="middle">${xml(spec.xLabel)}</text>`);
  out.push(
    `<text x="16" y="${(M.top + H - M.bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(M.top + H - M.bottom) / 2})">${xml(spec.yLabel)}</text>`,
  );
  if (spec.goal !== undefined) {
    const y = py(spec.goal.y);
    out.push(`<line class="goal" x1="${M.left}" y1="${y}" x2="${W - M.right}" y2="${y}" stroke="#888888" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${W - M.right - 4}" y="${y - 4}" text-anchor="end" fill="#666666">${xml(spec.goal.label)}</text>`);
  }
  for (const [i, s] of spec.series.entries()) {
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    out.push(
      `<polyline class="series" data-name="${xml(s.name)}" fill="none" stroke="${xml(s.color)}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x)},${py(y)}`).join(' ')}"/>`,
    );
    for (const [x, y] of pts) out.push(`<circle cx="${px(x)}" cy="${py(y)}" r="3.5" fill="${xml(s.color)}"/>`);
    const ly = M.top + 8 + i * 18;
    out.push(`<rect x="${M.left + 12}" y="${ly - 9}" width="12" height="12" fill="${xml(s.color)}"/>`);
    out.push(`<text class="legend" x="${M.left + 30}" y="${ly + 1}">${xml(s.name)}</text>`);
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
