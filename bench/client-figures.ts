// Figures measured with the client library against a real `baton serve` child process:
//   - acquire+release pairs per second with KeyedClient (50 concurrent loops on distinct keys)
//     and the server's CPU time per pair;
//   - handover latency between two clients on one key (keyed and session): from the moment the
//     holder lets go (release sent / connection closed) to the waiter's grant arriving.
import { KeyedClient, SessionClient } from '../lib/client/index.ts';
import { median, percentile, round } from './stats.ts';


export async function keyedPairs(lockPort: number, cpuMs: () => number, ms: number) {
  const client = new KeyedClient({ addresses: [`127.0.0.1:${lockPort}`] });
  let pairs = 0;
  const cpu0 = cpuMs();
  const start = performance.now();
  const deadline = start + ms;
  await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const key = `pairs/${i}`;
    while (performance.now() < deadline) {
      const grant = await client.acquire(key, { lease: 30_000, wait: 10_000 });
      await grant.release();
      pairs++;
    }
  }));
  const elapsed = performance.now() - start;
  const cpu = cpuMs() - cpu0;
  await client.close();
  return { pairsPerSec: Math.round((pairs / elapsed) * 1000), serverCpuUsPerPair: round((cpu * 1000) / pairs) };
}

export async function keyedHandover(lockPort: number, rounds: number) {
  const a = new KeyedClient({ addresses: [`127.0.0.1:${lockPort}`] });
  const b = new KeyedClient({ addresses: [`127.0.0.1:${lockPort}`] });
  const samples: number[] = [];
  let holder = await a.acquire('handover/keyed', { lease: 30_000 });
  let [current, other] = [a, b];
  for (let i = 0; i < rounds; i++) {
    const next = other.acquire('handover/keyed', { lease: 30_000 });
    await new Promise((r) => setImmediate(r)); // let the waiter's request reach the queue
    await new Promise((r) => setTimeout(r, 1));
    const t0 = performance.now();
    void holder.release();
    holder = await next;
    samples.push(performance.now() - t0);
    [current, other] = [other, current];
  }
  await holder.release();
  await Promise.all([a.close(), b.close()]);
  return { p50Ms: round(median(samples), 3), p99Ms: round(percentile(samples, 99), 3), maxMs: round(Math.max(...samples), 3) };
}

export async function sessionHandover(sessionPort: number, rounds: number) {
  const clients = [0, 1].map(() => new SessionClient({ addresses: [`127.0.0.1:${sessionPort}`] }));
  const samples: number[] = [];
  let holder = await (clients[0] as SessionClient).open('handover/session', { lease: 10_000 });
  for (let i = 0; i < rounds; i++) {
    const next = (clients[(i + 1) % 2] as SessionClient).open('handover/session', { lease: 10_000 });
    await new Promise((r) => setTimeout(r, 2)); // the waiter is queued (WAITING) by now
    const t0 = performance.now();
    void holder.close();
    holder = await next;
    samples.push(performance.now() - t0);
  }
  await holder.close();
  await Promise.all(clients.map((c) => c.close()));
  return { p50Ms: round(median(samples), 3), p99Ms: round(percentile(samples, 99), 3), maxMs: round(Math.max(...samples), 3) };
}
