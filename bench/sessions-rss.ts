// Opens N concurrent sessions (distinct names, all holding) against a `baton serve` child and
// reports the server's RSS growth per session and its CPU while they heartbeat.
// Usage: node --import tsx bench/sessions-rss.ts [sessions] [leaseMs]
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { startBaton } from './baton-process.ts';
import { round } from './stats.ts';

const count = Number(process.argv[2] ?? 10_000);
const leaseMs = Number(process.argv[3] ?? 2_000);
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

const baton = await startBaton(['--max-connections', String(count + 100)]);
const pid = baton.child.pid as number;
try {
  await new Promise((r) => setTimeout(r, 500));
  const before = rssKiB(pid);
  const sockets: Socket[] = [];
  let acquired = 0;
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: baton.sessionPort }, () => {
        s.write(`ACQUIRE rss/${i} ${leaseMs}\n`);
        resolve();
      });
      s.on('error', reject);
      s.setEncoding('latin1');
      let granted = false;
      s.on('data', (t: string) => {
        if (!granted && t.startsWith('ACQUIRED')) {
          granted = true;
          acquired++;
        }
      });
      sockets.push(s);
    });
  }
  while (acquired < count) await new Promise((r) => setTimeout(r, 50));
  const hb = setInterval(() => {
    for (const s of sockets) s.write('HEARTBEAT\n');
  }, leaseMs / 4);
  const cpu0 = baton.cpuMs();
  await new Promise((r) => setTimeout(r, 5_000));
  const cpu = baton.cpuMs() - cpu0;
  const after = rssKiB(pid);
  clearInterval(hb);
  console.log(JSON.stringify({
    sessions: count, acquired, rssBeforeMiB: round(before / 1024, 1), rssAfterMiB: round(after / 1024, 1),
    rssPerSessionKiB: round((after - before) / count, 2), serverCpuPercentWhileHeartbeating: round((cpu / 5_000) * 100, 1),
  }));
  for (const s of sockets) s.destroy();
} finally {
  await baton.stop();
}
