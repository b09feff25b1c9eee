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
