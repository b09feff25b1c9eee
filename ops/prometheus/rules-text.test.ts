// The text edits the rules' tests make (rules-text.ts): what the live test's time scaling turns
// the shipped rules into, that promtool still accepts the result, and that an edit which finds
// nothing to change fails instead of testing nothing.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runPromtool } from '../../server/testing/promtool.ts';
import { durationSeconds, exprOf, ruleBlocks, withDurationsScaled, withExprEdit } from './rules-text.ts';

const RULES = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'baton-alerts.yml'), 'utf8');

describe('rules-text', () => {
  it('reads durations as Prometheus does', () => {
    expect(durationSeconds('1m30s')).toBe(90);
    expect(durationSeconds('6h')).toBe(21_600);
    expect(() => durationSeconds('90')).toThrow(/not a Prometheus duration/);
  });

  it('scales every for: and range window, rounding up to whole seconds, and nothing else', () => {
    const scaled = withDurationsScaled(RULES, 15);
    expect(scaled).not.toMatch(/^ {8}for: (?!\d+s$)/m);
    const blocks = (text: string) => Object.fromEntries(ruleBlocks(text).map((b) => [b.name, text.split('\n').slice(b.start, b.end).join('\n')]));
    const rule = blocks(scaled);
    expect(rule.BatonNoActiveNode).toMatch(/^ {8}for: 4s$/m);
    expect(rule.BatonSplitBrain).toMatch(/^ {8}for: 2s$/m);
    expect(exprOf(scaled, 'BatonFrequentFailovers')).toContain('[60s]');
    expect(exprOf(scaled, 'BatonQueueWaitHigh')).toContain('[20s]');
    // Thresholds and the 30-day horizon (a number, not a duration) stay.
    expect(exprOf(scaled, 'BatonLockHeldTooLong')).toBe(exprOf(RULES, 'BatonLockHeldTooLong'));
    expect(exprOf(scaled, 'BatonTokensNearExhaustion')).toContain('30 * 86400');
    // The annotations are untouched.
    expect(scaled.split('\n').filter((l) => /^ {10}(summary|description)/.test(l))).toEqual(
      RULES.split('\n').filter((l) => /^ {10}(summary|description)/.test(l)),
    );
  });

  it('gives promtool a rules file it accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-rules-text-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'rules.yml'), withExprEdit(withDurationsScaled(RULES, 15), 'BatonLockHeldTooLong', '> 1800', '> 5'));
    const { code, output } = await runPromtool(['check', 'rules', join(dir, 'rules.yml')]);
    expect(code, output).toBe(0);
  });

  it('refuses an edit that matches nothing, or more than once', () => {
    expect(() => withExprEdit(RULES, 'BatonLockHeldTooLong', '> 9999', '> 5')).toThrow(/occurs 0 times/);
    expect(() => withExprEdit(RULES, 'BatonNoActiveNode', 'baton_node_role', 'x')).toThrow(/occurs 3 times/);
    expect(() => withExprEdit(RULES, 'NoSuchAlert', 'a', 'b')).toThrow(/no rule NoSuchAlert/);
  });
});
