// The outside probe of issue 26 (item 6), at a smaller scale, on real sockets: connections that
// ACQUIRE with a lease of 31,700 years and a claim key, then reset, must not leave that many
// locks held by nobody. With --max-parked 50 and --max-park 3s on a real daemon: 50 claims wait
// for their clients, the other 150 are released as a close releases them, and the 50 end within
// --max-park. /metrics counts both.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../daemon/daemon.ts';
import { eventually, LineClient } from '../testing/line-client.ts';

const CONNECTIONS = 200;
const MAX_PARKED = 50;
const MAX_PARK_MS = 3_000;
const HUGE_LEASE = '999999999999999';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

function keyOf(i: number): string {
  return i.toString(16).padStart(32, '0');
}

/** One probe connection: ACQUIRE park-i with a huge lease and a key, answered ACQUIRED. */
async function acquire(port: number, i: number): Promise<{ socket: Socket; line: string }> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`ACQUIRE park-${i} ${HUGE_LEASE} ${keyOf(i)}\n`);
  const line = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString().trimEnd())));
  return { socket, line };
}

async function metric(d: Daemon, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${d.httpAddress.port}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}

describe('claims between connections are capped (issue 26, item 6)', () => {
  it(`${CONNECTIONS} resets with leases of centuries leave at most --max-parked locks held by nobody, and those end within --max-park`, async () => {
    const d = await startDaemon({
      host: '127.0.0.1',
      lockPort: 0,
      sessionPort: 0,
      httpPort: 0,
      dataDir: null,
      drainMs: 0,
      maxParked: MAX_PARKED,
      maxParkMs: MAX_PARK_MS,
    });
    teardown.push(() => d.shutdown());
    const port = d.sessionAddress.port;
    const probes = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => acquire(port, i)));
    for (const p of probes) expect(p.line).toMatch(/^ACQUIRED \d+$/);
    expect(d.engine.heldCount).toBe(CONNECTIONS);
    for (const p of probes) p.socket.resetAndDestroy();
    const resetAt = performance.now();
    // Every reset seen: each claim was either kept for its client or released.
    await eventually(() => d.engine.heldCount === MAX_PARKED && d.state() === 'serving', 5_000, `${MAX_PARKED} locks held`);
    await eventually(() => d.engine.detachedCount + d.engine.detachRefusedCount === CONNECTIONS, 5_000, 'every reset handled');
    expect([d.engine.detachedCount, d.engine.detachRefusedCount]).toEqual([MAX_PARKED, CONNECTIONS - MAX_PARKED]);
    expect(await metric(d, 'baton_claims_between_connections')).toBe(MAX_PARKED);
    expect(await metric(d, 'baton_claims_not_kept_total')).toBe(CONNECTIONS - MAX_PARKED);
    // The kept ones wait for their clients: one comes back with its key and holds with its token.
    const parked = probes.map((_, i) => i).filter((i) => d.engine.lock(`park-${i}`)?.holder?.owner.awaitingResume === true);
    expect(parked).toHaveLength(MAX_PARKED);
    const kept = parked[0] as number;
    const dropped = probes.findIndex((_, i) => d.engine.lock(`park-${i}`) === undefined);
    const back = await LineClient.open(port, '127.0.0.1', { timeoutMs: 3_000 });
    teardown.push(() => back.close());
    back.send(`RESUME park-${kept} ${keyOf(kept)}`);
    expect(await back.next()).toBe(probes[kept]?.line);
    // One not kept is gone: its RESUME is unknown, and its lock is free for anyone.
    const late = await LineClient.open(port, '127.0.0.1', { timeoutMs: 3_000 });
    teardown.push(() => late.close());
    late.send(`RESUME park-${dropped} ${keyOf(dropped)}`);
    expect((await late.closedWith())[0]).toMatch(/^ERROR 0x09 /);
    // The other 49 end at --max-park, not in 31,700 years: only the resumed claim still holds.
    await eventually(() => d.engine.heldCount === 1, MAX_PARK_MS + 3_000, 'one lock held after --max-park');
    expect(performance.now() - resetAt).toBeGreaterThanOrEqual(MAX_PARK_MS - 50);
    expect(d.engine.detachedCount).toBe(0);
    expect(await metric(d, 'baton_claims_between_connections')).toBe(0);
    expect(d.engine.lock(`park-${kept}`)?.holder?.owner.awaitingResume).toBeUndefined();
    // A client that comes back after --max-park finds its claim over.
    const expired = parked[1] as number;
    const after = await LineClient.open(port, '127.0.0.1', { timeoutMs: 3_000 });
    teardown.push(() => after.close());
    after.send(`RESUME park-${expired} ${keyOf(expired)}`);
    expect((await after.closedWith())[0]).toMatch(/^ERROR 0x09 /);
  }, 20_000);
});
