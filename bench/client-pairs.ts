// `npm run bench:clients`: the official clients side by side on one `baton serve` (and Python's
// redis-py Lock on a Redis started here), each as its own process driving acquire+release pairs
// for --seconds, one in flight and 16 in flight (16 threads, goroutines or async loops sharing one
// client), --repeats times in rotating order. Prints a markdown table of medians, with each
// client's ratio to the TypeScript client measured in the same run, and the server's CPU per pair.
// Usage: npm run bench:clients [-- --seconds 4] [--repeats 3]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBaton } from './baton-process.ts';
import { exitWithUsageOnHelp, intFlag } from './flags.ts';
import { startRedis } from './servers/redis-server.ts';
import { ensureDebianServers } from './servers/server-process.ts';
import { median, round } from './stats.ts';

exitWithUsageOnHelp(import.meta.url);

const seconds = intFlag('--seconds', 4, 60);
const repeats = intFlag('--repeats', 3, 10);
const IN_FLIGHT = [1, 16];
const root = new URL('..', import.meta.url).pathname;
const say = (text: string) => process.stderr.write(`bench:clients: ${text}\n`);

/** The Debian python3 (with python3-redis) and Go (golang-go), installed when missing. */
function ensureTools(): void {
  const missing = ['golang-go', 'python3-redis'].filter((pkg) => spawnSync('dpkg', ['-s', pkg], { stdio: 'ignore' }).status !== 0);
  if (missing.length === 0) return;
  say(`apt-get install -y ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', ...missing]]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed with ${r.status}`);
  }
}

interface ClientUnderTest {
  readonly label: string;
  readonly server: 'baton' | 'redis';
  command(address: string, inFlight: number): string[];
}

function run(argv: string[]): Promise<{ pairs: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const [cmd = '', ...args] = argv;
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: root });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      const parsed = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { pairs?: number; seconds?: number; error?: string };
      if (code !== 0 || parsed.pairs === undefined || parsed.seconds === undefined) {
        reject(new Error(`${argv.join(' ')} exited ${code}: ${parsed.error ?? out}`));
        return;
      }
      resolve({ pairs: parsed.pairs, seconds: parsed.seconds });
    });
  });
}

ensureDebianServers();
ensureTools();
const goBin = join(mkdtempSync(join(tmpdir(), 'bench-go-')), 'go-pairs');
execFileSync('go', ['build', '-o', goBin, '.'], { cwd: join(root, 'bench/clients/go-pairs'), stdio: ['ignore', 2, 2] });
const python = '/usr/bin/python3';
const pyScript = join(root, 'bench/clients/python_pairs.py');
const clients: ClientUnderTest[] = [
  {
    label: 'TypeScript KeyedClient',
    server: 'baton',
    command: (a, n) => [process.execPath, '--import', 'tsx', 'bench/clients/ts-pairs.ts', a, String(seconds), String(n)],
  },
  { label: 'Go KeyedClient', server: 'baton', command: (a, n) => [goBin, a, String(seconds), String(n)] },
  { label: 'Python KeyedClient (sync, threads)', server: 'baton', command: (a, n) => [python, pyScript, 'baton', a, String(seconds), String(n)] },
  { label: 'Python KeyedClient (asyncio, tasks)', server: 'baton', command: (a, n) => [python, pyScript, 'baton-aio', a, String(seconds), String(n)] },
  { label: 'Python redis-py Lock (threads), on Redis', server: 'redis', command: (a, n) => [python, pyScript, 'redis-py', a, String(seconds), String(n)] },
];

const baton = await startBaton();
const redis = await startRedis();
const address = { baton: `127.0.0.1:${baton.lockPort}`, redis: `127.0.0.1:${redis.port}` };
const cpu = { baton: () => baton.cpuMs(), redis: () => redis.cpuMs() };
type Sample = { pairsPerSecond: number; cpuUsPerPair: number };
const samples = new Map<string, Sample[]>();
try {
  for (let r = 0; r < repeats; r++) {
    for (const inFlight of IN_FLIGHT) {
      // Rotate the order each repeat so no client always runs first (or last) on a warm server.
      const order = clients.map((_, i) => clients[(i + r) % clients.length] as ClientUnderTest);
      for (const client of order) {
        const cpuBefore = cpu[client.server]();
        const result = await run(client.command(address[client.server], inFlight));
        const cpuMs = cpu[client.server]() - cpuBefore;
        const sample = { pairsPerSecond: result.pairs / result.seconds, cpuUsPerPair: (cpuMs * 1000) / result.pairs };
        const key = `${client.label}|${inFlight}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
        say(`repeat ${r + 1}/${repeats}, ${inFlight} in flight, ${client.label}: ${Math.round(sample.pairsPerSecond)} pairs/s`);
      }
    }
  }
} finally {
  await baton.stop();
  await redis.stop();
}

const lines = [
  `Client pairs (acquire+release), ${seconds} s x ${repeats} repeats, medians; one \`baton serve --no-console\` and one redis-server on 127.0.0.1, ${new Date().toISOString()}`,
  '',
  '| client | in flight | pairs/s (median) | range | vs TypeScript | server CPU per pair |',
  '|---|---:|---:|---|---:|---:|',
];
for (const inFlight of IN_FLIGHT) {
  const ts = median((samples.get(`${clients[0]?.label}|${inFlight}`) ?? []).map((s) => s.pairsPerSecond));
  for (const client of clients) {
    const list = samples.get(`${client.label}|${inFlight}`) ?? [];
    const rates = list.map((s) => s.pairsPerSecond);
    const mid = median(rates);
    lines.push(
      `| ${client.label} | ${inFlight} | ${Math.round(mid)} | ${Math.round(Math.min(...rates))}-${Math.round(Math.max(...rates))} | ${round(mid / ts)}x | ${round(median(list.map((s) => s.cpuUsPerPair)))} us |`,
    );
  }
}
const table = `${lines.join('\n')}\n`;
process.stdout.write(table);
writeFileSync(join(root, 'bench/results/clients-latest.md'), table);
