// `npm run bench`: the side-by-side benchmarks, in one run on 127.0.0.1, every server started
// and stopped by this script (Redis and etcd from Debian's packages, installed with apt-get when
// missing), the same load generator and the same handover driver for every system:
//   pairs     uncontended acquire+release pairs/s and server CPU per pair (Baton, Redis, etcd, and
//             the floor: a bare Node line server behind Baton's own clients)
//   handover  contended handover latency and fairness, 50 clients on one key
//   sessions  10,000 heartbeating sessions: RSS and CPU, and handover p99 meanwhile
//   failover  3 nodes: the gap with no active node after kill -9 and after graceful handoffs
//   console   handover p99 with five dashboards open against none (needs `npm run build`), and
//             the console's read side at 100,000 locks (50 never-reading event streams, four
//             pollers of GET /api/v1/locks?limit=1) against a canary (also alone: console-load)
//   scale     cost as the table grows: memory per held lock (Redis beside it), per waiter, per
//             session; grant CPU per pair; join and kill -9 of the 1M+ tables (bench/scale-run.ts
//             has its flags; `npm run bench:scale` runs it alone)
// Prints markdown tables (progress goes to stderr) and writes bench/results/bench-latest.json
// and bench-latest.md (bench-partial.* for a run with --only).
// Usage: npm run bench [-- --only pairs,handover,sessions,failover,console,console-load,scale] [--seconds 5]
//        [--repeats 3] [--sessions 10000] [--cpu-prof <dir>: profile every baton child]
//        [--baseline <other checkout>/bin/baton: that build too, side by side in pairs and handover]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { batonProfile, startBaton } from './baton-process.ts';
import { exitWithUsageOnHelp, intFlag, listFlag, stringFlag } from './flags.ts';
import { type BenchResults, hostMachine, markdown } from './report.ts';
import { consoleLoadSection } from './sections/console-load-section.ts';
import { consoleSection } from './sections/console-section.ts';
import { failoverSection } from './sections/failover-section.ts';
import { handoverSection } from './sections/handover-section.ts';
import { pairsSection } from './sections/pairs-section.ts';
import { sessionsSection } from './sections/sessions-section.ts';
import { runScale } from './scale-run.ts';
import { startEtcd } from './servers/etcd-server.ts';
import { startFloor } from './servers/floor-server.ts';
import { REDIS_ARGS, startRedis } from './servers/redis-server.ts';
import { ensureDebianServers, type ServerProcess, track } from './servers/server-process.ts';
import { batonRawKeyed } from './systems/baton-raw-keyed.ts';
import { batonKeyed, batonSession } from './systems/baton-systems.ts';
import { etcdElection, etcdLock } from './systems/etcd-systems.ts';
import { floorKeyed, floorSession } from './systems/floor-systems.ts';
import { redisSetNx, redlockDefault } from './systems/redis-systems.ts';

exitWithUsageOnHelp(import.meta.url);

const SECTIONS = ['pairs', 'handover', 'sessions', 'failover', 'console', 'console-load', 'scale'] as const;
const only = listFlag('--only', SECTIONS);
const seconds = intFlag('--seconds', 5, 120);
const repeats = intFlag('--repeats', 3, 20);
const sessionCount = intFlag('--sessions', 10_000, 15_000);
batonProfile.dir = stringFlag('--cpu-prof');
const baselineBin = stringFlag('--baseline');

const began = performance.now();
const say = (text: string) => process.stderr.write(`bench: ${text} (${Math.round((performance.now() - began) / 1000)} s)\n`);
const firstLine = (cmd: string) => execFileSync(cmd, ['--version'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? '?';

const sideBySide = only.includes('pairs') || only.includes('handover');
if (sideBySide) ensureDebianServers();
const results: BenchResults = {
  machine: {
    ...hostMachine(),
    redis: sideBySide ? firstLine('redis-server') : '-',
    etcd: sideBySide ? firstLine('etcd') : '-',
  },
  date: new Date().toISOString(),
  seconds,
  repeats,
  setup: {
    baton: '`baton serve --no-console` child (console on only in section 5), data dir in the OS temp dir (one fsync per 100,000 tokens)',
    redis: `redis-server ${REDIS_ARGS.join(' ').replace('--save  ', "--save '' ")} (no persistence), ioredis 5.11.1 with auto-pipelining`,
    etcd: 'single-member etcd, data dir on /dev/shm (tmpfs, so its per-write WAL fsync costs no disk), etcd3 1.1.2',
    floor:
      'bench/servers/floor-line-server.ts child (node --import tsx, as bin/baton): bare keyed and session line servers, a Map of held keys and a token counter, no queues, leases or durability',
    clients: '50 clients, each its own connection(s): one KeyedClient / SessionClient / ioredis / Etcd3 instance per client',
  },
};

if (sideBySide) {
  const servers: ServerProcess[] = [];
  try {
    say('starting baton, redis-server and etcd');
    const baton = await startBaton();
    track(baton.child);
    servers.push({ name: 'baton', pid: baton.child.pid as number, cpuMs: baton.cpuMs, stop: baton.stop });
    const baseline = baselineBin === undefined ? undefined : await startBaton([], { bin: baselineBin });
    if (baseline) {
      track(baseline.child);
      servers.push({ name: 'baton baseline', pid: baseline.child.pid as number, cpuMs: baseline.cpuMs, stop: baseline.stop });
    }
    const before = ' · baseline';
    const redis = await startRedis();
    servers.push(redis);
    const etcd = await startEtcd();
    servers.push(etcd);
    if (only.includes('pairs')) {
      say('starting the floor (and checking that the clients understand it)');
      const floor = await startFloor();
      servers.push(floor);
      const keyedFloor = floorKeyed(floor.keyedPort, floor.cpuMs);
      const sessionFloor = floorSession(floor.sessionPort, floor.cpuMs);
      say('section 1: uncontended pairs');
      results.pairs = await pairsSection(
        [
          { system: batonKeyed(baton.lockPort, baton.cpuMs), floor: keyedFloor },
          { system: keyedFloor },
          { system: batonRawKeyed(baton.lockPort, baton.cpuMs) },
          { system: batonSession(baton.sessionPort, baton.cpuMs), floor: sessionFloor },
          { system: sessionFloor },
          ...(baseline
            ? [
                { system: batonKeyed(baseline.lockPort, baseline.cpuMs, before, null), floor: keyedFloor },
                { system: batonSession(baseline.sessionPort, baseline.cpuMs, before, null), floor: sessionFloor },
              ]
            : []),
          { system: etcdLock(etcd.endpoint, etcd.cpuMs) },
        ],
        redisSetNx(redis.port, redis.cpuMs, 10),
        seconds,
        repeats,
      );
    }
    if (only.includes('handover')) {
      say('section 2: contended handover');
      results.handover = await handoverSection(
        [
          batonKeyed(baton.lockPort, baton.cpuMs),
          batonSession(baton.sessionPort, baton.cpuMs),
          ...(baseline ? [batonKeyed(baseline.lockPort, baseline.cpuMs, before, null), batonSession(baseline.sessionPort, baseline.cpuMs, before, null)] : []),
          redlockDefault(redis.port, redis.cpuMs),
          etcdElection(etcd.endpoint, etcd.cpuMs),
        ],
        redisSetNx(redis.port, redis.cpuMs, 10),
        seconds,
        repeats,
      );
    }
  } finally {
    await Promise.allSettled(servers.map((s) => s.stop()));
  }
}
if (only.includes('sessions')) {
  say(`section 3: ${sessionCount} sessions`);
  results.sessions = await sessionsSection(sessionCount, 2_000, seconds, repeats);
}
if (only.includes('failover')) {
  say('section 4: failover');
  results.failover = await failoverSection(repeats);
}
if (only.includes('console')) {
  say('section 5: the console');
  results.console = await consoleSection(seconds, repeats);
}
if (only.includes('console') || only.includes('console-load')) {
  say("section 5b: the console's read side at 100,000 locks");
  results.consoleLoad = await consoleLoadSection(seconds, repeats);
}

let text = markdown(results);
if (only.includes('scale')) {
  say('section 6: scale');
  text += `\n${await runScale(seconds, repeats, say)}`;
}
console.log(text);
const dir = new URL('./results/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
// Only a run of every section replaces bench-latest; a run with --only writes bench-partial.
const name = only.length === SECTIONS.length ? 'bench-latest' : 'bench-partial';
writeFileSync(`${dir}${name}.json`, `${JSON.stringify(results, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 2)}\n`);
writeFileSync(`${dir}${name}.md`, `${text}\n`);
say(`done: bench/results/${name}.md and .json`);
