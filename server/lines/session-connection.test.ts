// The session protocol's logic driven through an in-memory transport: no socket, a FakeClock,
// and the engine's timer never fires on its own, so a test can stand between a lease's end and
// the timer that would act on it.
import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { encodeSessionError } from '../../lib/protocol/session-codec.ts';
import { MemoryTransport, memoryContext } from '../testing/memory-transport.ts';
import { SessionConnection } from './session-connection.ts';

const CLAIM_KEY = '0123456789abcdef0123456789abcdef';

function setup() {
  const { clock, engine } = engineFixture();
  const { ctx, flusher, gone } = memoryContext(clock);
  const connect = () => {
    const transport = new MemoryTransport();
    const conn = new SessionConnection(transport, ctx, engine);
    return { transport, conn };
  };
  /** The peer sends `text`; what the connection wrote since the last call, as lines. */
  const exchange = (transport: MemoryTransport, text: string): string[] => {
    const before = transport.lines().length;
    transport.send(text);
    flusher.flushAll();
    return transport.lines().slice(before);
  };
  return { clock, engine, flusher, gone, connect, exchange };
}

describe('session connection over an in-memory transport', () => {
  it('claims, answers heartbeats with where it stands, and releases to the next session at close', () => {
    const { engine, flusher, gone, connect, exchange } = setup();
    const first = connect();
    const second = connect();
    expect(exchange(first.transport, 'ACQUIRE x 5000\n')).toEqual(['ACQUIRED 1']);
    expect(exchange(second.transport, 'ACQUIRE x 5000\n')).toEqual(['WAITING 1']);
    expect(exchange(first.transport, 'HEARTBEAT\n')).toEqual(['ACQUIRED 1']);
    expect(exchange(second.transport, 'HEARTBEAT\n')).toEqual(['WAITING 1']);
    // The client's FIN is the release: the lock goes to the queued session at once.
    first.transport.peerEnds();
    flusher.flushAll();
    expect(first.transport.ended).toBe(true);
    expect(second.transport.lines()).toEqual(['WAITING 1', 'WAITING 1', 'ACQUIRED 2']);
    expect(engine.lock('x')?.holder?.token).toBe(2n);
    first.transport.closes();
    expect(gone).toEqual([first.conn]);
  });

  it('answers a heartbeat that came after the lease lapsed with the lease end, not ACQUIRED, even before the timer fires', () => {
    const { clock, engine, connect, exchange } = setup();
    const first = connect();
    const second = connect();
    exchange(first.transport, 'ACQUIRE x 5000\n');
    exchange(second.transport, 'ACQUIRE x 60000\n');
    clock.advance(5_000);
    expect(exchange(first.transport, 'HEARTBEAT\n')).toEqual([encodeSessionError('lease-expired').trimEnd()]);
    expect(first.transport.ended).toBe(true);
    expect(engine.lock('x')?.holder?.token).toBe(2n);
    expect(second.transport.lines()).toEqual(['WAITING 1', 'ACQUIRED 2']);
  });

  it('restarts the lease on any input, a part of a line included', () => {
    const { clock, connect, exchange } = setup();
    const { transport } = connect();
    exchange(transport, 'ACQUIRE x 5000\n');
    clock.advance(4_000);
    expect(exchange(transport, 'HEART')).toEqual([]);
    clock.advance(4_000);
    expect(exchange(transport, 'BEAT\n')).toEqual(['ACQUIRED 1']);
  });

  it('keeps a resumable claim for its client when the transport is reset, and releases it at a FIN', () => {
    const { engine, connect, exchange } = setup();
    const reset = connect();
    exchange(reset.transport, `ACQUIRE r 5000 ${CLAIM_KEY}\n`);
    reset.transport.resets();
    expect(engine.lock('r')?.holder?.token).toBe(1n);
    expect(engine.lock('r')?.holder?.owner.detached).toBe(true);

    const closed = connect();
    exchange(closed.transport, `ACQUIRE c 5000 ${CLAIM_KEY}\n`);
    closed.transport.peerEnds();
    closed.transport.closes();
    expect(engine.lock('c')).toBeUndefined();
  });

  it('refuses a second ACQUIRE on the same connection and releases the first claim', () => {
    const { engine, connect, exchange } = setup();
    const { transport } = connect();
    exchange(transport, 'ACQUIRE x 5000\n');
    expect(exchange(transport, 'ACQUIRE y 5000\n')).toEqual([expect.stringMatching(/^ERROR 0x02 protocol error: ACQUIRE already sent/)]);
    expect(transport.ended).toBe(true);
    expect(engine.lockCount).toBe(0);
  });
});
