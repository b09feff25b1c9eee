// ops/grafana/baton-dashboard.json: importable by Grafana (the structure, checked here on the file
// and on broken copies of it, so the check is shown to catch what it claims), and every panel's
// every query answered with data by a real Prometheus scraping a real three-node cluster under
// load, with the variables substituted as Grafana would.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeOf, type Cluster, startCluster, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../../server/testing/etcd-cluster.ts';
import { type PrometheusServer, startPrometheus } from '../../server/testing/prometheus-harness.ts';
import { dashboardProblems, describePanel } from './dashboard-check.ts';
import { type DashboardLoad, startDashboardLoad } from './dashboard-load.ts';
import { panelTargets, resolveVariables, targetProblems } from './dashboard-queries.ts';
import { type Dashboard, dashboardSchema, isDataPanel } from './dashboard-shape.ts';

const DASHBOARD: unknown = JSON.parse(readFileSync(new URL('./baton-dashboard.json', import.meta.url), 'utf8'));

interface RawTarget {
  refId: string;
  expr?: string;
  datasource: { type: string; uid: string };
}
interface RawPanel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: RawTarget[];
  fieldConfig?: { defaults: { unit?: string } };
}
interface RawDashboard {
  __inputs?: Array<{ name: string; type: string; pluginId: string; label: string }>;
  uid?: string;
  schemaVersion: number;
  panels: RawPanel[];
  templating: { list: Array<{ name: string; query?: unknown; current?: unknown }> };
}

/** A copy of the dashboard with `mutate` applied, and the problems the check finds in it. */
function problemsOfCopy(mutate: (d: RawDashboard) => void): string[] {
  const copy = structuredClone(DASHBOARD) as RawDashboard;
  mutate(copy);
  return dashboardProblems(copy);
}

function panel(d: RawDashboard, title: string): RawPanel {
  const found = d.panels.find((p) => p.title === title);
  if (found === undefined) throw new Error(`no panel "${title}" in the dashboard`);
  return found;
}

function firstTarget(p: RawPanel): RawTarget {
  const target = p.targets?.[0];
  if (target === undefined) throw new Error(`panel "${p.title}" has no target`);
  return target;
}

describe('the Grafana dashboard JSON', () => {
  it('has everything Grafana needs to import it, and keeps the dashboard rules', () => {
    expect(dashboardProblems(DASHBOARD)).toEqual([]);
  });

  it('has the panels the issue asks for (a renamed or dropped one fails here)', () => {
    const titles = (DASHBOARD as RawDashboard).panels.map((p) => p.title);
    for (const title of [
      'Active nodes',
      'Role per node',
      'Priority per node',
      'Grants/s',
      'Queue wait (grants that queued)',
      'Hold time',
      'Handover latency by cause',
      'Expiries vs releases',
      'Replication lag (seconds)',
      'Event loop lag p99',
      'Memory',
      'Fencing tokens',
      'Node alive as the others see it',
      'Client connections',
      'Held locks and waiters',
      'Grants refused',
    ]) {
      expect(titles).toContain(title);
    }
  });

  it('names each alert of the shipped rules in the description of a panel that shows its series, and no other', () => {
    // The rules file is the one list of alert names (ops/prometheus/alert-rules.test.ts holds it to
    // issue 31's): a renamed or added alert the dashboard does not name fails here.
    const rules = readFileSync(new URL('../prometheus/baton-alerts.yml', import.meta.url), 'utf8');
    const alerts = [...rules.matchAll(/^\s*-\s*alert:\s*(\w+)\s*$/gm)].map((m) => m[1] as string);
    expect(alerts.length).toBeGreaterThan(0);
    const named = (DASHBOARD as RawDashboard).panels.flatMap((p) => [...(p.description ?? '').matchAll(/\bBaton[A-Z]\w+/g)].map((m) => m[0]));
    expect([...new Set(named)].sort()).toEqual([...alerts].sort());
  });

  // Each broken copy must be caught, with the problem naming the panel: proof that the check above can fail.
  it.each<[string, (d: RawDashboard) => void, RegExp]>([
    ['two panels with one id', (d) => (panel(d, 'Hold time').id = panel(d, 'Grants/s').id), /panel \d+ "Hold time": id \d+ is also panel \d+ "Grants\/s"'s/],
    ['a panel past the 24 columns', (d) => (panel(d, 'Grants/s').gridPos.w = 30), /panel \d+ "Grants\/s" gridPos.w: Too big/],
    [
      'a panel that ends past column 24',
      (d) => (panel(d, 'Memory').gridPos.x = 20),
      /panel \d+ "Memory": gridPos x 20 \+ w 6 = 26 is past the 24 grid columns/,
    ],
    [
      'two panels on one spot',
      (d) => (panel(d, 'Hold time').gridPos = { ...panel(d, 'Grants/s').gridPos }),
      /"Hold time": gridPos overlaps panel \d+ "Grants\/s"/,
    ],
    ['a panel without gridPos', (d) => delete (panel(d, 'CPU') as Partial<RawPanel>).gridPos, /panel \d+ "CPU" gridPos: /],
    ['a target without expr', (d) => delete firstTarget(panel(d, 'Memory')).expr, /panel \d+ "Memory" targets\.0\.expr: /],
    ['a target with an empty expr', (d) => (firstTarget(panel(d, 'Memory')).expr = ' '), /panel \d+ "Memory" targets\.0\.expr: /],
    [
      'a target on a fixed datasource instead of the variable',
      (d) => (firstTarget(panel(d, 'CPU')).datasource = { type: 'prometheus', uid: 'P1809F7CD0C75ACF3' }),
      /panel \d+ "CPU" targets\.0\.datasource\.uid: /,
    ],
    ['a panel without datasource', (d) => delete panel(d, 'CPU').datasource, /panel \d+ "CPU" datasource: /],
    [
      'a misspelt unit',
      (d) => ((panel(d, 'CPU').fieldConfig as { defaults: { unit?: string } }).defaults.unit = 'sec'),
      /panel \d+ "CPU" fieldConfig\.defaults\.unit: /,
    ],
    [
      'a variable that is not defined',
      (d) => (firstTarget(panel(d, 'CPU')).expr = firstTarget(panel(d, 'CPU')).expr?.replace('$node', '$nodes')),
      /panel \d+ "CPU": uses \$nodes, which is not a dashboard variable/,
    ],
    [
      'a variable used above its definition',
      (d) => d.templating.list.reverse(),
      /variable job uses \$datasource, which is not defined above it|variable node uses \$job, which is not defined above it/,
    ],
    [
      'a query that does not filter on the cluster',
      (d) => (firstTarget(panel(d, 'Active nodes')).expr = 'sum(baton_node_role{role="active"})'),
      /"Active nodes" A: the query does not filter on \$job/,
    ],
    [
      'a fixed range instead of $__rate_interval',
      (d) => (firstTarget(panel(d, 'CPU')).expr = firstTarget(panel(d, 'CPU')).expr?.replace('[$__rate_interval]', '[5m]')),
      /"CPU" A: range \[5m\] is not \[\$__rate_interval\]/,
    ],
    ['no import input', (d) => delete d.__inputs, /__inputs: /],
    [
      'an input nobody uses',
      (d) => d.__inputs?.push({ name: 'DS_OTHER', type: 'datasource', pluginId: 'prometheus', label: 'Other' }),
      /__inputs DS_OTHER is never used/,
    ],
    ['no uid', (d) => delete d.uid, /^uid: /],
    ['a uid Grafana refuses', (d) => (d.uid = 'baton dashboard with a uid far longer than forty characters'), /^uid: a uid is 1 to 40/],
    ['a schema older than Grafana 9', (d) => (d.schemaVersion = 27), /^schemaVersion: /],
    ['no datasource variable', (d) => (d.templating.list = d.templating.list.filter((v) => v.name !== 'datasource')), /uses \$datasource, which is not/],
  ])('catches %s', (_what, mutate, expected) => {
    const problems = problemsOfCopy(mutate);
    expect(
      problems.some((p) => expected.test(p)),
      `problems found:\n${problems.join('\n')}`,
    ).toBe(true);
  });
});

/**
 * `$__rate_interval` as Grafana computes it for the last hour at this test's 1 s scrapes: the
 * panel step (about 14 s for a 1 h range) plus one scrape interval.
 */
const RATE_INTERVAL = '15s';
const ACTIVE = 'a';

/** Panels whose every series exists only in the etcd mode (`--coordination etcd`): checked on an etcd-mode cluster below. */
const ETCD_SERIES = /^(baton_etcd_|baton_reply_gate_)/;
function etcdOnly(panel: { targets: { expr: string }[] }): boolean {
  const series = panel.targets.flatMap((t) =>
    [...t.expr.matchAll(/\b[a-z_]+_[a-z_]+\b/g)].map((m) => m[0]).filter((n) => n.startsWith('baton_') || n.startsWith('process_')),
  );
  return series.some((n) => ETCD_SERIES.test(n)) && series.every((n) => n === 'baton_node_info' || ETCD_SERIES.test(n));
}

describe('the Grafana dashboard on a real Prometheus scraping a real three-node cluster under load', () => {
  // A file that does not parse fails here and in the structural test (which says why), not at collection.
  const parsed = dashboardSchema.safeParse(DASHBOARD);
  const dashboard = parsed.data ?? { ...(DASHBOARD as Dashboard), panels: [], templating: { list: [] } };
  // The etcd mode's panels have no series on this default-mode cluster: the next describe runs them.
  const panels = dashboard.panels.filter(isDataPanel).filter((p) => !etcdOnly(p));
  let cluster: Cluster | undefined;
  let prometheus: PrometheusServer | undefined;
  let load: DashboardLoad | undefined;
  /** The variables with every node picked (Grafana's "All"), and with the active and one standby picked. */
  let allNodes: Record<string, string> = {};
  let someNodes: Record<string, string> = {};

  const server = (): PrometheusServer => {
    if (prometheus === undefined) throw new Error('prometheus did not start');
    return prometheus;
  };
  const query = (expr: string) => server().query(expr);

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3 });
    await waitSettled(cluster, ACTIVE, 10_000);
    prometheus = await startPrometheus({ targets: cluster.nodes.map((n) => n.httpAddress), scrapeIntervalSeconds: 1 });
    await prometheus.waitForTargetsUp();
    load = await startDashboardLoad(cluster, ACTIVE);
    // Until Prometheus has seen every kind of handover move within the rate window (so rates,
    // quantiles and "by cause" panels have something to show), read from the raw series.
    await waitFor(
      async () => {
        const moving = await query(`rate(baton_handover_latency_seconds_count{instance="${cluster?.node(ACTIVE).httpAddress}"}[${RATE_INTERVAL}]) > 0`);
        return moving.length >= 3;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'release, expiry and force-release handovers moving in Prometheus' },
    );
    allNodes = await resolveVariables(query, dashboard, { node: 'all' }, RATE_INTERVAL);
    someNodes = await resolveVariables(query, dashboard, { node: [ACTIVE, 'b'] }, RATE_INTERVAL);
  }, 90_000);

  afterAll(async () => {
    await load?.stop();
    await prometheus?.stop();
    await cluster?.close();
  });

  it('reads the dashboard', () => {
    expect(parsed.success).toBe(true);
    expect(panels.length).toBeGreaterThan(0);
  });

  it('resolves the variables as Grafana would: $job is the scrape job, $node lists the three nodes', async () => {
    expect(allNodes).toMatchObject({ job: 'baton', node: '.*', __rate_interval: RATE_INTERVAL });
    expect(someNodes.node).toBe(`(${ACTIVE}|b)`);
  });

  it('runs its load without an error (every round of it did what it set out to)', () => {
    expect(load?.errors).toEqual([]);
  });

  it.each(panels.map((p) => [describePanel(p)]))('%s: every query returns data, for all nodes and for some', async (name) => {
    const targets = panelTargets(dashboard).filter((t) => t.panel === name);
    const problems: string[] = [];
    for (const target of targets) {
      problems.push(...(await targetProblems(query, target, allNodes)).map((p) => `node All: ${p}`));
      problems.push(...(await targetProblems(query, target, someNodes)).map((p) => `node a+b: ${p}`));
    }
    expect(targets.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('fails a panel whose query names a renamed metric, does not parse, or drops a label its legend shows, naming the panel', async () => {
    const grants = panelTargets(dashboard).find((t) => t.panel.endsWith('"Grants/s"'));
    if (grants === undefined) throw new Error('no Grants/s panel');
    const renamed = await targetProblems(query, { ...grants, expr: grants.expr.replace('baton_grants_total', 'baton_grant_total') }, allNodes);
    expect(renamed).toEqual([
      expect.stringMatching(/^panel \d+ "Grants\/s" A: no series for max by \(protocol\) \(rate\(baton_grant_total\{job=~"baton"\}\[15s\]\)/),
    ]);
    const typo = await targetProblems(query, { ...grants, expr: grants.expr.replace('max by (protocol) (', 'max by (protocol) ((') }, allNodes);
    expect(typo).toEqual([expect.stringMatching(/^panel \d+ "Grants\/s" A: Prometheus refused .*bad_data/)]);
    const legend = await targetProblems(query, { ...grants, legendFormat: '{{node}} {{protocol}}' }, allNodes);
    expect(legend).toEqual([expect.stringMatching(/^panel \d+ "Grants\/s" A: legend shows \{\{node\}\} but .* has no node label/)]);
  });
});

describe("the Grafana dashboard's etcd-mode panels on a real Prometheus scraping a real three-node cluster in the etcd mode", () => {
  const parsed = dashboardSchema.safeParse(DASHBOARD);
  const dashboard = parsed.data ?? { ...(DASHBOARD as Dashboard), panels: [], templating: { list: [] } };
  const panels = dashboard.panels.filter(isDataPanel).filter(etcdOnly);
  let etcd: EtcdCluster | undefined;
  let cluster: Cluster | undefined;
  let prometheus: PrometheusServer | undefined;
  let allNodes: Record<string, string> = {};
  const query = (expr: string) => {
    if (prometheus === undefined) throw new Error('prometheus did not start');
    return prometheus.query(expr);
  };

  beforeAll(async () => {
    etcd = await EtcdCluster.start();
    cluster = await startCluster({ nodes: 3, etcd: { cluster: etcd, prefix: 'baton-test/dashboard', leaseTtlS: 2 } });
    const nodes = cluster;
    await waitFor(async () => (await activeOf(nodes)).length === 1, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'an active node in the etcd mode',
    });
    prometheus = await startPrometheus({ targets: nodes.nodes.map((n) => n.httpAddress), scrapeIntervalSeconds: 1 });
    await prometheus.waitForTargetsUp();
    // Every etcd series scraped from every node at least once.
    await waitFor(async () => (await query('count(baton_etcd_endpoint_up)')).some((r) => r.value >= 9), {
      timeoutMs: 20_000,
      intervalMs: 250,
      what: 'every node scraped with its three etcd endpoints',
    });
    allNodes = await resolveVariables(query, dashboard, { node: 'all' }, RATE_INTERVAL);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.stop();
    await cluster?.close();
    await etcd?.close();
  });

  it('has the etcd panels (series of the etcd mode only, and the node names)', () => {
    expect(panels.map((p) => p.title)).toEqual(['etcd endpoints answering with a leader', 'etcd role and grant permission']);
  });

  it.each(panels.map((p) => [describePanel(p)]))('%s: every query returns data for all nodes', async (name) => {
    const targets = panelTargets(dashboard).filter((t) => t.panel === name);
    const problems: string[] = [];
    for (const target of targets) problems.push(...(await targetProblems(query, target, allNodes)));
    expect(targets.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});
