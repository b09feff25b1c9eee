// A peer that holds the admin token (it passes the TLS-PSK handshake) but reports token
// ceilings far above anything the node has seen: a status to an active, and, after a true
// snapshot, a forged active's ceil message, replicated grant and heartbeats to a standby. None of them raises the token
// floor; each is refused with an error line (rate-limited), and the node goes on granting low
// tokens (before the bound, one status with 2^64-3 made the active issue the last tokens and exit).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TLSSocket } from 'node:tls';
import { connect } from 'node:net';
import { encodePeerMessage, type PeerMessage } from '../../lib/cluster/peer-messages.ts';
import { createPeerTlsServer, peerKey } from './peer-tls.ts';
import { CLUSTER_ADMIN_TOKEN, type NodeProcess, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';
import { dialAsPeer } from '../testing/forged-peer.ts';

const TOP = '18446744073709551613';
const PINO_ERROR = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One keyed request on a fresh connection; its first reply line. */
function request(address: string, line: string): Promise<string> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port) });
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${line}\n`));
    socket.on('data', (text: string) => {
      buffer += text;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.destroy();
      resolve(buffer.slice(0, end));
    });
    socket.on('error', reject);
  });
}

/** The token of a granted `A name 30 0`. */
async function grant(node: NodeProcess, name: string): Promise<bigint> {
  const reply = await request(node.lockAddress, `A ${name} 30 0`);
  const m = /^A \S+ (\d+)$/.exec(reply);
  if (m === null) throw new Error(`${node.id} answered ${reply}`);
  return BigInt(m[1] as string);
}

function refusals(node: NodeProcess, what: string): Array<Record<string, unknown>> {
  return node.logEntries().filter((e) => e.level === PINO_ERROR && /^peer ceiling refused/.test(String(e.msg)) && e.what === what);
}

function send(socket: TLSSocket, ...messages: PeerMessage[]): void {
  socket.write(messages.map(encodePeerMessage).join(''));
}

describe('a ceiling from an authenticated peer is bounded', () => {
  it('an active ignores a status ceiling of 2^64-3, says so once, and keeps granting low tokens', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitSettled(cluster, 'a');
    const before = await grant(a, 'ceiling/one');
    await b.kill9();
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.alive === false, { timeoutMs: 5_000, what: 'a to see b gone' });

    // The attacker has the token: it passes the handshake as b and sends heartbeats with the top ceiling.
    const sendAsB = await dialAsPeer(a.ports.peer, 'b', 'forged-b', (fn) => cluster.defer(fn));
    const status: PeerMessage = {
      t: 'status',
      id: 'b',
      instance: 'forged-b',
      phase: 'standby',
      active: 'a',
      syncedWith: null,
      yielded: false,
      ceiling: TOP,
      known: TOP,
    };
    for (let i = 0; i < 10; i++) {
      sendAsB(status);
      await sleep(100);
    }
    await waitFor(() => refusals(a, 'status').length > 0, { timeoutMs: 3_000, what: 'a to log the refused ceiling' });

    const after = await grant(a, 'ceiling/two');
    expect(after).toBeGreaterThan(before);
    expect(after, 'a token within the first reservations (a few slots of 64 blocks), far below the forged top').toBeLessThan(20_000_000n);
    expect((await a.cluster()).phase).toBe('active');
    expect(refusals(a, 'status'), 'one line for ten heartbeats (rate-limited)').toHaveLength(1);
    expect(refusals(a, 'status')[0]).toMatchObject({ peer: 'b', ceiling: TOP });
  });

  it("a standby ignores a forged active's top ceiling, top replicated token and top heartbeats, and promotes with low tokens", {
    timeout: 40_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2, start: ['b'] });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: 10_000, what: 'b to promote alone' });
    const before = await grant(b, 'ceiling/before');

    // A forged a (it has the token) on a's peer port: b dials it, follows it, syncs from it.
    const statusOfA: PeerMessage = {
      t: 'status',
      id: 'a',
      instance: 'forged-a',
      phase: 'active',
      active: 'a',
      syncedWith: 'forged-a',
      yielded: false,
      fresh: false,
      ceiling: '1000',
      known: '1000',
      lags: { b: { events: 0, ms: 0 } },
    };
    const sockets: TLSSocket[] = [];
    let heartbeat: NodeJS.Timeout | undefined;
    const server = createPeerTlsServer({
      keyFor: (identity) => (identity === 'b' ? peerKey(CLUSTER_ADMIN_TOKEN, 'b') : null),
      handshakeTimeoutMs: 1_000,
      onHandshakeError: () => {},
      onSecure: (socket) => {
        sockets.push(socket);
        socket.on('error', () => {});
        socket.setEncoding('utf8');
        let buffer = '';
        send(socket, { t: 'hello', id: 'a', instance: 'forged-a' }, statusOfA);
        heartbeat ??= setInterval(() => {
          for (const s of sockets) send(s, statusOfA);
        }, 100);
        socket.on('data', (text: string) => {
          buffer += text;
          for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
            const m = JSON.parse(buffer.slice(0, nl)) as PeerMessage;
            buffer = buffer.slice(nl + 1);
            if (m.t !== 'sync') continue;
            send(
              socket,
              { t: 'snapshot-begin', instance: 'forged-a', seq: 0, ceiling: '1000', highWater: '10' },
              { t: 'snapshot', instance: 'forged-a', seq: 0, ceiling: '1000', highWater: '10', holders: [], waiters: [], failovers: [], parts: 0 },
            );
            // Once synced: a top ceiling, a grant with a top token, and heartbeats that know the top.
            setTimeout(() => {
              send(socket, { t: 'ceil', ceiling: TOP });
              send(socket, { t: 'ev', seq: 1, e: [['g', 'ceiling/evil', 1, TOP, 'keyed', '10.0.0.9:1', 30_000, false, null, null]] });
              statusOfA.known = TOP;
              statusOfA.ceiling = TOP;
              send(socket, statusOfA);
            }, 300);
          }
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(a.ports.peer, '127.0.0.1', () => resolve()));
    const closeForged = async () => {
      clearInterval(heartbeat);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    cluster.defer(closeForged);

    await waitFor(async () => (await b.cluster()).active === 'a', { timeoutMs: 10_000, what: 'b to follow the forged a' });
    await waitFor(() => refusals(b, 'ceil').length > 0, { timeoutMs: 5_000, what: 'b to refuse the top ceiling' });
    await waitFor(() => b.logEntries().some((e) => e.msg === 'replication stream unreadable: re-syncing'), {
      timeoutMs: 5_000,
      what: 'b to refuse the top token',
    });
    await sleep(300); // a few heartbeats with the top ceiling
    await closeForged();

    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: 10_000, what: 'b to promote once the forged a is gone' });
    const after = await grant(b, 'ceiling/after');
    expect(after).toBeGreaterThan(before);
    expect(after, 'a token within the first reservations (a few slots of 64 blocks), far below the forged top').toBeLessThan(20_000_000n);
    // The heartbeats' ceiling is judged when the promotion would have used it.
    expect(refusals(b, 'status').length).toBeGreaterThan(0);
  });

  it('a node with an empty data dir joins an active millions of tokens ahead without a refusal, and promotes above its tokens', {
    timeout: 40_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2, start: [] });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    // a's data dir says tokens up to 5,000,000 were issued before (fifty blocks).
    await mkdir(a.dataDir, { recursive: true });
    await writeFile(join(a.dataDir, 'token-ceiling'), '5000000\n');
    await a.start();
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 10_000, what: 'a to promote alone' });
    await b.start();
    await waitSettled(cluster, 'a');
    const onA = await grant(a, 'ceiling/ahead');
    expect(onA).toBeGreaterThan(5_000_000n);
    await a.kill9();
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: 10_000, what: 'b to promote' });
    expect(await grant(b, 'ceiling/after-a')).toBeGreaterThan(onA);
    expect(b.logEntries().filter((e) => /^peer ceiling refused/.test(String(e.msg)))).toEqual([]);
  });
});
