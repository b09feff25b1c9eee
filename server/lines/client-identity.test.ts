// The client identity on both protocols against the real daemon, over real sockets: keyed
// `I <identity>`, session `CLIENT <identity>`, what the ops API then shows, the errors for a bad
// one, and that a client that never sends one sees exactly the seed protocol's bytes.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Daemon } from '../daemon/daemon.ts';
import { ERRORS } from '../../lib/errors.ts';
import { BAD_IDENTITY, CLIENT_TOO_LATE } from '../../lib/protocol/session-codec.ts';
import type { LockDetail } from '../../lib/ops-api/api-types.ts';
import type { ClientHeldView, ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import { LineClient, eventually } from '../testing/line-client.ts';
import { daemonKit } from '../testing/daemon-kit.ts';

const kit = daemonKit();
const { daemon } = kit;

async function open(port: number): Promise<LineClient> {
  const c = await LineClient.open(port);
  kit.defer(() => c.socket.destroy());
  return c;
}

async function detail(d: Daemon, name: string): Promise<LockDetail> {
  const response = await fetch(`http://127.0.0.1:${d.httpAddress.port}/api/v1/locks/${encodeURIComponent(name)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as LockDetail;
}

const localAddress = (c: LineClient): string => `127.0.0.1:${c.socket.localPort}`;

describe('client identity, keyed protocol', () => {
  it('answers I OK and names the holder and the waiters of later requests in the lock detail', async () => {
    const d = await daemon();
    const holder = await open(d.lockAddress.port);
    holder.send('I worker-7@host-3 pid 4121', 'A jobs/x 5 0');
    expect(await holder.next()).toBe('I OK');
    expect(await holder.next()).toMatch(/^A jobs\/x \d+$/);
    const waiter = await open(d.lockAddress.port);
    waiter.send('I 漢字 worker é', 'A jobs/x 5 0');
    expect(await waiter.next()).toBe('I OK');
    await eventually(() => d.engine.waiterCount === 1, 3_000, 'the waiter to queue');
    const lock = await detail(d, 'jobs/x');
    expect([lock.holder?.clientName, lock.holder?.client]).toEqual(['worker-7@host-3 pid 4121', localAddress(holder)]);
    expect([lock.queue[0]?.clientName, lock.queue[0]?.client]).toEqual(['漢字 worker é', localAddress(waiter)]);
  });

  it('answers a bad identity with E I ? bad-identity and keeps the connection, its claims unnamed', async () => {
    const d = await daemon();
    const c = await open(d.lockAddress.port);
    c.send('I  leading space', 'I tab\there', 'A k 5 0');
    const message = ERRORS['bad-identity'].message;
    expect(await c.take(3)).toEqual([`E I ? bad-identity ${message}`, `E I ? bad-identity ${message}`, expect.stringMatching(/^A k \d+$/)]);
    expect((await detail(d, 'k')).holder?.clientName).toBeNull();
  });

  it('gives a client that never sends I exactly the seed replies, and shows no identity', async () => {
    const d = await daemon();
    const c = await open(d.lockAddress.port);
    c.send('A seed 5 0');
    const grant = await c.next();
    expect(grant).toMatch(/^A seed \d+$/);
    const lock = await detail(d, 'seed');
    expect([lock.holder?.clientName, lock.holder?.client]).toEqual([null, localAddress(c)]);
    c.send(`R seed ${grant.split(' ')[2]}`);
    expect(await c.next()).toBe('R seed OK');
    expect(c.lines).toEqual([]);
  });

  it('names only the requests after the I line; a second I renames the ones after it', async () => {
    const d = await daemon();
    const c = await open(d.lockAddress.port);
    c.send('A before 5 0', 'I first', 'A middle 5 0', 'I second', 'A after 5 0');
    await c.take(5);
    const names = await Promise.all(['before', 'middle', 'after'].map(async (n) => (await detail(d, n)).holder?.clientName));
    expect(names).toEqual([null, 'first', 'second']);
  });
});

describe('client identity, session protocol', () => {
  it('takes CLIENT before ACQUIRE, in one write, with no answer of its own, and shows it', async () => {
    const d = await daemon();
    const c = await open(d.sessionAddress.port);
    c.send('CLIENT job runner 1', 'ACQUIRE s/x 5000');
    expect(await c.next()).toMatch(/^ACQUIRED \d+$/);
    const waiter = await open(d.sessionAddress.port);
    waiter.send('CLIENT job runner 2', 'ACQUIRE s/x 5000');
    expect(await waiter.next()).toBe('WAITING 1');
    const lock = await detail(d, 's/x');
    expect([lock.holder?.clientName, lock.holder?.client, lock.holder?.protocol]).toEqual(['job runner 1', localAddress(c), 'session']);
    expect(lock.queue.map((w) => w.clientName)).toEqual(['job runner 2']);
    expect(c.lines).toEqual([]);
  });

  it('ends a session whose CLIENT line is bad, or comes after its ACQUIRE, with ERROR 0x02', async () => {
    const d = await daemon();
    const bad = await open(d.sessionAddress.port);
    bad.send('CLIENT trailing ', 'ACQUIRE s 5000');
    expect(await bad.closedWith()).toEqual([`ERROR 0x02 protocol error: ${BAD_IDENTITY}`]);
    const late = await open(d.sessionAddress.port);
    late.send('ACQUIRE s2 5000');
    expect(await late.next()).toMatch(/^ACQUIRED \d+$/);
    late.send('CLIENT too late');
    expect(await late.closedWith()).toEqual([`ERROR 0x02 protocol error: ${CLIENT_TOO_LATE}`]);
    expect(d.engine.lockCount).toBe(0);
  });

  it('ends a session that sends CLIENT twice before its ACQUIRE', async () => {
    const d = await daemon();
    const twice = await open(d.sessionAddress.port);
    twice.send('CLIENT one', 'CLIENT two', 'ACQUIRE s 5000');
    expect(await twice.closedWith()).toEqual([`ERROR 0x02 protocol error: ${CLIENT_TOO_LATE}`]);
    expect(d.engine.lockCount).toBe(0);
  });

  it('keeps the identity a resumed claim was made with, whatever CLIENT its RESUME connection sent', async () => {
    const d = await daemon();
    const key = '00112233445566778899aabbccddeeff';
    const socket = connect({ host: '127.0.0.1', port: d.sessionAddress.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`CLIENT first name\nACQUIRE r/id 5000 ${key}\n`);
    const line = await new Promise<string>((resolve) => socket.once('data', (b: Buffer) => resolve(b.toString().trimEnd())));
    socket.resetAndDestroy();
    await eventually(() => d.engine.lock('r/id')?.holder?.owner.awaitingResume === true, 3_000, 'the claim to be kept for RESUME');
    const back = await open(d.sessionAddress.port);
    back.send('CLIENT second name', `RESUME r/id ${key}`);
    expect(await back.next()).toBe(line);
    const holder = (await detail(d, 'r/id')).holder;
    expect([holder?.clientName, holder?.reconnecting]).toEqual(['first name', undefined]);
  });

  it('shows no identity for a session that sends none', async () => {
    const d = await daemon();
    const c = await open(d.sessionAddress.port);
    c.send('ACQUIRE seed 5000');
    expect(await c.next()).toMatch(/^ACQUIRED \d+$/);
    expect((await detail(d, 'seed')).holder?.clientName).toBeNull();
  });
});

describe('bulk release by client, over HTTP on the daemon', () => {
  it('lists 300 locks of one keyed client and releases them with one request of over 16 KiB', async () => {
    const d = await daemon();
    const c = await open(d.lockAddress.port);
    const names = Array.from({ length: 300 }, (_, i) => `stuck/${String(i).padStart(3, '0')}`);
    c.send('I dead worker pid 1', ...names.map((n) => `A ${n} 3600 0`));
    await c.take(301);
    const base = `http://127.0.0.1:${d.httpAddress.port}/api/v1/clients`;
    const held = (await (await fetch(`${base}/held?identity=${encodeURIComponent('dead worker pid 1')}&limit=1000`)).json()) as ClientHeldView;
    expect(held.held.map((h) => h.name)).toEqual(names);
    // Padded with tokens nobody holds: the route takes up to 10,000 (512 KiB), not the usual 16 KiB.
    const tokens = [...held.held.map((h) => h.token), ...Array.from({ length: 5_000 }, (_, i) => String(900_000_000_000 + i))];
    const response = await fetch(`${base}/force-release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.adminToken}` },
      body: JSON.stringify({ identity: 'dead worker pid 1', tokens }),
    });
    expect(response.status).toBe(200);
    const result = (await response.json()) as ClientReleaseResult;
    expect([result.released.length, result.stale.length]).toEqual([300, 5_000]);
    expect(d.engine.lockCount).toBe(0);
    // Past 512 KiB the server answers 413 before the handler runs.
    const huge = await fetch(`${base}/force-release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.adminToken}` },
      body: JSON.stringify({ identity: 'x', tokens: ['1'], pad: 'x'.repeat(600 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: 'body-too-large', message: expect.stringContaining(String(512 * 1024)) } });
  });
});
