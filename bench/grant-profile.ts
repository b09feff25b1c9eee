// Where a grant's CPU goes with N locks held: one `baton serve` under `node --cpu-prof
// --trace-gc`, filled with N keyed locks of 600 s (the scale bench's way), then the scale bench's
// pair load (50 raw keyed connections, 16 pipelined, bench/raw-keyed-load.ts) for `seconds`. Prints
// the server's CPU per pair (from /proc), the collector's pauses during the load (from
// --trace-gc), and the self time of the profile's samples during the load, by function, as
// microseconds per pair. Issue 29: what a grant costs more at 5,000,000 held than at 1,000.
// Usage: node --import tsx bench/grant-profile.ts <locks held> [seconds=10] [bin/baton of another checkout]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpuMs } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { fillLocks } from '../server/testing/lock-load.ts';
import { BATON_BIN, serveArgs } from '../server/testing/serve-args.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const held = Number(process.argv[2] ?? 1_000);
const seconds = Number(process.argv[3] ?? 10);
const bin = process.argv[4] ?? BATON_BIN;
const dir = mkdtempSync(join(tmpdir(), 'baton-grant-profile-'));
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, '--trace-gc', bin, ...serveArgs(dir), '--no-console', '--log-level', 'warn', '--drain', '0ms'],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let gcLines: string[] = [];
let loading = false;
// --trace-gc writes to stdout too: the start line (lock=host:port ...) is the one naming the ports.
const ports = await new Promise<{ lockPort: number }>((resolve, reject) => {
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (text: string) => {
    out += text;
    const lines = out.split('\n');
    out = lines.pop() ?? '';
    for (const line of lines) {
      const port = /lock=[^ ]*:(\d+)/.exec(line)?.[1];
      if (port !== undefined) resolve({ lockPort: Number(port) });
      else if (loading && line.includes(' ms: ')) gcLines.push(line);
    }
  });
  child.once('exit', (code) => reject(new Error(`baton exited early with ${code}`)));
});
const pid = child.pid as number;
await fillLocks(ports.lockPort, held, 'scale/held');
await rawKeyedLoad(ports.lockPort, 50, 16, 2_000);
await new Promise((r) => setTimeout(r, 1_000));
gcLines = [];
loading = true;
const wall0 = Date.now();
const cpu0 = processCpuMs(pid);
const load = await rawKeyedLoad(ports.lockPort, 50, 16, seconds * 1_000);
const cpuMs = processCpuMs(pid) - cpu0;
const wall1 = Date.now();
loading = false;
const exited = new Promise((r) => child.once('exit', r));
child.kill('SIGINT');
await exited;
const exitedAt = Date.now();

const usPerPair = (ms: number) => ((ms * 1_000) / load.pairs).toFixed(3);
console.log(`${held.toLocaleString('en-US')} held: ${load.pairs.toLocaleString('en-US')} pairs in ${seconds} s, server CPU ${usPerPair(cpuMs)} us/pair`);
const pause = (l: string) => Number(/([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0);
const scavenges = gcLines.filter((l) => l.includes('Scavenge'));
const majors = gcLines.filter((l) => l.includes('Mark-Compact'));
const sum = (ls: string[]) => ls.reduce((s, l) => s + pause(l), 0);
console.log(
  `GC during the load: ${scavenges.length} scavenges (${usPerPair(sum(scavenges))} us/pair), ${majors.length} mark-compacts (${usPerPair(sum(majors))} us/pair)`,
);
for (const l of majors) console.log(`  ${l.trim()}`);

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (file === undefined) throw new Error('no profile written');
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
rmSync(dir, { recursive: true, force: true });
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
// The samples of the load's window: the profile's clock is microseconds since an arbitrary
// origin, so count back from its end (the process exited right after the load).
let t = profile.startTime;
const times = profile.timeDeltas.map((d) => (t += d));
const end = times[times.length - 1] ?? t;
const from = end - (exitedAt - wall0) * 1_000;
const to = end - (exitedAt - wall1) * 1_000;
const self = new Map<string, number>();
let busy = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const at = times[i] as number;
  if (at < from || at > to) continue;
  const node = byId.get(profile.samples[i] as number);
  if (node === undefined || node.callFrame.functionName === '(idle)') continue;
  const cf = node.callFrame;
  const key = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').pop() ?? ''}:${cf.lineNumber}`;
  const dt = (profile.timeDeltas[i + 1] ?? 0) / 1_000;
  self.set(key, (self.get(key) ?? 0) + dt);
  busy += dt;
}
console.log(`profiled busy time ${usPerPair(busy)} us/pair; self time by function (us/pair):`);
for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${usPerPair(ms)} ${key}`);
