// Graceful shutdown with the console on: the lock ports close first, /healthz (draining) and
// /metrics keep answering through the drain window, then Next closes and the process exits 0.
import { connect } from 'node:net';
import { expect, test } from '@playwright/test';
import { startBaton } from './fixtures/baton-server.ts';
import { sessionClaim } from './fixtures/wire-client.ts';

test('SIGTERM drains: lock ports close, health says draining and metrics answer, then exit 0', async () => {
  const { server, stop, child } = await startBaton(['--drain', '1500ms', '--log-level', 'info']);
  try {
    const holder = await sessionClaim(server.sessionPort, 'drain-me');
    await holder.waitFor(/^ACQUIRED/);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    await holder.waitFor(/^ERROR 0x01/);
    const health = await fetch(`${server.baseURL}/healthz`);
    expect(((await health.json()) as { status: string }).status).toBe('draining');
    expect((await fetch(`${server.baseURL}/readyz`)).status).toBe(503);
    // Next itself is still up in the window: a page-side API route answers too.
    expect((await fetch(`${server.baseURL}/api/v1/stats`)).status).toBe(200);
    const metrics = await fetch(`${server.baseURL}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('baton_locks_held');
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: server.lockPort });
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    expect(await exited).toBe(0);
    // In this order: the lock ports close, the drain window passes, then Next closes. Compared by
    // the log's own timestamps: two lines logged in the same millisecond can reach the pipe in
    // either order once Next has closed (seen under load), which says nothing about the daemon.
    const entries = server
      .log()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; time: number });
    const at = (msg: string) => entries.find((e) => e.msg === msg)?.time ?? Number.NaN;
    expect(at('draining: closing protocol listeners')).toBeGreaterThan(0);
    expect(at('console closed') - at('draining: closing protocol listeners')).toBeGreaterThanOrEqual(1_500);
    expect(at('baton stopped')).toBeGreaterThanOrEqual(at('console closed'));
  } finally {
    await stop();
  }
});
