// Section 3: 10,000 concurrent sessions with a 2 s lease, all heartbeating (a child process holds
// them, so neither process nears the 20,000 open-file limit): the server's RSS per session, its
// CPU while they heartbeat, and the handover latency of a contended keyed lock (50 clients, the
// section 2 driver) measured meanwhile, against the same measurement on the same daemon before
// the sessions were opened.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startBaton } from '../baton-process.ts';
import { runHandover, type HandoverRun } from '../handover-load.ts';
import { track } from '../servers/server-process.ts';
import { median, round } from '../stats.ts';
import { batonKeyed } from '../systems/baton-systems.ts';

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

export interface SessionsResult {
  /** Sessions asked for, and sessions the daemon accepted and granted (the rest were refused). */
  requested: number;
  sessions: number;
  leaseMs: number;
  rssBeforeMiB: number;
  rssWithSessionsMiB: number;
  rssPerSessionKiB: number;
  serverCpuPercentHeartbeating: number;
  /** Heartbeats the server answered per second, counted by the holder process during the CPU windows. */
  heartbeatsPerSec: number;
  handoverP99MsWithout: number;
  handoverP99MsWith: number;
  handoverP50MsWith: number;
  fairnessWith: number;
  holderCounts: Record<string, number>;
}

/** `resumable`: each session's ACQUIRE carries a claim key (the scale section's resumable rows). */
export async function sessionsSection(count: number, leaseMs: number, seconds: number, repeats: number, resumable = false): Promise<SessionsResult> {
  const baton = await startBaton(['--max-connections', String(count + 1_000)]);
  track(baton.child);
  const pid = baton.child.pid as number;
  const keyed = batonKeyed(baton.lockPort, baton.cpuMs);
  let holders: ReturnType<typeof spawn> | undefined;
  try {
    await runHandover(keyed, 50, 500); // warm-up
    const without: HandoverRun[] = [];
    for (let r = 0; r < repeats; r++) without.push(await runHandover(keyed, 50, seconds * 1_000));
    await new Promise((r) => setTimeout(r, 500));
    const before = rssKiB(pid);
    process.stderr.write(`bench: sessions: opening ${count} sessions\n`);
    const script = new URL('../session-holders.ts', import.meta.url).pathname;
    holders = spawn(
      process.execPath,
      ['--import', 'tsx', script, String(baton.sessionPort), String(count), String(leaseMs), ...(resumable ? ['resumable'] : [])],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    track(holders);
    const lines = createInterface({ input: holders.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
    const ready = JSON.parse(String((await lines.next()).value)) as { ready: number; refused: number };
    if (ready.ready < count) process.stderr.write(`bench: sessions: the daemon took ${ready.ready} of ${count} sessions and refused ${ready.refused}\n`);
    if (ready.ready < count / 2) throw new Error(`only ${ready.ready} of ${count} sessions were granted`);
    await new Promise((r) => setTimeout(r, 2_000)); // a full lease of heartbeats before measuring
    const rssSamples: number[] = [];
    const cpuPercent: number[] = [];
    const withSessions: HandoverRun[] = [];
    const heartbeatRates: number[] = [];
    const answered = async () => {
      holders?.stdin?.write('count\n');
      return (JSON.parse(String((await lines.next()).value)) as { heartbeatReplies: number }).heartbeatReplies;
    };
    for (let r = 0; r < repeats; r++) {
      const hb0 = await answered();
      const cpu0 = baton.cpuMs();
      const t0 = performance.now();
      await new Promise((res) => setTimeout(res, seconds * 1_000));
      const elapsedMs = performance.now() - t0;
      cpuPercent.push(((baton.cpuMs() - cpu0) / elapsedMs) * 100);
      heartbeatRates.push(((await answered()) - hb0) / (elapsedMs / 1000));
      rssSamples.push(rssKiB(pid));
      process.stderr.write(`bench: sessions: repeat ${r + 1}/${repeats}: handover during ${count} sessions\n`);
      withSessions.push(await runHandover(keyed, 50, seconds * 1_000));
    }
    holders.stdin?.write('stop\n');
    const counts = JSON.parse(String((await lines.next()).value)) as Record<string, number>;
    const after = median(rssSamples);
    return {
      requested: count,
      sessions: ready.ready,
      leaseMs,
      rssBeforeMiB: round(before / 1024, 1),
      rssWithSessionsMiB: round(after / 1024, 1),
      rssPerSessionKiB: round((after - before) / ready.ready, 2),
      serverCpuPercentHeartbeating: round(median(cpuPercent), 1),
      heartbeatsPerSec: Math.round(median(heartbeatRates)),
      handoverP99MsWithout: median(without.map((h) => h.p99Ms)),
      handoverP99MsWith: median(withSessions.map((h) => h.p99Ms)),
      handoverP50MsWith: median(withSessions.map((h) => h.p50Ms)),
      fairnessWith: median(withSessions.map((h) => h.fairness)),
      holderCounts: counts,
    };
  } finally {
    holders?.kill('SIGKILL');
    await baton.stop();
  }
}
