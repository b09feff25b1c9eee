// The dashboard's queries as Grafana would send them to Prometheus: variables resolved from
// their label_values() queries in order, then substituted into each target's expr the way
// Grafana's Prometheus datasource does (a multi-value or "All" variable becomes a regex
// alternation of escaped values, or its allValue), and evaluated through an instant query.
import { describePanel } from './dashboard-check.ts';
import { type Dashboard, isDataPanel, isQueryVariable, type QueryVariable, variableQuery } from './dashboard-shape.ts';

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

/** An instant query against Prometheus's API; throws with Prometheus's error on a bad expression. */
export type InstantQuery = (expr: string) => Promise<Sample[]>;

/** What a variable is set to, as a user would pick it: everything ("All"), or some of its values. */
export type Selection = 'all' | 'first' | string[];

export interface PanelTarget {
  panel: string;
  refId: string;
  expr: string;
  legendFormat: string;
}

export function panelTargets(dashboard: Dashboard): PanelTarget[] {
  return dashboard.panels
    .filter(isDataPanel)
    .flatMap((panel) => panel.targets.map((t) => ({ panel: describePanel(panel), refId: t.refId, expr: t.expr, legendFormat: t.legendFormat ?? '' })));
}

/** Grafana's escaping of a value inside a Prometheus regex matcher (prometheusSpecialRegexEscape). */
function regexEscape(value: string): string {
  return value.replace(/\\/g, '\\\\\\\\').replace(/[$^*{}[\]'+?.()|]/g, '\\\\$&');
}

/** The text Grafana puts in place of a variable set to `values` (all of `options` when `all`). */
function formatValue(variable: QueryVariable, values: string[], all: boolean): string {
  if (all && variable.allValue !== undefined) return variable.allValue;
  if (!variable.multi && !variable.includeAll) return (values[0] ?? '').replace(/\\/g, '\\\\').replace(/'/g, "\\\\'");
  const escaped = values.map(regexEscape);
  return escaped.length === 1 ? (escaped[0] as string) : `(${escaped.join('|')})`;
}

/** Replaces `$name`, `${name}` and `[[name]]` of the given variables; others stay as written. */
export function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)/g, (whole, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c) as string;
    return Object.hasOwn(values, name) ? (values[name] as string) : whole;
  });
}

/** The values of `label` on the series of `selector`, sorted: what label_values(selector, label) lists. */
async function labelValues(query: InstantQuery, definition: string): Promise<string[]> {
  const m = /^label_values\((.+),\s*(\w+)\s*\)$/.exec(definition);
  if (m === null) throw new Error(`not label_values(<selector>, <label>): ${definition}`);
  const [, selector, label] = m as unknown as [string, string, string];
  const series = await query(selector);
  return [...new Set(series.map((s) => s.metric[label]).filter((v): v is string => v !== undefined))].sort();
}

/**
 * Resolves the query variables in order (each may use those above it), setting each as
 * `selections` says (the first value when not said), plus `$__rate_interval`. Throws, naming the
 * variable, when one lists no value: the dashboard would show nothing.
 */
export async function resolveVariables(
  query: InstantQuery,
  dashboard: Dashboard,
  selections: Record<string, Selection>,
  rateInterval: string,
): Promise<Record<string, string>> {
  const values: Record<string, string> = { __rate_interval: rateInterval };
  for (const variable of dashboard.templating.list.filter(isQueryVariable)) {
    const definition = interpolate(variableQuery(variable), values);
    const options = await labelValues(query, definition);
    if (options.length === 0) throw new Error(`variable ${variable.name}: ${definition} lists no value`);
    const selection = selections[variable.name] ?? 'first';
    const picked = selection === 'all' ? options : selection === 'first' ? options.slice(0, 1) : selection;
    const missing = picked.filter((v) => !options.includes(v));
    if (missing.length > 0) throw new Error(`variable ${variable.name}: ${missing.join(', ')} not among ${options.join(', ')}`);
    values[variable.name] = formatValue(variable, picked, selection === 'all');
  }
  return values;
}

/**
 * Evaluates one target with the variables substituted. Problems (naming the panel): the query
 * fails (a parse error, a many-to-many join), returns no series, returns only NaN (a quantile
 * over buckets that never filled), or a series lacks a label its legend shows.
 */
export async function targetProblems(query: InstantQuery, target: PanelTarget, values: Record<string, string>): Promise<string[]> {
  const expr = interpolate(target.expr, values);
  const name = `${target.panel} ${target.refId}`;
  let series: Sample[];
  try {
    series = await query(expr);
  } catch (error) {
    return [`${name}: Prometheus refused ${expr}: ${error instanceof Error ? error.message : String(error)}`];
  }
  if (series.length === 0) return [`${name}: no series for ${expr}`];
  const problems: string[] = [];
  if (!series.some((s) => Number.isFinite(s.value))) problems.push(`${name}: only NaN or infinite values for ${expr}`);
  for (const [, label] of target.legendFormat.matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
    const without = series.find((s) => s.metric[label as string] === undefined);
    if (without !== undefined) problems.push(`${name}: legend shows {{${label}}} but ${JSON.stringify(without.metric)} has no ${label} label (${expr})`);
  }
  return problems;
}
