// The console's modules are loaded at start-up, before the lock ports open (server/http/console-warm-up.ts):
// a first page view must not stall the lock path while Next loads them. What a test can check
// without timing anything: every warm-up path was answered over HTTP before the node served,
// with reads only (nothing in the audit log).
import { expect, test } from '@playwright/test';
import { ADMIN_TOKEN, startBaton } from './fixtures/baton-server.ts';
import { WARM_UP_PATHS } from '../server/http/console-warm-up.ts';

test('every console route is loaded before the lock ports open, by reads that leave no audit line', async () => {
  const { server, stop } = await startBaton(['--log-level', 'debug']);
  try {
    // The log comes through a pipe of its own, possibly after the stdout line that started us.
    await expect.poll(() => server.log().includes('"msg":"baton serving"')).toBe(true);
    const entries = server
      .log()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; warmed?: Array<{ path: string; outcome: number | string }> });
    const warmIndex = entries.findIndex((e) => e.msg === 'console warmed up');
    const servingIndex = entries.findIndex((e) => e.msg === 'baton serving');
    expect(warmIndex).toBeGreaterThanOrEqual(0);
    expect(servingIndex).toBeGreaterThan(warmIndex);
    const warmed = entries[warmIndex]?.warmed ?? [];
    expect(warmed.map((w) => w.path)).toEqual([...WARM_UP_PATHS]);
    // Each got an HTTP answer (a 404 for the made-up lock name and a 503 from /readyz while starting are answers too).
    for (const w of warmed) expect(typeof w.outcome, `${w.path}: ${w.outcome}`).toBe('number');
    expect(warmed.find((w) => w.path === '/readyz')?.outcome).toBe(503);
    expect(warmed.find((w) => w.path === '/')?.outcome).toBe(200);
    const signIn = await fetch(`${server.baseURL}/api/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')?.split(';')[0] ?? '';
    const audit = (await (await fetch(`${server.baseURL}/api/v1/audit?limit=50`, { headers: { cookie } })).json()) as { entries: Array<{ action: string }> };
    expect(audit.entries.filter((e) => e.action !== 'sign-in')).toEqual([]);
  } finally {
    await stop();
  }
});
