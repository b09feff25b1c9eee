// Redraws the scale section's markdown and charts from bench/results/scale-latest.json without
// measuring anything (after a change to the tables or the charts):
//   node --import tsx bench/scale-redraw.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { scaleCharts, scaleMarkdown } from './scale-report.ts';
import type { ScaleResult } from './sections/scale-section.ts';

const results = new URL('./results/', import.meta.url).pathname;
const saved = JSON.parse(readFileSync(`${results}scale-latest.json`, 'utf8')) as ScaleResult;
writeFileSync(`${results}scale-latest.md`, `${scaleMarkdown(saved)}\n`);
for (const [name, svg] of Object.entries(scaleCharts(saved))) writeFileSync(new URL(`../docs/${name}`, import.meta.url), svg);
process.stderr.write('scale: redrew bench/results/scale-latest.md and docs/scale-*.svg\n');
