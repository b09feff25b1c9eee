// A Prometheus histogram with one label, counted in typed arrays: prom-client's Histogram.observe
// builds a label object and a hash string per call, too much for the engine's event stream at
// 60k grants a second. observe() is a bucket search and two array stores; nothing allocates
// until a scrape renders the text format (every label value from the start, zeros included).

export interface TypedHistogramSpec<V extends string> {
  name: string;
  help: string;
  label: string;
  /** Every value the label takes, fixed at construction: one set of counts each. */
  values: readonly V[];
  /** Upper bounds in seconds, ascending; +Inf is added. */
  bounds: readonly number[];
}

export class TypedHistogram<V extends string> {
  /** Per label value: non-cumulative counts, one slot per bound plus one for +Inf. */
  private readonly counts: Float64Array[];
  private readonly sums: Float64Array;

  constructor(private readonly spec: TypedHistogramSpec<V>) {
    this.counts = spec.values.map(() => new Float64Array(spec.bounds.length + 1));
    this.sums = new Float64Array(spec.values.length);
  }

  /** `index`: the label value's place in `values` (the caller keeps a fixed map, no lookup by string here). */
  observe(index: number, seconds: number): void {
    const counts = this.counts[index];
    if (counts === undefined) return; // an index outside `values`: never, the callers map fixed values
    const bounds = this.spec.bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    counts[i] = (counts[i] ?? 0) + 1;
    this.sums[index] = (this.sums[index] ?? 0) + seconds;
  }

  exposition(): string {
    const { name, help, label, values, bounds } = this.spec;
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    values.forEach((value, v) => {
      const counts = this.counts[v];
      if (counts === undefined) return; // one array per value, made from `values`: never
      let cumulative = 0;
      bounds.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        lines.push(`${name}_bucket{le="${bound}",${label}="${value}"} ${cumulative}`);
      });
      cumulative += counts[bounds.length] ?? 0;
      lines.push(`${name}_bucket{le="+Inf",${label}="${value}"} ${cumulative}`);
      lines.push(`${name}_sum{${label}="${value}"} ${this.sums[v] ?? 0}`);
      lines.push(`${name}_count{${label}="${value}"} ${cumulative}`);
    });
    return `${lines.join('\n')}\n`;
  }
}
