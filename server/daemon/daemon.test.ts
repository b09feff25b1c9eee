import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { Server as NetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from './daemon.ts';
import { type DaemonFacade, getDaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { forceRelease } from '../api-handlers/lock-actions.ts';
import { LineClient } from '../testing/line-client.ts';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-daemon-test-'));
  teardown.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function daemon(dataDir: string | null = null, drainMs = 0): Promise<Daemon> {
  const d = await startDaemon({ host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir, drainMs });
  teardown.push(() => d.shutdown());
  return d;
}

async function client(port: number): Promise<LineClient> {
  const c = await LineClient.open(port);
  teardown.push(() => c.close());
  return c;
}

const url = (d: Daemon, path: string) => `http://127.0.0.1:${d.httpAddress.port}${path}`;

describe('daemon', () => {
  it('serves one lock table to both protocols: a session waits behind a keyed holder', async () => {
    const d = await daemon();
    const keyed = await client(d.lockAddress.port);
    keyed.send('A shared 30 0');
    const keyedToken = BigInt((await keyed.next()).split(' ')[2] as string);
    const session = await client(d.sessionAddress.port);
    session.send('ACQUIRE shared 5000');
    expect(await session.next()).toBe('WAITING 1');
    keyed.send(`R shared ${keyedToken}`);
    expect(await keyed.next()).toBe('R shared OK');
    expect(await session.next()).toBe(`ACQUIRED ${keyedToken + 1n}`);
  });

  it('reports its instance id on /healthz and registers the same id on globalThis', async () => {
    const d = await daemon();
    const res = await fetch(url(d, '/healthz'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; instanceId: string };
    expect(body.status).toBe('ok');
    expect(body.instanceId).toBe(d.instanceId);
    expect(getDaemonFacade()?.instanceId).toBe(d.instanceId);
  });

  it('exposes lock counters on /metrics', async () => {
    const d = await daemon();
    const c = await client(d.lockAddress.port);
    c.send('A m 30 0');
    await c.next();
    const text = await (await fetch(url(d, '/metrics'))).text();
    expect(text).toMatch(/^baton_grants_total\{protocol="keyed"\} 1$/m);
    expect(text).toMatch(/^baton_locks_held\{protocol="keyed"\} 1$/m);
    expect(text).toMatch(/^baton_connections\{protocol="keyed"\} 1$/m);
  });

  it('refuses a foreign Host header on a loopback bind (DNS rebinding) with a JSON 403', async () => {
    const d = await daemon();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: d.httpAddress.port, path: '/metrics', headers: { host: 'rebound.example:3000' } }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (t: string) => (body += t))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'forbidden' } });
    expect((await fetch(url(d, '/metrics'))).status).toBe(200);
  });

  it('writes an admin action made through the facade to <data-dir>/audit.log, and hands the lock on', async () => {
    const dir = tempDir();
    const d = await daemon(dir);
    const facade = getDaemonFacade();
    expect(facade?.instanceId).toBe(d.instanceId);
    const holder = await client(d.lockAddress.port);
    holder.send('A audited 30 0');
    const token = (await holder.next()).split(' ')[2] as string;
    const req = new Request('http://127.0.0.1/api/v1/locks/audited/force-release', {
      method: 'POST',
      headers: { authorization: `Bearer ${d.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    const res = await forceRelease(req, facade as DaemonFacade, { name: 'audited' });
    expect(res.status).toBe(200);
    expect(d.engine.lock('audited')).toBeUndefined();
    await d.shutdown(); // closes the audit log: every line is on disk
    const lines = readFileSync(join(dir, 'audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toMatchObject([{ who: 'bearer:admin', action: 'force-release', target: 'audited', result: 'ok' }]);
  });

  it('without the console, still keeps /metrics behind the read token and /healthz open', async () => {
    const d = await startDaemon({ host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir: null, drainMs: 0, readToken: 'read-token-0123456789' });
    teardown.push(() => d.shutdown());
    const refused = await fetch(url(d, '/metrics'));
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: 'unauthorized' } });
    const allowed = await fetch(url(d, '/metrics'), { headers: { authorization: 'Bearer read-token-0123456789' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('baton_locks_held');
    expect((await fetch(url(d, '/healthz'))).status).toBe(200);
  });

  it('answers unknown paths with a JSON 404', async () => {
    const d = await daemon();
    const res = await fetch(url(d, '/nope'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not-found', message: 'not found: /nope' } });
  });

  it('answers other methods with a JSON 405', async () => {
    const d = await daemon();
    const res = await fetch(url(d, '/healthz'), { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await res.json()).toEqual({ error: { code: 'method-not-allowed', message: 'method not allowed: POST /healthz; allowed: GET, HEAD, OPTIONS' } });
  });

  it('refuses a second daemon on the same data dir, and allows it after the first stopped', async () => {
    const dir = tempDir();
    const first = await daemon(dir);
    await expect(startDaemon({ host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir: dir })).rejects.toThrow(/in use/);
    await first.shutdown();
    const second = await daemon(dir);
    expect(second.state()).toBe('serving');
  });

  it('fails to start on a busy port without leaving listeners or the data dir behind', async () => {
    const dir = tempDir();
    const first = await daemon();
    const busy = first.lockAddress.port;
    await expect(startDaemon({ host: 'localhost', lockPort: busy, sessionPort: 0, httpPort: 0, dataDir: dir })).rejects.toThrow(/EADDRINUSE/);
    // The data dir is free again, and nothing of the failed start is still bound.
    const next = await daemon(dir);
    expect(next.state()).toBe('serving');
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    const listening = handles.filter((h) => h instanceof NetServer && h.listening);
    // first's three listeners and next's three; the data-dir lock is unref'd and not listed as active.
    expect(listening.length).toBe(6);
  });

  it('continues the token sequence above every token issued before a restart', async () => {
    const dir = tempDir();
    const first = await daemon(dir);
    const c = await client(first.lockAddress.port);
    c.send('A t 30 0');
    const before = BigInt((await c.next()).split(' ')[2] as string);
    await first.shutdown();
    const second = await daemon(dir);
    const c2 = await client(second.lockAddress.port);
    c2.send('A t 30 0');
    const after = BigInt((await c2.next()).split(' ')[2] as string);
    expect(after).toBeGreaterThan(before);
  });

  it('drains: goodbyes on both protocols while /healthz says draining, then stops', async () => {
    const d = await daemon(null, 400);
    const keyed = await client(d.lockAddress.port);
    const session = await client(d.sessionAddress.port);
    session.send('ACQUIRE x 5000');
    expect(await session.next()).toMatch(/^ACQUIRED \d+$/);
    const queued = await client(d.sessionAddress.port);
    queued.send('ACQUIRE x 5000');
    expect(await queued.next()).toBe('WAITING 1');
    const grants: string[] = [];
    d.engine.subscribe((e) => {
      if (e.type === 'grant') grants.push(e.lock);
    });
    const stopped = d.shutdown();
    expect(await session.next()).toMatch(/^ERROR 0x01 /);
    // The waiter is told goodbye too, without first being handed the lock its holder let go.
    expect(await queued.next()).toMatch(/^ERROR 0x01 /);
    expect(grants).toEqual([]);
    expect(await keyed.next()).toMatch(/^E - - server-going-away /);
    const health = await fetch(url(d, '/healthz'));
    expect(((await health.json()) as { status: string }).status).toBe('draining');
    expect((await fetch(url(d, '/readyz'))).status).toBe(503);
    await stopped;
    expect(d.engine.lockCount).toBe(0);
    await expect(fetch(url(d, '/healthz'))).rejects.toThrow();
  });
});
