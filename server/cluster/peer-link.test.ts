// A peer link on a real loopback socket: lines split across chunks arrive whole, a long line
// before the hello is refused at once (an unauthenticated client cannot make the node buffer
// much), garbage and a handler that throws end the link, not the process.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReceivedPeerMessage } from '../../lib/cluster/peer-messages.ts';
import { INBOUND_TURN_MS, MAX_PEER_LINE, PeerLink } from './peer-link.ts';

let server: Server | null = null;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((resolve) => (server === null ? resolve() : server.close(() => resolve())));
  server = null;
});

/** A PeerLink on the server side of a fresh connection, and the raw client socket. */
async function pair(onMessage: (m: ReceivedPeerMessage) => void = () => {}) {
  let closed: (reason: string) => void = () => {};
  const closedWith = new Promise<string>((resolve) => (closed = resolve));
  const linked = new Promise<PeerLink>((resolve) => {
    server = createServer((socket) => {
      sockets.push(socket);
      resolve(new PeerLink(socket, { onMessage: (_l, m) => onMessage(m), onClose: (_l, reason) => closed(reason) }));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  const port = (server?.address() as { port: number }).port;
  const client = connect({ host: '127.0.0.1', port });
  sockets.push(client);
  client.on('error', () => {});
  return { link: await linked, client, closedWith };
}

describe('PeerLink', () => {
  it('delivers lines split across chunks whole and in order', async () => {
    const got: ReceivedPeerMessage[] = [];
    const { client } = await pair((m) => got.push(m));
    client.write('{"t":"ack","se');
    client.write('q":1}\n{"t":"ack","seq":2}\n{"t":"ack",');
    client.write('"seq":3}\n');
    await expect.poll(() => got.length).toBe(3);
    expect(got).toEqual([
      { t: 'ack', seq: 1 },
      { t: 'ack', seq: 2 },
      { t: 'ack', seq: 3 },
    ]);
  });

  it('sends one ack per turn, the last position acked, after what else was sent in that turn', async () => {
    const { link, client } = await pair();
    let received = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => (received += chunk));
    link.sendAck(7);
    link.sendAck(8);
    link.send({ t: 'ack', seq: 1 });
    link.sendAck(9);
    await expect.poll(() => received.endsWith('\n') && received.includes('"seq":9')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(
      received
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { t: 'ack', seq: 1 },
      { t: 'ack', seq: 9 },
    ]);
    // A later turn acks again.
    link.sendAck(10);
    await expect.poll(() => received.includes('"seq":10')).toBe(true);
  });

  it(`handles received lines for about ${INBOUND_TURN_MS} ms a turn, the rest in later turns, in order, with the socket paused meanwhile`, async () => {
    const got: number[] = [];
    // Each message takes 1 ms to handle: 200 of them are far more than one turn's budget.
    const { link, client } = await pair((m) => {
      if (m.t !== 'ack') return;
      const until = performance.now() + 1;
      while (performance.now() < until);
      got.push(m.seq);
    });
    let turns = 0;
    let counting = true;
    const count = (): void => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    let sawPaused = false;
    const lines = Array.from({ length: 200 }, (_, i) => `{"t":"ack","seq":${i}}\n`).join('');
    client.write(lines);
    await expect
      .poll(() => {
        if (link.socket.isPaused()) sawPaused = true;
        return got.length;
      })
      .toBe(200);
    counting = false;
    expect(got).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(turns, 'the lines took many turns, not one').toBeGreaterThan(20);
    expect(sawPaused, 'the socket was paused while lines waited').toBe(true);
    await expect.poll(() => link.socket.isPaused(), { message: 'the socket reads again once everything was handled' }).toBe(false);
  });

  it(`keeps to the ${INBOUND_TURN_MS} ms budget over all the reads of one turn, not per read`, async () => {
    const got: number[] = [];
    const { link } = await pair((m) => {
      if (m.t !== 'ack') return;
      const until = performance.now() + 1;
      while (performance.now() < until);
      got.push(m.seq);
    });
    // libuv reads a socket up to 32 times in one poll phase: 20 'data' events of one line each, in one turn.
    for (let i = 0; i < 20; i++) link.socket.emit('data', `{"t":"ack","seq":${i}}\n`);
    expect(got.length, 'lines handled in the turn the reads came').toBeLessThanOrEqual(INBOUND_TURN_MS + 2);
    await expect.poll(() => got.length).toBe(20);
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a long line before the hello without waiting for its end', async () => {
    const { client, closedWith } = await pair();
    client.write('x'.repeat(5000));
    expect(await closedWith).toBe('line too long');
  });

  it('takes long lines once the limit is raised (after the hello)', async () => {
    const got: ReceivedPeerMessage[] = [];
    const { link, client } = await pair((m) => got.push(m));
    link.maxLine = 1024 * 1024;
    const big = JSON.stringify({ t: 'admin-result', req: 1, result: 'y'.repeat(100_000) });
    client.write(`${big}\n`);
    await expect.poll(() => got.length).toBe(1);
  });

  it('cuts an authenticated peer off at the line cap (4 MiB), without waiting for the newline', async () => {
    const { link, client, closedWith } = await pair();
    link.maxLine = MAX_PEER_LINE;
    const piece = '"'.repeat(64 * 1024);
    let sent = 0;
    let outcome = 'still open';
    void closedWith.then((reason) => (outcome = reason));
    // Up to 8 MiB of one unfinished line, a piece per turn, stopping once the link closes.
    for (let turns = 0; outcome === 'still open' && turns < 2_000; turns++) {
      if (sent < 8 * 1024 * 1024 && !client.destroyed) {
        client.write(piece);
        sent += piece.length;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(outcome).toBe('line too long');
    client.destroy();
    expect(sent, 'bytes written before the cut').toBeLessThan(8 * 1024 * 1024);
  });

  it('ends the link on a line that is not a message, and on a handler that throws', async () => {
    const first = await pair();
    first.client.write('not json\n');
    expect(await first.closedWith).toMatch(/bad message/);
    const second = await pair(() => {
      throw new RangeError('boom');
    });
    second.client.write('{"t":"ack","seq":1}\n');
    expect(await second.closedWith).toMatch(/could not be handled: boom/);
  });

  it('a ceiling above u64 is not a message', async () => {
    const { client, closedWith } = await pair();
    client.write('{"t":"ceil","ceiling":"99999999999999999999"}\n');
    expect(await closedWith).toMatch(/bad message/);
  });
});
