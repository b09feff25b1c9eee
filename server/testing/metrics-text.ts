// Reading one series out of a /metrics answer (the Prometheus text format), for the tests that
// scrape a daemon or render the registry.

/** The value of the series written exactly `series` (name and labels, as rendered), or undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
