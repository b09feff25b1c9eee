// Reads and edits baton-alerts.yml as text, for its tests (there is no YAML library in the
// project, and the file keeps one layout: `      - alert: Name` starts a rule, `        expr:`
// holds its expression on the line or as a `|` block below it, `        for:` its duration).
// Every edit fails loudly when it finds nothing to change, so a rules file that drifted from that
// layout breaks the tests instead of making them test nothing.

export interface RuleBlock {
  name: string;
  /** Line index of `- alert:` and one past the rule's last line. */
  start: number;
  end: number;
  /** Lines of the expression (the `expr:` line and its block, if any). */
  exprStart: number;
  exprEnd: number;
}

const ALERT = /^ {6}- alert: (\w+)\s*$/;
const EXPR = /^ {8}expr: ?(.*)$/;

export function ruleBlocks(text: string): RuleBlock[] {
  const lines = text.split('\n');
  const starts: Array<{ name: string; at: number }> = [];
  lines.forEach((line, at) => {
    const m = ALERT.exec(line);
    if (m?.[1] !== undefined) starts.push({ name: m[1], at });
  });
  return starts.map(({ name, at }, i) => {
    const end = starts[i + 1]?.at ?? lines.length;
    const exprStart = lines.findIndex((l, n) => n > at && n < end && EXPR.test(l));
    if (exprStart < 0) throw new Error(`rule ${name} has no "        expr:" line`);
    const inline = EXPR.exec(lines[exprStart] as string)?.[1]?.trim() ?? '';
    let exprEnd = exprStart + 1;
    // A `|` block: the lines indented deeper than `expr:`.
    if (inline === '|' || inline === '|-') while (exprEnd < end && /^ {10}/.test(lines[exprEnd] as string)) exprEnd++;
    return { name, start: at, end, exprStart, exprEnd };
  });
}

function blockOf(text: string, name: string): RuleBlock {
  const block = ruleBlocks(text).find((b) => b.name === name);
  if (block === undefined) throw new Error(`no rule ${name} in the rules file`);
  return block;
}

/** The rule's expression, as Prometheus reads it (a `|` block joined by newlines). */
export function exprOf(text: string, name: string): string {
  const b = blockOf(text, name);
  const lines = text.split('\n').slice(b.exprStart, b.exprEnd);
  const first = (EXPR.exec(lines[0] as string)?.[1] ?? '').trim();
  if (first === '|' || first === '|-')
    return lines
      .slice(1)
      .map((l) => l.slice(10))
      .join('\n');
  return first;
}

/** The rules file with `name`'s expression replaced by `expr` (a one-line JSON string, valid YAML). */
export function withExpr(text: string, name: string, expr: string): string {
  const b = blockOf(text, name);
  const lines = text.split('\n');
  lines.splice(b.exprStart, b.exprEnd - b.exprStart, `        expr: ${JSON.stringify(expr)}`);
  return lines.join('\n');
}

/** The rules file with `from` replaced by `to` in `name`'s expression; `from` must occur there exactly once. */
export function withExprEdit(text: string, name: string, from: string, to: string): string {
  const expr = exprOf(text, name);
  const count = expr.split(from).length - 1;
  if (count !== 1) throw new Error(`"${from}" occurs ${count} times in the expression of ${name}, not once: ${expr}`);
  return withExpr(text, name, expr.replace(from, to));
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800, y: 31_536_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;

/** Seconds in a Prometheus duration ("1m30s"). */
export function durationSeconds(duration: string): number {
  if (!DURATION.test(duration)) throw new Error(`not a Prometheus duration: ${duration}`);
  let total = 0;
  for (const m of duration.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * (UNIT_SECONDS[m[2] as string] ?? 0);
  return total;
}

/** `seconds` divided by `factor`, rounded up to whole seconds, at least 1 s. */
function scaled(seconds: number, factor: number): string {
  return `${Math.max(1, Math.ceil(seconds / factor))}s`;
}

/**
 * Every `for:` and every range window (`[5m]`) in the expressions divided by `factor`, rounded
 * up to whole seconds (at least 1 s): the rules as they read at a scrape interval `factor` times
 * shorter than the 15 s they were written for. Thresholds are left alone.
 */
export function withDurationsScaled(text: string, factor: number): string {
  const lines = text.split('\n');
  let changed = 0;
  for (const b of ruleBlocks(text)) {
    for (let n = b.start; n < b.end; n++) {
      const line = lines[n] as string;
      const forLine = /^( {8}for: )(\S+)\s*$/.exec(line);
      if (forLine !== null) {
        lines[n] = `${forLine[1]}${scaled(durationSeconds(forLine[2] as string), factor)}`;
        changed++;
      } else if (n >= b.exprStart && n < b.exprEnd) {
        lines[n] = line.replace(/\[(\w+)\]/g, (_all, d: string) => {
          changed++;
          return `[${scaled(durationSeconds(d), factor)}]`;
        });
      }
    }
  }
  if (changed === 0) throw new Error('no for: and no range window found to scale');
  return lines.join('\n');
}
