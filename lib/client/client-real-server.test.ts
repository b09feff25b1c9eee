// The client library against a real `baton serve` process: redirects from a stand-in listener
// to the real node, and the session's silence deadline when the real server freezes (SIGSTOP).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyedClient, SessionClient } from './index.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import { BATON_BIN, serveArgs } from '../../server/testing/serve-args.ts';

interface Served {
  child: ChildProcess;
  lockPort: number;
  sessionPort: number;
}

const teardown: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step();
});
const fakes = fakeLineServers<KeyedClient | SessionClient>();

async function serve(): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-client-real-'));
  const bin = BATON_BIN;
  const child = spawn(process.execPath, [bin, ...serveArgs(dir), '--drain', '0ms', '--log-level', 'silent', '--no-console'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  teardown.push(() => {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`baton serve exited with ${code}`)));
  });
  const port = (name: string) => Number(new RegExp(`${name}=127\\.0\\.0\\.1:(\\d+)`).exec(line)?.[1]);
  return { child, lockPort: port('lock'), sessionPort: port('session') };
}

describe('client library against a real baton serve process', () => {
  it('follows M from a stand-in keyed listener to the real node and holds the lock there', async () => {
    const real = await serve();
    const standIn = await fakes.start({ onConnect: (c) => c.send(`M 127.0.0.1:${real.lockPort}`) });
    const client = fakes.track(new KeyedClient({ addresses: [standIn.address] }));
    const grant = await client.acquire('redirected/keyed', { lease: 5_000, wait: 2_000 });
    expect(grant.token).toBeGreaterThan(0n);
    // The real node holds it: a direct client on the real port cannot have it now.
    const direct = fakes.track(new KeyedClient({ addresses: [`127.0.0.1:${real.lockPort}`] }));
    await expect(direct.acquire('redirected/keyed', { lease: 5_000, wait: 100 })).rejects.toMatchObject({ code: 'lock-timeout' });
    expect(await grant.release()).toBe(true);
    const next = await direct.acquire('redirected/keyed', { lease: 5_000, wait: 2_000 });
    expect(next.token).toBeGreaterThan(grant.token);
  });

  it('follows REDIRECT from a stand-in session listener to the real node', async () => {
    const real = await serve();
    const standIn = await fakes.start({
      onLine: (c, line) => {
        if (line.startsWith('ACQUIRE ')) {
          c.send(`REDIRECT 127.0.0.1:${real.sessionPort}`);
          c.socket.end();
        }
      },
    });
    const client = fakes.track(new SessionClient({ addresses: [standIn.address] }));
    const token = await client.hold('redirected/session', { lease: 2_000 }, ({ token }) => token);
    expect(token).toBeGreaterThan(0n);
    expect(standIn.lines.filter((l) => l.startsWith('ACQUIRE '))).toHaveLength(1);
  });

  it('aborts the work at about 0.8 x lease when the real server stops answering', async () => {
    const real = await serve();
    const client = fakes.track(new SessionClient({ addresses: [`127.0.0.1:${real.sessionPort}`] }));
    const lease = await client.open('frozen/session', { lease: 1_000 });
    // Let a few heartbeats be confirmed, then freeze the server: nothing will confirm ownership again.
    await new Promise((r) => setTimeout(r, 400));
    const frozenAt = performance.now();
    real.child.kill('SIGSTOP');
    const abortedAt = await new Promise<number>((resolve) => {
      if (lease.signal.aborted) resolve(performance.now());
      lease.signal.addEventListener('abort', () => resolve(performance.now()), { once: true });
    });
    // The last confirmation came at most one heartbeat interval (lease/4) before the freeze, and
    // the client gives up 0.8 x lease after the heartbeat that was confirmed: within [800-250, 800] ms
    // of the freeze, plus scheduling slack, and always before the server's own 1000 ms.
    const after = abortedAt - frozenAt;
    expect(after).toBeGreaterThan(450);
    expect(after).toBeLessThan(1_000);
    expect((lease.signal.reason as { code?: string }).code).toBe('lease-expired');
    real.child.kill('SIGCONT');
    await lease.close();
  });
});
