// Checks a Grafana dashboard JSON for what Grafana needs to import it and for the rules this
// dashboard keeps: the shape (dashboard-shape.ts), then what spans fields: unique panel ids and
// titles, panels inside the 24 grid columns and not on top of each other, every variable used
// defined (before the variables that use it), every `${DS_*}` an import input, every range
// `$__rate_interval`, every query filtered on the cluster's job. Returns readable problems, each
// naming the panel, so a failing test says what to fix; an empty list means importable.
import { type Dashboard, type DataPanel, dashboardSchema, isDataPanel, isQueryVariable, type Panel, variableQuery } from './dashboard-shape.ts';

export const GRID_COLUMNS = 24;

/** Grafana's global variables that panels may use without defining them. */
export const BUILTIN_VARIABLES = ['__rate_interval', '__interval', '__interval_ms', '__range', '__range_s', '__range_ms'];

/** The variable every query filters on, so a Prometheus that scrapes two Baton clusters does not mix them. */
export const CLUSTER_VARIABLE = 'job';

/** `$name`, `${name}`, `${name:format}`, `[[name]]`: Grafana's variable syntaxes. `$1` (a label_replace group) is not one. */
const VARIABLE_REFERENCE = /\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)/g;

export function variableReferences(text: string): string[] {
  const names = [...text.matchAll(VARIABLE_REFERENCE)].map((m) => (m[1] ?? m[2] ?? m[3]) as string);
  return names.filter((n) => !/^\d+$/.test(n));
}

export const describePanel = (panel: { id?: unknown; title?: unknown }): string => `panel ${String(panel.id)} "${String(panel.title)}"`;

export function dashboardProblems(json: unknown): string[] {
  const parsed = dashboardSchema.safeParse(json);
  if (!parsed.success) return parsed.error.issues.map((issue) => `${where(json, issue.path)}: ${issue.message}`);
  const dashboard = parsed.data;
  return [...panelProblems(dashboard.panels), ...variableProblems(dashboard), ...inputProblems(dashboard, JSON.stringify(json))];
}

/** Names the panel an issue path points into (by its title), instead of "panels.17". */
function where(json: unknown, path: readonly PropertyKey[]): string {
  const [top, index, ...rest] = path;
  if (top === 'panels' && typeof index === 'number') {
    const panels = (json as { panels?: Array<{ id?: unknown; title?: unknown }> }).panels;
    const panel = panels?.[index] ?? {};
    return `${describePanel(panel)}${rest.length > 0 ? ` ${rest.map(String).join('.')}` : ''}`;
  }
  return path.length === 0 ? 'dashboard' : path.map(String).join('.');
}

function panelProblems(panels: Panel[]): string[] {
  const problems: string[] = [];
  const ids = new Map<number, Panel>();
  const titles = new Set<string>();
  const cells = new Map<string, Panel>();
  for (const panel of panels) {
    const name = describePanel(panel);
    const other = ids.get(panel.id);
    if (other !== undefined) problems.push(`${name}: id ${panel.id} is also ${describePanel(other)}'s`);
    ids.set(panel.id, panel);
    if (titles.has(panel.title)) problems.push(`${name}: another panel has the same title`);
    titles.add(panel.title);
    const { x, y, w, h } = panel.gridPos;
    if (x + w > GRID_COLUMNS) problems.push(`${name}: gridPos x ${x} + w ${w} = ${x + w} is past the ${GRID_COLUMNS} grid columns`);
    if (panel.type === 'row' && (x !== 0 || w !== GRID_COLUMNS || h !== 1)) problems.push(`${name}: a row spans the grid (x 0, w 24, h 1)`);
    // Grafana pushes overlapping panels apart on load, so the layout would not be the one written here.
    let overlap: Panel | undefined;
    for (let row = y; row < y + h; row++) {
      for (let column = x; column < Math.min(x + w, GRID_COLUMNS); column++) {
        const key = `${column},${row}`;
        overlap ??= cells.get(key);
        cells.set(key, panel);
      }
    }
    if (overlap !== undefined) problems.push(`${name}: gridPos overlaps ${describePanel(overlap)}`);
    if (isDataPanel(panel)) problems.push(...targetProblems(panel));
  }
  return problems;
}

function targetProblems(panel: DataPanel): string[] {
  const problems: string[] = [];
  const name = describePanel(panel);
  const refIds = new Set<string>();
  for (const target of panel.targets) {
    if (refIds.has(target.refId)) problems.push(`${name}: refId ${target.refId} is used twice`);
    refIds.add(target.refId);
    if (!variableReferences(target.expr).includes(CLUSTER_VARIABLE))
      problems.push(`${name} ${target.refId}: the query does not filter on $${CLUSTER_VARIABLE}: ${target.expr}`);
    for (const [range] of target.expr.matchAll(/\[[^\]]*\]/g)) {
      if (range !== '[$__rate_interval]') problems.push(`${name} ${target.refId}: range ${range} is not [$__rate_interval]`);
    }
  }
  return problems;
}

function variableProblems(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  const variables = dashboard.templating.list;
  const defined = new Set<string>();
  for (const variable of variables) {
    if (defined.has(variable.name)) problems.push(`variable ${variable.name} is defined twice`);
    if (isQueryVariable(variable)) {
      const query = variableQuery(variable);
      if (!/^label_values\(.+,\s*\w+\s*\)$/.test(query)) problems.push(`variable ${variable.name}: query ${query} is not label_values(<selector>, <label>)`);
      // Grafana resolves variables in order: one may use only those above it.
      for (const used of [...variableReferences(query), ...variableReferences(variable.datasource.uid)]) {
        if (!defined.has(used)) problems.push(`variable ${variable.name} uses $${used}, which is not defined above it`);
      }
    }
    defined.add(variable.name);
  }
  if (!variables.some((v) => v.type === 'datasource' && v.name === 'datasource'))
    problems.push('no datasource variable named "datasource" (query "prometheus")');
  if (!defined.has(CLUSTER_VARIABLE)) problems.push(`no $${CLUSTER_VARIABLE} variable`);
  const used = new Set<string>();
  for (const panel of dashboard.panels.filter(isDataPanel)) {
    for (const text of [panel.datasource.uid, ...panel.targets.flatMap((t) => [t.expr, t.datasource.uid])]) {
      for (const name of variableReferences(text)) {
        used.add(name);
        if (!defined.has(name) && !BUILTIN_VARIABLES.includes(name)) problems.push(`${describePanel(panel)}: uses $${name}, which is not a dashboard variable`);
      }
    }
  }
  for (const variable of variables) {
    if (isQueryVariable(variable) && !used.has(variable.name)) problems.push(`variable ${variable.name} is used by no panel`);
  }
  return problems;
}

/** Every `${DS_*}` placeholder is replaced on import by the datasource picked for that input. */
function inputProblems(dashboard: Dashboard, text: string): string[] {
  const inputs = new Set(dashboard.__inputs.map((i) => i.name));
  const used = new Set([...text.matchAll(/\$\{(DS_[A-Z0-9_]+)\}/g)].map((m) => m[1] as string));
  const problems = [...used].filter((n) => !inputs.has(n)).map((n) => `\${${n}} is used but is not in __inputs`);
  problems.push(...[...inputs].filter((n) => !used.has(n)).map((n) => `__inputs ${n} is never used`));
  return problems;
}
