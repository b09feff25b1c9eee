import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Whole-number flags of the benchmark scripts (`--seconds 5`): a bad value exits 2 with a message.
export function intFlag(name: string, fallback: number, max: number): number {
  const i = process.argv.indexOf(name);
  const value = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) {
    console.error(`bench: ${name} takes a whole number from 1 to ${max}`);
    process.exit(2);
  }
  return value;
}

/** `--only a,b`: the chosen names out of `all` (all of them when the flag is absent). */
export function listFlag<T extends string>(name: string, all: readonly T[]): T[] {
  const i = process.argv.indexOf(name);
  if (i < 0) return [...all];
  const chosen = (process.argv[i + 1] ?? '').split(',').filter((s) => s !== '');
  const bad = chosen.filter((c) => !all.includes(c as T));
  if (chosen.length === 0 || bad.length > 0) {
    console.error(`bench: ${name} takes a comma-separated list of ${all.join(', ')}`);
    process.exit(2);
  }
  return chosen as T[];
}

/** `--name value` as a string, or undefined when absent. */
export function stringFlag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith('--')) {
    console.error(`bench: ${name} takes a value`);
    process.exit(2);
  }
  return value;
}

/**
 * `--name 10000,100000`: whole numbers from `min` (1 unless given) to `max`, ascending, each once;
 * `fallback` when absent.
 */
export function intListFlag(name: string, fallback: number[], max: number, min = 1): number[] {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const text = process.argv[i + 1] ?? '';
  // Number('') is 0: an empty item is refused, not read as 0.
  const values = text.split(',').map((s) => (s.trim() === '' ? Number.NaN : Number(s)));
  if (values.some((v) => !(Number.isInteger(v) && v >= min && v <= max))) {
    console.error(`bench: ${name} takes a comma-separated list of whole numbers from ${min} to ${max}`);
    process.exit(2);
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * `--help`: prints the script's own leading comment (each bench script says there what it
 * measures and which flags it takes) and exits 0, before anything is started. Called first by
 * the scripts `npm run bench*` runs; without it `--help` was an unknown word and the whole
 * benchmark started.
 */
export function exitWithUsageOnHelp(scriptUrl: string): void {
  if (!process.argv.includes('--help') && !process.argv.includes('-h')) return;
  const lines = readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n');
  const end = lines.findIndex((line) => !line.startsWith('//'));
  console.log(
    lines
      .slice(0, end < 0 ? lines.length : end)
      .map((line) => line.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  process.exit(0);
}
