// Reading ops/systemd's files the way systemd does, for the tests beside them: the unit's
// directives (a key may repeat), the environment file's variables with the comment above each,
// ExecStart with the variables put in (`${VAR}` is one argument, `$VAR` is split on spaces, as
// systemd.service(5) says), and systemd time spans ("30s", "2min", "1min 30s").
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const UNIT_PATH = fileURLToPath(new URL('./baton.service', import.meta.url));
export const ENV_PATH = fileURLToPath(new URL('./baton.env', import.meta.url));

export interface UnitFile {
  /** "Section.Key" to every value it is given, in order (Key= with nothing resets in systemd; kept as ''). */
  directives: Map<string, string[]>;
}

export function parseUnit(text: string): UnitFile {
  const directives = new Map<string, string[]>();
  let section = '';
  // A line ending in a backslash continues on the next one.
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? '';
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`not a directive: ${line}`);
    const key = `${section}.${line.slice(0, eq).trim()}`;
    directives.set(key, [...(directives.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return { directives };
}

/** The last value of a directive (what systemd uses for a single-valued key), or undefined. */
export function directive(unit: UnitFile, key: string): string | undefined {
  return unit.directives.get(key)?.at(-1);
}

export interface EnvVariable {
  value: string;
  /** The comment lines right above it (without '#'), empty when it has none. */
  doc: string;
}

export function parseEnvFile(text: string): Map<string, EnvVariable> {
  const vars = new Map<string, EnvVariable>();
  let comment: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#')) {
      comment.push(line.replace(/^#\s?/, ''));
      continue;
    }
    if (line === '') {
      comment = [];
      continue;
    }
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`not VAR=value: ${line}`);
    vars.set(m[1] ?? '', { value: unquote(m[2] ?? ''), doc: comment.join(' ') });
    comment = [];
  }
  return vars;
}

function unquote(value: string): string {
  const m = /^"(.*)"$|^'(.*)'$/.exec(value);
  return m ? (m[1] ?? m[2] ?? '') : value;
}

/** The variables ExecStart names: braced and unbraced. */
export function execVariables(exec: string): string[] {
  return [...exec.matchAll(/\$\{(\w+)\}|\$(\w+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/**
 * ExecStart as argv: words split on spaces, `${VAR}` replaced inside its word, a word that is
 * only `$VAR` replaced by the value's own words (none when empty). A variable missing from `env`
 * throws: systemd would pass an empty argument, which is never what the unit means.
 */
export function execArgv(exec: string, env: ReadonlyMap<string, string>): string[] {
  const lookup = (name: string) => {
    const value = env.get(name);
    if (value === undefined) throw new Error(`ExecStart uses $${name}, which the environment file does not set`);
    return value;
  };
  const argv: string[] = [];
  for (const word of exec.trim().split(/\s+/)) {
    const bare = /^\$(\w+)$/.exec(word);
    if (bare) {
      argv.push(
        ...lookup(bare[1] ?? '')
          .split(/\s+/)
          .filter((w) => w !== ''),
      );
      continue;
    }
    argv.push(word.replace(/\$\{(\w+)\}/g, (_, name: string) => lookup(name)));
  }
  return argv;
}

const SPAN_UNITS: Record<string, number> = { ms: 1, s: 1_000, sec: 1_000, m: 60_000, min: 60_000, h: 3_600_000, hr: 3_600_000 };

/** A systemd time span in ms ("30s", "2min", "1min 30s"; a bare number is seconds). */
export function parseTimeSpan(text: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1_000;
  let ms = 0;
  const rest = t.replace(/(\d+(?:\.\d+)?)\s*(ms|sec|min|hr|s|m|h)\b\s*/g, (_, n: string, unit: string) => {
    ms += Number(n) * (SPAN_UNITS[unit] ?? Number.NaN);
    return '';
  });
  if (rest !== '' || t === '' || !Number.isFinite(ms)) throw new Error(`not a systemd time span: ${JSON.stringify(text)}`);
  return ms;
}

export function readUnit(path = UNIT_PATH): UnitFile {
  return parseUnit(readFileSync(path, 'utf8'));
}

export function readEnv(path = ENV_PATH): Map<string, EnvVariable> {
  return parseEnvFile(readFileSync(path, 'utf8'));
}
