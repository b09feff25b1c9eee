// Runs several systems in turn within each repeat (A, B, C, A, B, C, ...), so that whatever
// else the machine does drifts over all of them alike, and summarizes: the median of every
// numeric field per system, and ratios against a reference system taken repeat by repeat (the
// median of the per-repeat ratios, not the ratio of medians).
import { median, round } from './stats.ts';

export type Figures = Record<string, number>;

export async function alternate<S extends { name: string }, F extends Record<keyof F, number>>(
  repeats: number,
  systems: S[],
  measure: (system: S, repeat: number) => Promise<F>,
  label: string,
): Promise<Map<string, F[]>> {
  const runs = new Map<string, F[]>(systems.map((s) => [s.name, []]));
  for (let r = 0; r < repeats; r++) {
    for (const s of systems) {
      process.stderr.write(`bench: ${label}, repeat ${r + 1}/${repeats}: ${s.name}\n`);
      const f = await measure(s, r);
      process.stderr.write(`bench:   ${JSON.stringify(f)}\n`);
      runs.get(s.name)?.push(f);
    }
  }
  return runs;
}

/** Per field, the median over runs (Infinity and NaN sort last and count as such). */
export function medians<F extends Record<keyof F, number>>(runs: F[]): F {
  const out: Figures = {};
  for (const key of Object.keys(runs[0] ?? {}) as (keyof F & string)[]) out[key] = median(runs.map((r) => r[key]));
  return out as unknown as F;
}

/** The median over repeats of `of(run) / of(reference run)`, repeat by repeat. */
export function pairedRatio<F extends Record<keyof F, number>>(runs: F[], reference: F[], field: keyof F & string): number {
  const ratios = runs.map((r, i) => r[field] / (reference[i]?.[field] ?? Number.NaN));
  return round(median(ratios));
}
