// The shape of ops/grafana/baton-dashboard.json that Grafana needs to import it, as a zod schema.
// Grafana's own import is lenient (a panel without gridPos lands at 0,0, a target without expr is
// a blank query), so this is stricter than Grafana: it asks for everything this dashboard relies
// on. The checks that span several fields (unique ids, the grid, variables) are in
// dashboard-check.ts.
import { z } from 'zod';

/** Grafana 9.0 and later: datasources are referenced as { type, uid } objects. */
export const MIN_SCHEMA_VERSION = 36;

/** The datasource every panel and target uses: the dashboard's datasource variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, written literally into the JSON (not a JS template).
export const DATASOURCE_REF = { type: 'prometheus', uid: '${datasource}' } as const;

/** Core panel plugins this dashboard may use (no plugin to install). */
export const PANEL_TYPES = ['row', 'timeseries', 'stat', 'state-timeline', 'table', 'gauge', 'bargauge', 'text'] as const;

/** Grafana unit ids the panels may use; a misspelt unit is shown raw next to every value. */
export const UNITS = ['none', 'short', 's', 'ms', 'bytes', 'ops', 'reqps', 'percentunit'] as const;

const datasourceRef = z.object({ type: z.literal(DATASOURCE_REF.type), uid: z.literal(DATASOURCE_REF.uid) });

const gridPos = z.object({
  h: z.number().int().min(1),
  w: z.number().int().min(1).max(24),
  x: z.number().int().min(0).max(23),
  y: z.number().int().min(0),
});

const target = z.object({
  refId: z.string().min(1),
  expr: z.string().trim().min(1),
  legendFormat: z.string().optional(),
  datasource: datasourceRef,
});

const rowPanel = z.object({
  id: z.number().int().positive(),
  type: z.literal('row'),
  title: z.string().trim().min(1),
  gridPos,
  collapsed: z.literal(false),
  panels: z.array(z.unknown()).length(0),
});

const dataPanel = z.object({
  id: z.number().int().positive(),
  type: z.enum(PANEL_TYPES.filter((t) => t !== 'row') as [string, ...string[]]),
  title: z.string().trim().min(1),
  description: z.string().trim().min(1),
  gridPos,
  datasource: datasourceRef,
  targets: z.array(target).min(1),
  fieldConfig: z.object({ defaults: z.object({ unit: z.enum(UNITS) }) }),
});

// Discriminated on type, so a broken panel's issue names the field (a plain union only says "Invalid input").
export const panelSchema = z.discriminatedUnion('type', [rowPanel, dataPanel]);

const datasourceVariable = z.object({ name: z.string().min(1), type: z.literal('datasource'), query: z.literal('prometheus') });

/** A Prometheus query variable: `label_values(<selector>, <label>)`, as a string or in the query editor's object. */
const queryVariable = z.object({
  name: z.string().min(1),
  type: z.literal('query'),
  datasource: datasourceRef,
  query: z.union([z.string(), z.object({ query: z.string() })]),
  multi: z.boolean(),
  includeAll: z.boolean(),
  allValue: z.string().optional(),
});

export const variableSchema = z.discriminatedUnion('type', [datasourceVariable, queryVariable]);

export const dashboardSchema = z.object({
  __inputs: z
    .array(
      z.object({
        name: z.string().regex(/^DS_[A-Z0-9_]+$/),
        type: z.literal('datasource'),
        pluginId: z.literal('prometheus'),
        label: z.string().min(1),
      }),
    )
    .min(1),
  uid: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'a uid is 1 to 40 letters, digits, - or _'),
  title: z.string().trim().min(1),
  schemaVersion: z.number().int().min(MIN_SCHEMA_VERSION),
  templating: z.object({ list: z.array(variableSchema).min(1) }),
  panels: z.array(panelSchema).min(1),
});

export type Dashboard = z.infer<typeof dashboardSchema>;
export type Panel = z.infer<typeof panelSchema>;
export type DataPanel = z.infer<typeof dataPanel>;
export type Variable = z.infer<typeof variableSchema>;
export type QueryVariable = z.infer<typeof queryVariable>;

export function isDataPanel(panel: Panel): panel is DataPanel {
  return panel.type !== 'row';
}

export function isQueryVariable(variable: Variable): variable is QueryVariable {
  return variable.type === 'query';
}

/** A query variable's PromQL-side text, whichever of Grafana's two forms it is stored in. */
export function variableQuery(variable: QueryVariable): string {
  return typeof variable.query === 'string' ? variable.query : variable.query.query;
}
