// Peer meshes in one process on real loopback sockets, attacked from a raw socket: what a node
// sends on its own gives a stranger nothing to replay, a recorded handshake replayed is not a
// node, the old plain-text hello (with a valid HMAC) is refused, and a TLS client that proved
// one node's key cannot name itself as another node.
import { createHmac } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import { encodePeerMessage } from '../../lib/cluster/peer-messages.ts';
import { freePorts } from '../testing/free-ports.ts';
import { type MeshPeer, PeerMesh } from './peer-mesh.ts';
import { dialPeerTls, MAX_PENDING_HANDSHAKES, peerKey } from './peer-tls.ts';

const TOKEN = 'peer-mesh-test-admin-token-0123456789abcdef';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const teardown: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

interface TestMesh {
  mesh: PeerMesh;
  /** Ids of the peers whose link came up, in order (one entry per link). */
  ups: string[];
  logs: Array<Record<string, unknown>>;
}

function peer(id: string, peerPort: number): PeerConfig {
  return { id, host: '127.0.0.1', lockPort: 1, sessionPort: 2, peerPort, httpPort: 3 };
}

async function startMesh(selfId: string, peers: PeerConfig[], listenPort: number, adminToken = TOKEN, connectTimeoutMs = 500): Promise<TestMesh> {
  const ups: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const mesh = new PeerMesh({
    selfId,
    selfInstance: `${selfId}-instance`,
    peers,
    listen: { host: '127.0.0.1', port: listenPort },
    adminToken,
    connectTimeoutMs,
    peerTimeoutMs: 1_000,
    now: () => performance.now(),
    logger,
    onMessage: () => {},
    onLinkUp: (p: MeshPeer) => ups.push(p.config.id),
    onLinkDown: () => {},
  });
  await mesh.start();
  teardown.push(() => mesh.stop());
  return { mesh, ups, logs };
}

/** Connects a raw TCP socket, writes `send` (if any), and collects what comes back for `ms`. */
async function raw(port: number, send: Buffer | string | null, ms: number): Promise<{ got: Buffer; closed: boolean }> {
  const socket = connect({ host: '127.0.0.1', port });
  teardown.push(() => void socket.destroy());
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (b: Buffer) => chunks.push(b));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (send !== null && send.length > 0) socket.write(send);
  await sleep(ms);
  return { got: Buffer.concat(chunks), closed };
}

/** `n` connections that send nothing; each reports whether the other side has closed it. */
function silentConnections(port: number, n: number): Array<{ closed: boolean }> {
  return Array.from({ length: n }, () => {
    const socket = connect({ host: '127.0.0.1', port });
    teardown.push(() => void socket.destroy());
    const state = { closed: false };
    socket.on('error', () => {});
    socket.on('close', () => (state.closed = true));
    return state;
  });
}

/** A TCP forwarder to `target` that records what the dialling side sends. */
async function recorder(target: number): Promise<{ port: number; fromDialer: Buffer[] }> {
  const fromDialer: Buffer[] = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: target });
    sockets.push(client, upstream);
    client.on('data', (b: Buffer) => {
      fromDialer.push(b);
      upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => client.write(b));
    for (const [s, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      s.on('error', () => other.destroy());
      s.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  teardown.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as { port: number }).port, fromDialer };
}

describe('peer links cannot be joined by replaying or forging', () => {
  it('a node sends nothing on its own to a new connection, so there is nothing to replay to another node', async () => {
    const [pa, pb, dead] = (await freePorts(3)) as [number, number, number];
    await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    // b cannot reach a (its entry for a points at a closed port), so any link to "a" on b is the attacker's.
    const b = await startMesh('b', [peer('a', dead), peer('b', pb)], pb);
    const captured = await raw(pa, null, 300);
    await raw(pb, captured.got, 500);
    expect(b.ups, 'links b accepted as a').toEqual([]);
    expect(b.mesh.peers.get('a')?.link).toBeNull();
    expect(captured.got.length, 'bytes a sent before the dialler proved anything').toBe(0);
  });

  it('a recorded handshake of a real node, replayed to the peer port, is not a node', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    const a = await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    const tap = await recorder(pa);
    const b = await startMesh('b', [peer('a', tap.port), peer('b', pb)], pb);
    await expect.poll(() => a.ups).toEqual(['b']);
    await sleep(100); // the hello and whatever follows it are recorded too
    await b.mesh.stop();
    await expect.poll(() => a.mesh.peers.get('b')?.link ?? null).toBeNull();
    const recorded = Buffer.concat(tap.fromDialer);
    expect(recorded.length).toBeGreaterThan(0);
    await raw(pa, recorded, 800);
    expect(a.ups, 'links a accepted as b').toEqual(['b']);
    expect(a.mesh.peers.get('b')?.link).toBeNull();
    // Logged as what it is, never as a token mismatch (which would send the operator to rotate
    // tokens), and not a refusal of a node (which would hold back a promotion).
    const messages = a.logs.map((l) => String(l.msg));
    expect(messages.filter((m) => /admin token differs/.test(m))).toEqual([]);
    expect(
      a.logs.some(
        (l) => /^peer link refused: a handshake that could not be completed \(a replayed or broken ClientHello/.test(String(l.msg)) && l.identity === 'b',
      ),
    ).toBe(true);
    expect(a.mesh.refusal).toBeNull();
  });

  it('a plain TCP client sending the old hello, with a valid HMAC of the admin token, is refused and logged', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    const a = await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    const auth = createHmac('sha256', TOKEN).update('baton-peer-v1:b').digest('hex');
    const hello = `${JSON.stringify({ t: 'hello', id: 'b', instance: 'forged', auth })}\n`;
    const reply = await raw(pa, hello, 500);
    expect(reply.closed, 'the connection is closed').toBe(true);
    expect(reply.got.toString('latin1')).not.toContain('"t"');
    expect((await raw(pa, hello, 300)).closed, 'and again').toBe(true);
    expect(a.ups).toEqual([]);
    expect(
      a.logs.filter((l) => l.msg === 'peer link refused: not a TLS-PSK handshake from a node of this cluster'),
      'one warning per address per 10 s',
    ).toHaveLength(1);
  });

  it('a dialler that proved the key of b but names itself c in its hello is refused', async () => {
    const [pa, pb, pc] = (await freePorts(3)) as [number, number, number];
    const a = await startMesh('a', [peer('a', pa), peer('b', pb), peer('c', pc)], pa);
    const socket = dialPeerTls('127.0.0.1', pa, 'b', peerKey(TOKEN, 'b'));
    teardown.push(() => void socket.destroy());
    socket.on('error', () => {});
    socket.resume();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write(encodePeerMessage({ t: 'hello', id: 'c', instance: 'forged' }));
    await closed;
    expect(a.ups).toEqual([]);
    expect(a.logs.some((l) => l.msg === 'peer link refused: not a hello from a node of this cluster' && l.id === 'c')).toBe(true);
  });

  it('a connection that never completes a handshake is closed after the connect timeout', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    expect((await raw(pa, null, 250)).closed, 'still open at half the timeout').toBe(false);
    expect((await raw(pa, null, 1_000)).closed, 'closed after it (500 ms)').toBe(true);
  });

  it(`a flood of silent connections holds at most ${MAX_PENDING_HANDSHAKES} sockets, the oldest closed first, and a node still links`, async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    const peers = [peer('a', pa), peer('b', pb)];
    // A long connect timeout: without the bound every silent socket would stay open for it.
    const a = await startMesh('a', peers, pa, TOKEN, 20_000);
    const flood = silentConnections(pa, MAX_PENDING_HANDSHAKES + 36);
    await expect.poll(() => flood.filter((f) => f.closed).length).toBe(36);
    expect(
      flood.slice(0, 36).every((f) => f.closed),
      'the oldest are the ones closed',
    ).toBe(true);
    // A real node dialling in now evicts one of the silent ones and links.
    await startMesh('b', peers, pb, TOKEN, 20_000);
    await expect.poll(() => a.ups).toEqual(['b']);
    // An established link no longer counts as pending: a second flood cannot evict it. (b's
    // handshake evicted one silent socket; 63 remain, so the second flood closes 64.)
    const link = a.mesh.peers.get('b')?.link ?? null;
    expect(link).not.toBeNull();
    const second = silentConnections(pa, MAX_PENDING_HANDSHAKES + 1);
    await expect.poll(() => flood.filter((f) => f.closed).length + second.filter((f) => f.closed).length).toBe(36 + 1 + MAX_PENDING_HANDSHAKES);
    await sleep(100);
    expect(a.mesh.peers.get('b')?.link).toBe(link);
    expect(a.ups).toEqual(['b']);
  });

  it('the listener has no key for its own id: a dialler naming it, even with the right key, is refused', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    const a = await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    const socket = dialPeerTls('127.0.0.1', pa, 'a', peerKey(TOKEN, 'a'));
    teardown.push(() => void socket.destroy());
    const failed = new Promise<string>((resolve) => {
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      socket.once('secureConnect', () => resolve('connected'));
    });
    expect(await failed).toMatch(/^ERR_SSL_/);
    expect(a.ups).toEqual([]);
  });

  it('links are TLS 1.3 with an AEAD suite', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    await startMesh('a', [peer('a', pa), peer('b', pb)], pa);
    const socket = dialPeerTls('127.0.0.1', pa, 'b', peerKey(TOKEN, 'b'));
    teardown.push(() => void socket.destroy());
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    expect(socket.getProtocol()).toBe('TLSv1.3');
    expect(['TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256']).toContain(socket.getCipher().name);
  });

  it('nodes with different admin tokens never link, and both record the refusal as auth', async () => {
    const [pa, pb] = (await freePorts(2)) as [number, number];
    const peers = [peer('a', pa), peer('b', pb)];
    const a = await startMesh('a', peers, pa);
    const b = await startMesh('b', peers, pb, 'another-admin-token-0123456789abcdef');
    await expect.poll(() => a.mesh.refusal?.reason ?? null).toBe('auth');
    await expect.poll(() => b.mesh.refusal?.reason ?? null).toBe('auth');
    expect([a.ups, b.ups]).toEqual([[], []]);
    expect(a.logs.some((l) => /^peer link refused b: the admin token differs/.test(String(l.msg)))).toBe(true);
    expect(b.logs.some((l) => /^peer link refused by a: the admin token differs/.test(String(l.msg)))).toBe(true);
  });
});
