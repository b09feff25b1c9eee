// The keyed protocol's logic driven through an in-memory transport: no socket, a FakeClock, and
// the engine advanced by hand, so each test says exactly which reply is written when.
import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { encodeKeyedError } from '../../lib/protocol/keyed-codec.ts';
import { MemoryTransport, memoryContext } from '../testing/memory-transport.ts';
import { KeyedConnection } from './keyed-connection.ts';

function setup() {
  const { clock, engine, tick } = engineFixture();
  const { ctx, flusher, gone } = memoryContext(clock);
  const connect = (address?: string) => {
    const transport = new MemoryTransport(address);
    const conn = new KeyedConnection(transport, ctx, engine, { maxBacklog: 100 });
    return { transport, conn };
  };
  return { engine, tick, flusher, gone, connect };
}

describe('keyed connection over an in-memory transport', () => {
  it('answers pipelined A and R requests in request order, in one write per batch', () => {
    const { flusher, connect } = setup();
    const { transport } = connect();
    transport.send('A a 10 0\nA b 10 0\nR a 1\nR a 1\nA a 10 0\nR b 7\n');
    expect(transport.writes).toEqual([]);
    flusher.flushAll();
    expect(transport.writes).toHaveLength(1);
    expect(transport.lines()).toEqual(['A a 1', 'A b 2', 'R a OK', 'R a STALE', 'A a 3', 'R b STALE']);
  });

  it('names the peer on its claims', () => {
    const { engine, connect } = setup();
    const { transport } = connect('192.0.2.7:5555');
    transport.send('A a 10 0\n');
    expect(engine.lock('a')?.holder?.client).toBe('192.0.2.7:5555');
  });

  it('holds an immediate error behind an earlier waiter on the same key until that waiter is answered', () => {
    const { flusher, connect } = setup();
    const holder = connect();
    const waiter = connect();
    holder.transport.send('A k 10 0\n');
    waiter.transport.send('A k 10 0\nA k 0 0\nA other 10 0\n');
    flusher.flushAll();
    // The bad lease on k waits for the earlier A on k; other keys are not held up.
    expect(waiter.transport.lines()).toEqual(['A other 2']);
    holder.transport.send('R k 1\n');
    flusher.flushAll();
    expect(holder.transport.lines()).toEqual(['A k 1', 'R k OK']);
    expect(waiter.transport.lines()).toEqual(['A other 2', 'A k 3', encodeKeyedError('A', 'k', 'bad-lease').trimEnd()]);
  });

  it('sends a later waiter’s timeout after the earlier waiter’s grant on the same key', () => {
    const { flusher, tick, connect } = setup();
    const holder = connect();
    const waiter = connect();
    holder.transport.send('A k 10 0\n');
    waiter.transport.send('A k 10 0\nA k 10 1\n');
    tick(1_000);
    flusher.flushAll();
    expect(waiter.transport.lines()).toEqual([]);
    holder.transport.send('R k 1\n');
    flusher.flushAll();
    expect(waiter.transport.lines()).toEqual(['A k 2', 'T k']);
  });

  it('releases at once a grant whose line never left the process when the connection goes', () => {
    const { engine, flusher, gone, connect } = setup();
    const holder = connect();
    const waiter = connect();
    holder.transport.send('A k 10 0\n');
    waiter.transport.send('A k 10 0\n');
    holder.transport.send('R k 1\n');
    // Granted in the engine and queued on the connection, but the transport is gone first.
    expect(engine.lock('k')?.holder?.token).toBe(2n);
    waiter.transport.closes();
    expect(engine.lock('k')).toBeUndefined();
    expect(gone).toContain(waiter.conn);
    flusher.flushAll();
    expect(waiter.transport.writes).toEqual([]);
  });

  it('leaves a grant whose write completed to its lease when the connection goes', () => {
    const { engine, flusher, connect } = setup();
    const { transport } = connect();
    transport.send('A k 10 0\n');
    flusher.flushAll();
    transport.completeWrites();
    transport.closes();
    expect(engine.lock('k')?.holder?.token).toBe(1n);
  });

  it('answers every waiter T at the peer’s FIN, then ends its side', () => {
    const { engine, flusher, connect } = setup();
    const holder = connect();
    const waiter = connect();
    holder.transport.send('A k 10 0\n');
    waiter.transport.send('A k 10 0\nA j 10 0\nA k 10 0\n');
    waiter.transport.peerEnds();
    flusher.flushAll();
    expect(waiter.transport.lines()).toEqual(['A j 2', 'T k', 'T k']);
    expect(waiter.transport.ended).toBe(true);
    expect(engine.waiterCount).toBe(0);
    // A delivered grant outlives the connection that asked for it.
    expect(engine.lock('j')?.holder?.token).toBe(2n);
  });
});
