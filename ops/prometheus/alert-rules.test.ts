// The alert rules as promtool sees them: `promtool check rules` accepts the file, `promtool test
// rules` passes the unit tests beside it, and those tests do test every rule: a rule made to
// never fire, or to fire always, fails them (each rule has a firing case and a silent one). A
// failure prints promtool's own output.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runPromtool } from '../../server/testing/promtool.ts';
import { exprOf, ruleBlocks, withExpr, withExprEdit } from './rules-text.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const RULES = readFileSync(join(HERE, 'baton-alerts.yml'), 'utf8');
const TESTS = readFileSync(join(HERE, 'baton-alerts.test.yml'), 'utf8');

/** The alert names issue 31 fixed, so that tests, docs and dashboards agree. */
const ALERTS = [
  'BatonNoActiveNode',
  'BatonSplitBrain',
  'BatonStandbyOutOfSync',
  'BatonStandbyLagging',
  'BatonFrequentFailovers',
  'BatonLockHeldTooLong',
  'BatonQueueWaitHigh',
  'BatonExpiriesOutnumberReleases',
  'BatonTokensNearExhaustion',
  'BatonGrantsRefused',
  'BatonEventLoopBlocked',
  'BatonPeerAuthRefused',
  'BatonSignInThrottled',
  'BatonAuditUnwritable',
  'BatonEtcdUnreachable',
];

/**
 * Labels an expression may match or group on: target labels and Baton's bounded sets (no lock
 * names, no clients). `endpoint` is an etcd endpoint of `--etcd-endpoints` (the configured ones only).
 */
const BOUNDED_LABELS = new Set(['instance', 'job', 'role', 'node', 'protocol', 'cause', 'reason', 'le', 'endpoint']);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `promtool test rules` on `tests` (all the unit tests unless given) against `rules` (the shipped file unless given). */
function unitTests(rules = RULES, tests = TESTS) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-alert-rules-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'baton-alerts.yml'), rules);
  writeFileSync(join(dir, 'baton-alerts.test.yml'), tests);
  return runPromtool(['test', 'rules', 'baton-alerts.test.yml'], { cwd: dir });
}

/**
 * The unit tests of one alert only: the file's head and the test groups (`  - name:`) that name
 * it. A run of all of them takes about a second of CPU; 28 such runs would be most of a minute.
 */
function unitTestsOf(name: string): string {
  const [head, ...groups] = TESTS.split(/\n(?= {2}- name: )/);
  const mine = groups.filter((g) => g.includes(`alertname: ${name}\n`));
  if (mine.length === 0) throw new Error(`no unit test names ${name}`);
  return [head, ...mine].join('\n');
}

function ruleText(name: string): string {
  const block = ruleBlocks(RULES).find((b) => b.name === name);
  if (block === undefined) throw new Error(`no rule ${name}`);
  return RULES.split('\n').slice(block.start, block.end).join('\n');
}

/** Per alert, whether the unit tests have a case expecting it to fire and one expecting silence. */
function unitCases(): Map<string, { fires: number; silent: number }> {
  const cases = new Map<string, { fires: number; silent: number }>();
  for (const m of TESTS.matchAll(/alertname: (\w+)\n\s+exp_alerts:( \[\])?/g)) {
    const c = cases.get(m[1] as string) ?? { fires: 0, silent: 0 };
    if (m[2] === undefined) c.fires++;
    else c.silent++;
    cases.set(m[1] as string, c);
  }
  return cases;
}

describe('ops/prometheus/baton-alerts.yml', () => {
  it('passes promtool check rules', async () => {
    const { code, output } = await runPromtool(['check', 'rules', join(HERE, 'baton-alerts.yml')]);
    expect(code, output).toBe(0);
    expect(output).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it('passes its promtool unit tests (baton-alerts.test.yml)', async () => {
    const { code, output } = await unitTests();
    expect(code, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it('has every alert of the issue, each with a severity, a summary and a description', () => {
    expect(ruleBlocks(RULES).map((b) => b.name)).toEqual(ALERTS);
    for (const name of ALERTS) {
      const text = ruleText(name);
      expect(text, name).toMatch(/^ {10}severity: (critical|warning)$/m);
      expect(text, name).toMatch(/^ {10}summary: "\S/m);
      expect(text, name).toMatch(/^ {10}description: >-\n {12}\S/m);
      // What to do first is in every description.
      expect(text, name).toMatch(/First:\s/);
    }
  });

  it('matches and groups only on labels of bounded cardinality', () => {
    for (const name of ALERTS) {
      const expr = exprOf(RULES, name);
      const used = new Set<string>();
      for (const m of expr.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g)) for (const l of (m[1] ?? '').split(',')) used.add(l.trim());
      for (const m of expr.matchAll(/\{([^}]*)\}/g)) for (const l of (m[1] ?? '').matchAll(/(\w+)\s*(?:=|!=|=~|!~)/g)) used.add(l[1] as string);
      used.delete('');
      expect(
        [...used].filter((l) => !BOUNDED_LABELS.has(l)),
        `labels in ${name}: ${expr}`,
      ).toEqual([]);
    }
  });

  it('has a unit test where each rule fires and one where it stays silent', () => {
    const cases = unitCases();
    for (const name of ALERTS) {
      expect(cases.get(name)?.fires ?? 0, `firing cases of ${name}`).toBeGreaterThan(0);
      expect(cases.get(name)?.silent ?? 0, `silent cases of ${name}`).toBeGreaterThan(0);
    }
  });

  it('fails its unit tests when any one rule never fires, or always fires', { timeout: 60_000 }, async () => {
    const runs = ALERTS.flatMap((name) => [
      { name, how: 'never fires', rules: withExpr(RULES, name, 'vector(1) == 0') },
      { name, how: 'always fires', rules: withExpr(RULES, name, 'vector(1)') },
    ]);
    // The same tests pass on the shipped rules (the test above): a failure here is the edit's.
    const results = await Promise.all(runs.map((r) => unitTests(r.rules, unitTestsOf(r.name))));
    runs.forEach((r, i) => {
      const { code, output } = results[i] as { code: number | null; output: string };
      expect(code, `${r.name} ${r.how}: the unit tests still pass`).not.toBe(0);
      expect(output, `${r.name} ${r.how}`).toContain(`alertname: ${r.name}`);
    });
  });

  it('fails its unit tests when a threshold moves past the case that tests it', async () => {
    const { code, output } = await unitTests(withExprEdit(RULES, 'BatonLockHeldTooLong', '> 1800', '> 2400'), unitTestsOf('BatonLockHeldTooLong'));
    expect(code).not.toBe(0);
    expect(output).toContain('alertname: BatonLockHeldTooLong');
  });
});
