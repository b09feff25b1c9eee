// The scale section's chart writer (bench/scale-svg.ts): the SVG it writes into docs/ has one
// polyline per series with one point per measurement, placed on a log x axis (equal ratios of
// table size give equal distances), escapes names, and refuses points a log axis cannot show.
// It lives in bench/ (not run by Vitest's include), so this test imports it from here.
import { describe, expect, it } from 'vitest';
import { lineChartSvg, niceCeiling } from '../bench/scale-svg.ts';

const spec = {
  title: 'Memory per held lock',
  xLabel: 'locks held',
  yLabel: 'bytes per lock',
  series: [
    {
      name: 'Baton',
      color: '#1f77b4',
      points: [
        [10_000, 600],
        [100_000, 560],
        [1_000_000, 545],
      ],
    },
    {
      name: 'Redis <SET NX>',
      color: '#d62728',
      points: [
        [1_000_000, 153],
        [10_000, 180],
        [100_000, 160],
      ],
    },
  ],
};

/** Each series' polyline as [x, y] numbers, by its data-name. */
function polylines(svg) {
  const out = new Map();
  for (const m of svg.matchAll(/<polyline class="series" data-name="([^"]*)"[^>]* points="([^"]*)"/g)) {
    out.set(
      m[1],
      m[2].split(' ').map((p) => p.split(',').map(Number)),
    );
  }
  return out;
}

describe('the scale chart writer', () => {
  it('draws one polyline per series with one point per measurement, in x order', () => {
    const svg = lineChartSvg(spec);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    const lines = polylines(svg);
    expect([...lines.keys()]).toEqual(['Baton', 'Redis &lt;SET NX&gt;']);
    const redis = lines.get('Redis &lt;SET NX&gt;');
    expect(redis).toHaveLength(3);
    expect(redis.map(([x]) => x)).toEqual([...redis.map(([x]) => x)].sort((a, b) => a - b));
    expect(svg.match(/<circle /g)).toHaveLength(6);
  });

  it('spaces table sizes on a log axis and puts larger values higher', () => {
    const baton = polylines(lineChartSvg(spec)).get('Baton');
    const [[x1, y1], [x2, y2], [x3, y3]] = baton;
    expect(x2 - x1).toBeCloseTo(x3 - x2, 0);
    expect(y1).toBeLessThan(y2); // 600 B is above 560 B: SVG y grows downwards
    expect(y2).toBeLessThan(y3);
  });

  it('draws a goal line when asked and labels the axes', () => {
    const svg = lineChartSvg({ ...spec, goal: { y: 153, label: 'Redis' } });
    expect(svg).toContain('class="goal"');
    expect(svg).toContain('>bytes per lock</text>');
    expect(svg).toContain('>1M</text>');
  });

  it('refuses points a log axis cannot place, and an empty chart', () => {
    expect(() => lineChartSvg({ ...spec, series: [{ name: 'x', color: '#000', points: [[0, 1]] }] })).toThrow(/not a finite x > 0/);
    expect(() => lineChartSvg({ ...spec, series: [{ name: 'x', color: '#000', points: [[10, Number.NaN]] }] })).toThrow(/not a finite/);
    expect(() => lineChartSvg({ ...spec, series: [] })).toThrow(/no points/);
  });

  it('rounds the y axis up to 1, 2 or 5 times a power of ten', () => {
    expect([niceCeiling(545), niceCeiling(153), niceCeiling(1.04), niceCeiling(0)]).toEqual([1000, 200, 2, 1]);
  });
});
