// Endpoint health against a real three-member etcd on loopback (server/testing/etcd-cluster.ts),
// and its call discipline (one call at a time per endpoint, each with a deadline) with a client
// that answers when the test says.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { EndpointHealth, type EndpointHealthOptions, MAX_ERROR_CHARS, type StatusClient } from './endpoint-health.ts';

const now = () => performance.now();

function started(o: EndpointHealthOptions): EndpointHealth {
  const health = new EndpointHealth(o);
  onTestFinished(() => health.stop());
  health.start();
  return health;
}

const byEndpoint = (health: EndpointHealth, endpoint: string) => health.view().find((e) => e.endpoint === endpoint);

describe('etcd endpoint health on a real cluster', () => {
  it('shows every member healthy; a killed member turns unhealthy with its error, and healthy again once restarted', async () => {
    const cluster = await EtcdCluster.start();
    const health = started({ endpoints: cluster.endpoints, now, everyMs: 200, timeoutMs: 500 });
    expect(health.view().map((e) => e.endpoint)).toEqual(cluster.endpoints);
    await vi.waitFor(() => expect(health.view().every((e) => e.healthy && e.lastError === null && e.checkedAgoMs !== null)).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });

    const dead = cluster.member(1).clientUrl;
    await cluster.kill9(1);
    await vi.waitFor(
      () => {
        const e = byEndpoint(health, dead);
        expect(e?.healthy).toBe(false);
        expect(e?.lastError).toMatch(/\S/);
      },
      { timeout: 10_000, interval: 50 },
    );
    // The two others still answer, and still have a leader (two of three is a quorum).
    for (const i of [0, 2]) expect(byEndpoint(health, cluster.member(i).clientUrl)?.healthy).toBe(true);

    cluster.restart(1);
    await vi.waitFor(() => expect(byEndpoint(health, dead)).toMatchObject({ healthy: true, lastError: null }), { timeout: 20_000, interval: 50 });
  });

  it('a member that answers without quorum is unhealthy, and says so', async () => {
    const cluster = await EtcdCluster.start();
    const health = started({ endpoints: cluster.endpoints, now, everyMs: 200, timeoutMs: 500 });
    await vi.waitFor(() => expect(health.view().every((e) => e.healthy)).toBe(true), { timeout: 10_000, interval: 50 });
    await cluster.kill9(0);
    await cluster.kill9(1);
    const last = cluster.member(2).clientUrl;
    await vi.waitFor(() => expect(byEndpoint(health, last)).toMatchObject({ healthy: false, lastError: expect.stringContaining('no raft leader') }), {
      timeout: 15_000,
      interval: 50,
    });
    cluster.restart(0);
    await vi.waitFor(() => expect(byEndpoint(health, last)).toMatchObject({ healthy: true, lastError: null }), { timeout: 20_000, interval: 50 });
  });

  it('stop() ends the probes and closes the clients; calling it twice is fine', async () => {
    const cluster = await EtcdCluster.start();
    const health = started({ endpoints: cluster.endpoints, now, everyMs: 100, timeoutMs: 500 });
    await vi.waitFor(() => expect(health.view().every((e) => e.healthy)).toBe(true), { timeout: 10_000, interval: 50 });
    await Promise.all([health.stop(), health.stop()]);
    const ages = health.view(0).map((e) => e.checkedAgoMs);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // No call ended after stop(): the last check times are what they were.
    expect(health.view(0).map((e) => e.checkedAgoMs)).toEqual(ages);
  });
});

/** A client whose status calls stay open until the test answers them, or their deadline passes (as a real client's do). */
function heldClient() {
  const pending: { deadline: number; answer: (leader: string) => void; fail: (err: Error) => void }[] = [];
  let open = 0;
  let most = 0;
  let closed = false;
  const client: StatusClient = {
    maintenance: {
      status: ({ deadline }) => {
        open++;
        most = Math.max(most, open);
        return new Promise((resolve, reject) => {
          let settled = false;
          const settle = (then: () => void) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            open--;
            then();
          };
          const answer = (leader: string) => settle(() => resolve({ leader }));
          const fail = (err: Error) => settle(() => reject(err));
          const timer = setTimeout(() => fail(new Error('deadline exceeded')), Math.max(0, deadline - Date.now()));
          pending.push({ deadline, answer, fail });
        });
      },
    },
    close: () => {
      closed = true;
    },
  };
  return { client, pending, most: () => most, closed: () => closed };
}

describe('etcd endpoint health: the calls', () => {
  it('never has two calls open on one endpoint, and gives each a deadline of timeoutMs', async () => {
    const held = heldClient();
    const sentAt = Date.now();
    const health = started({ endpoints: ['http://a'], now, everyMs: 10, timeoutMs: 300, client: () => held.client });
    expect(health.view()).toEqual([{ endpoint: 'http://a', healthy: false, lastError: null, checkedAgoMs: null }]);
    expect(held.pending).toHaveLength(1);
    expect(held.pending[0]?.deadline).toBeGreaterThanOrEqual(sentAt + 300);
    expect(held.pending[0]?.deadline).toBeLessThanOrEqual(Date.now() + 300);
    // Far more than everyMs passes with the call still open: no second call starts.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(held.pending).toHaveLength(1);
    held.pending[0]?.answer('42');
    await vi.waitFor(() => expect(held.pending).toHaveLength(2), { timeout: 5_000, interval: 5 });
    expect(byEndpoint(health, 'http://a')).toMatchObject({ healthy: true, lastError: null });
    held.pending[1]?.fail(new Error('x'.repeat(1_000)));
    await vi.waitFor(() => expect(byEndpoint(health, 'http://a')?.healthy).toBe(false), { timeout: 5_000, interval: 5 });
    expect(byEndpoint(health, 'http://a')?.lastError).toHaveLength(MAX_ERROR_CHARS);
    // grpc-js's empty trailer is left out.
    await vi.waitFor(() => expect(held.pending).toHaveLength(3), { timeout: 5_000, interval: 5 });
    held.pending[2]?.fail(new Error('14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: '));
    await vi.waitFor(
      () =>
        expect(byEndpoint(health, 'http://a')?.lastError).toBe(
          '14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1.',
        ),
      { timeout: 5_000, interval: 5 },
    );
    expect(held.most()).toBe(1);
  });

  it('stop() waits for the call under way before it closes the client', async () => {
    const held = heldClient();
    const health = started({ endpoints: ['http://a'], now, client: () => held.client });
    let stopped = false;
    const stopping = health.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    expect(held.closed()).toBe(false);
    held.pending[0]?.answer('1');
    await stopping;
    expect(held.closed()).toBe(true);
    expect(held.pending).toHaveLength(1);
  });

  it('probes an endpoint listed twice once', () => {
    const made: string[] = [];
    const health = new EndpointHealth({
      endpoints: ['http://a', 'http://b', 'http://a'],
      now,
      client: (e) => {
        made.push(e);
        return heldClient().client;
      },
    });
    expect(made).toEqual(['http://a', 'http://b']);
    expect(health.view().map((e) => e.endpoint)).toEqual(['http://a', 'http://b']);
  });
});
