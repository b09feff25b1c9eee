/** Percentile of sorted-on-demand samples (nearest rank). NaN sorts last; Infinity counts as such. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b));
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(samples: number[]): number {
  return percentile(samples, 50);
}

export const round = (n: number, digits = 2): number => Number(n.toFixed(digits));
