// The series the alert rules read (ops/prometheus/baton-alerts.yml), on a real daemon's /metrics
// over real sockets: queue wait and hold histograms, the oldest hold, tokens left, throttled
// sign-ins; and the whole page stays promtool-clean with them.
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN } from '../../lib/tokens/token-source.ts';
import type { Daemon } from '../daemon/daemon.ts';
import { waitFor } from '../testing/cluster-harness.ts';
import { promtoolCheckMetrics } from '../testing/promtool.ts';
import { sample } from '../testing/metrics-text.ts';
import { daemonKit } from '../testing/daemon-kit.ts';

const kit = daemonKit();
const { daemon, client } = kit;

async function scrape(d: Daemon): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${d.httpAddress.port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the alert inputs on a real daemon', () => {
  it('times a queued wait and each hold, by protocol, and shows the oldest hold while it lasts', async () => {
    const d = await daemon();
    const first = await client(d.lockAddress.port);
    const second = await client(d.lockAddress.port);
    first.send('A job 30 0');
    const token = BigInt((await first.next()).split(' ')[2] as string);
    second.send('A job 30 0');
    await pause(120);
    const during = await scrape(d);
    // Granted at once: no wait counted yet, nothing ended; the hold is at least 120 ms old.
    expect(sample(during, 'baton_queue_wait_seconds_count{protocol="keyed"}')).toBe(0);
    expect(sample(during, 'baton_hold_seconds_count{protocol="keyed"}')).toBe(0);
    expect(sample(during, 'baton_oldest_hold_seconds')).toBeGreaterThanOrEqual(0.12);
    expect(sample(during, 'baton_oldest_hold_seconds')).toBeLessThan(30);

    first.send(`R job ${token}`);
    expect(await first.next()).toBe('R job OK');
    const next = BigInt((await second.next()).split(' ')[2] as string);
    second.send(`R job ${next}`);
    expect(await second.next()).toBe('R job OK');
    const after = await scrape(d);
    // One grant queued (about 120 ms, so not in the 0.1 s bucket but in the 0.25 s one).
    expect(sample(after, 'baton_queue_wait_seconds_count{protocol="keyed"}')).toBe(1);
    expect(sample(after, 'baton_queue_wait_seconds_bucket{le="0.1",protocol="keyed"}')).toBe(0);
    expect(sample(after, 'baton_queue_wait_seconds_bucket{le="+Inf",protocol="keyed"}')).toBe(1);
    expect(sample(after, 'baton_queue_wait_seconds_sum{protocol="keyed"}')).toBeGreaterThanOrEqual(0.12);
    expect(sample(after, 'baton_queue_wait_seconds_count{protocol="session"}')).toBe(0);
    // Two holds ended: the first about 120 ms, the second short.
    expect(sample(after, 'baton_hold_seconds_count{protocol="keyed"}')).toBe(2);
    expect(sample(after, 'baton_hold_seconds_bucket{le="0.1",protocol="keyed"}')).toBe(1);
    expect(sample(after, 'baton_oldest_hold_seconds')).toBe(0);
  });

  it('counts a session hold that ends with its connection', async () => {
    const d = await daemon();
    const session = await client(d.sessionAddress.port);
    session.send('ACQUIRE s 5000');
    expect((await session.next()).startsWith('ACQUIRED ')).toBe(true);
    await session.close();
    // The server sees the close a moment later.
    await waitFor(async () => sample(await scrape(d), 'baton_hold_seconds_count{protocol="session"}') === 1, { what: 'the session hold to be counted' });
  });

  it('shows the tokens left: all of u64 above the high water mark on a single daemon', async () => {
    const d = await daemon();
    const c = await client(d.lockAddress.port);
    for (let i = 0; i < 3; i++) {
      c.send(`A t${i} 30 0`);
      await c.next();
    }
    const text = await scrape(d);
    const highWater = sample(text, 'baton_token_high_water') as number;
    expect(highWater).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'baton_tokens_remaining')).toBe(Number(MAX_TOKEN - BigInt(highWater)));
  });

  it('counts console sign-ins answered 429, and only those', async () => {
    const d = await daemon();
    const signIn = () =>
      fetch(`http://127.0.0.1:${d.httpAddress.port}/api/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'wrong-token' }),
      });
    for (let i = 0; i < 10; i++) expect((await signIn()).status).toBe(401);
    expect(sample(await scrape(d), 'baton_console_sign_ins_throttled_total')).toBe(0);
    expect((await signIn()).status).toBe(429);
    expect((await signIn()).status).toBe(429);
    expect(sample(await scrape(d), 'baton_console_sign_ins_throttled_total')).toBe(2);
  });

  it('serves all of it promtool-clean, with no cluster-only series on a single daemon', async () => {
    const d = await daemon();
    const c = await client(d.lockAddress.port);
    c.send('A p 30 0');
    await c.next();
    const text = await scrape(d);
    for (const name of ['baton_queue_wait_seconds_bucket', 'baton_hold_seconds_bucket', 'baton_oldest_hold_seconds', 'baton_tokens_remaining']) {
      expect(text).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    expect(text).toMatch(/^baton_console_sign_ins_throttled_total 0$/m);
    expect(text).not.toMatch(/^baton_(node_priority|peer_in_sync|peer_auth_refused_total)/m);
    const { code, output } = await promtoolCheckMetrics(text);
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
