// kill -9 of the active once a standby is in sync (bench/join-trace.ts --kill): the time from the
// kill to the standby's first grant, against peer-timeout + 200 ms, and whether every held lock
// was kept (the held count, and a sample of the filled locks with the token each had before).
//
// The first grant is read by a client that was already connected to the standby (it answers
// `M <active>` while a standby) and asks for a fresh lock every PROBE_EVERY_MS: the first `A`
// that comes back is the new active serving. So the figure is the kill to a client's grant, not
// to a phase in a view that is polled.
import { connect } from 'node:net';
import type { LockSummary, StatsView } from '../lib/ops-api/api-types.ts';
import type { NodeProcess } from '../server/testing/cluster-harness.ts';

const PROBE_EVERY_MS = 2;
/** Filled locks whose token is compared before and after. */
const SAMPLE = 500;

export interface KillFigures {
  /** Held locks on the active just before the kill, and on the standby once it serves. */
  heldBefore: number;
  heldAfter: number;
  /** Sampled locks whose holder token after the kill is the one before. */
  sampleKept: number;
  sample: number;
  /** kill -9 to the first grant a client connected to the standby got from it. */
  firstGrantMs: number;
  /** Last heartbeat heard to promoted, as the standby's failover timeline records it. */
  gapMs: number;
}

/** A client on the standby's keyed port asking for `kill-probe/<n>` (600 s, no wait) every PROBE_EVERY_MS; resolves at the first grant. */
function probeFirstGrant(port: number): { connected: Promise<void>; granted: Promise<number>; grants(): number; stop(): void } {
  const socket = connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  socket.setEncoding('latin1');
  let n = 0;
  let grants = 0;
  let timer: NodeJS.Timeout | undefined;
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      timer = setInterval(() => socket.write(`A kill-probe/${n++} 600000 0\n`), PROBE_EVERY_MS);
      resolve();
    });
    socket.once('error', reject);
  });
  const granted = new Promise<number>((resolve) => {
    let buffered = '';
    socket.on('data', (text: string) => {
      buffered += text;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('A kill-probe/')) continue;
        if (grants++ === 0) {
          resolve(performance.now());
          clearInterval(timer);
        }
      }
    });
  });
  socket.on('error', () => {});
  return {
    connected,
    granted,
    grants: () => grants,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

async function tokenOf(node: NodeProcess, name: string): Promise<string | null> {
  const r = await node.api<LockSummary>(`/api/v1/locks/${encodeURIComponent(name)}?limit=1`, {}, 10_000);
  return r.status === 200 ? (r.body.holder?.token ?? null) : null;
}

/** Kills `active` with SIGKILL and measures `standby` taking over (the churn should be stopped: the held count is compared). */
export async function killAndTakeOver(active: NodeProcess, standby: NodeProcess, locks: number, prefix: string): Promise<KillFigures> {
  const names = Array.from({ length: SAMPLE }, (_, i) => `${prefix}/${Math.floor((i * locks) / SAMPLE)}`);
  const before = new Map<string, string | null>();
  for (const name of names) before.set(name, await tokenOf(active, name));
  const stats = await active.api<StatsView>('/api/v1/stats', {}, 10_000);
  const probe = probeFirstGrant(standby.ports.lock);
  await probe.connected;
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  await active.kill9();
  const grantedAt = await Promise.race([probe.granted, new Promise<number>((r) => setTimeout(() => r(Number.NaN), 60_000))]);
  // The probes sent before the first grant came back are answered too: count their grants.
  await new Promise((r) => setTimeout(r, 500));
  probe.stop();
  const view = await standby.cluster();
  const after = await standby.api<StatsView>('/api/v1/stats', {}, 30_000);
  let sampleKept = 0;
  for (const name of names) if ((await tokenOf(standby, name)) === before.get(name) && before.get(name) !== null) sampleKept++;
  const failover = view.failovers.at(-1);
  return {
    heldBefore: stats.body.held,
    // The probe's own grants are not the old active's.
    heldAfter: after.body.held - probe.grants(),
    sampleKept,
    sample: SAMPLE,
    firstGrantMs: grantedAt - t0,
    gapMs: failover?.gapMs ?? Number.NaN,
  };
}
