// The reply gate with the real FlushScheduler and fake connections: each pass's output is cut per
// connection, held behind the stream position the lead reached, and written when every in-sync
// standby acked it; later turns never leave with earlier ones; closes and step-outs drop output.
import { describe, expect, it } from 'vitest';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { ReplyGate } from './reply-gate.ts';
import { FakeConnection, FakeStream } from '../testing/reply-gate-fakes.ts';

function setup(members: string[] = ['b']) {
  const stream = new FakeStream();
  const scheduler = new FlushScheduler();
  const gate = new ReplyGate(stream);
  gate.attach(scheduler);
  gate.activate(members);
  /** One turn: the connections' output, the stream at `seq`, then the pass. */
  const turn = (seq: number, sends: [FakeConnection, string][]) => {
    stream.lastSeq = seq;
    for (const [c, text] of sends) {
      if (c.out === '') scheduler.mark(c);
      c.send(text);
    }
    scheduler.flushAll();
  };
  return { stream, scheduler, gate, turn };
}

describe('the reply gate on the flush scheduler', () => {
  it('holds a turn until every in-sync member acked its position, then writes each connection its own cut', () => {
    const { gate, turn } = setup(['b', 'c']);
    const x = new FakeConnection('x');
    const y = new FakeConnection('y');
    turn(5, [
      [x, 'A1\n'],
      [y, 'B1\n'],
    ]);
    expect(x.written).toEqual([]);
    expect(gate.waiting).toBe(1);
    gate.ack('b', 5);
    expect(x.written).toEqual([]); // c has not acked
    gate.ack('c', 4);
    expect(x.written).toEqual([]);
    gate.ack('c', 5);
    expect(x.written).toEqual(['A1\n']);
    expect(y.written).toEqual(['B1\n']);
    expect(gate.waiting).toBe(0);
    expect(gate.connectionsHeld).toBe(0);
  });

  it('a later turn waits for its own position: an ack of the earlier one writes only the earlier cut', () => {
    const { gate, turn } = setup();
    const x = new FakeConnection('x');
    turn(3, [[x, 'one\n']]);
    turn(7, [[x, 'two\n']]);
    gate.ack('b', 3);
    expect(x.written).toEqual(['one\n']);
    gate.ack('b', 9);
    expect(x.written).toEqual(['one\n', 'two\n']);
  });

  it('one ack that answers several turns writes each connection once, its cuts in order; a later turn stays held', () => {
    const { gate, turn } = setup();
    const x = new FakeConnection('x');
    const y = new FakeConnection('y');
    turn(3, [[x, 'one\n']]);
    turn(4, [
      [y, 'why\n'],
      [x, 'two\n'],
    ]);
    turn(6, [[x, 'three\n']]);
    turn(8, [[x, 'four\n']]);
    gate.ack('b', 6);
    expect(x.written).toEqual(['one\ntwo\nthree\n']);
    expect(y.written).toEqual(['why\n']);
    gate.ack('b', 8);
    expect(x.written).toEqual(['one\ntwo\nthree\n', 'four\n']);
    expect(gate.connectionsHeld).toBe(0);
  });

  it('writes at once with an empty in-sync set, and turns the stream numbering of renewals on while active', () => {
    const { gate, turn, stream } = setup([]);
    expect(stream.numbered).toBe(true);
    const x = new FakeConnection('x');
    turn(1, [[x, 'now\n']]);
    expect(x.written).toEqual(['now\n']);
    gate.deactivate();
    expect(stream.numbered).toBe(false);
  });

  it('without a gate (peers mode) the pass writes directly', () => {
    const scheduler = new FlushScheduler();
    const gate = new ReplyGate(new FakeStream());
    gate.attach(scheduler);
    const x = new FakeConnection('x');
    scheduler.mark(x);
    x.send('direct\n');
    scheduler.flushAll();
    expect(x.written).toEqual(['direct\n']);
  });

  it('writes the lead before cutting, and holds behind the position the lead reached', () => {
    const stream = new FakeStream();
    const scheduler = new FlushScheduler();
    scheduler.setLead(() => {
      stream.lastSeq = 12;
    });
    const gate = new ReplyGate(stream);
    gate.attach(scheduler);
    gate.activate(['b']);
    const x = new FakeConnection('x');
    scheduler.mark(x);
    x.send('r\n');
    scheduler.flushAll();
    gate.ack('b', 11);
    expect(x.written).toEqual([]);
    gate.ack('b', 12);
    expect(x.written).toEqual(['r\n']);
  });

  it('a connection that closed drops its cuts; the others of the same turn still go', () => {
    const { gate, scheduler, turn } = setup();
    const x = new FakeConnection('x');
    const y = new FakeConnection('y');
    turn(2, [
      [x, 'gone\n'],
      [y, 'stays\n'],
    ]);
    x.closed = true;
    scheduler.forget(x);
    expect(gate.connectionsHeld).toBe(1);
    gate.ack('b', 2);
    expect(x.written).toEqual([]);
    expect(y.written).toEqual(['stays\n']);
    expect(gate.connectionsHeld).toBe(0);
  });

  it('a closing connection (its own close or FIN) ends its transport only after its held output, and keeps nothing', () => {
    const { gate, scheduler, turn, stream } = setup();
    const x = new FakeConnection('x');
    turn(4, [[x, 'granted\n']]);
    // close(): the last output goes through the gate too, then the end waits for it.
    x.send('bye\n');
    stream.lastSeq = 6;
    scheduler.flushOne(x);
    scheduler.endAfterHeld(x);
    expect(x.ended).toBe(false);
    gate.ack('b', 4);
    expect(x.written).toEqual(['granted\n']);
    expect(x.ended).toBe(false);
    gate.ack('b', 6);
    expect(x.written).toEqual(['granted\n', 'bye\n']);
    expect(x.ended).toBe(true);
    expect(gate.connectionsHeld).toBe(0);
    expect(gate.waiting).toBe(0);
    // A close with nothing held ends at once.
    const y = new FakeConnection('y');
    scheduler.endAfterHeld(y);
    expect(y.ended).toBe(true);
  });

  it('deactivate drops everything held and what this turn queued, and closes those connections; later passes write directly', () => {
    const { gate, scheduler, turn } = setup();
    const x = new FakeConnection('x');
    const y = new FakeConnection('y');
    const z = new FakeConnection('z');
    turn(1, [[x, 'held\n']]);
    // y's output is queued in this turn, not yet cut by a pass.
    scheduler.mark(y);
    y.send('queued\n');
    gate.deactivate();
    expect(x.abandoned && y.abandoned).toBe(true);
    expect(z.abandoned).toBe(false);
    gate.ack('b', 10);
    expect(x.written).toEqual([]);
    expect(y.written).toEqual([]);
    expect(gate.waiting).toBe(0);
    scheduler.mark(z);
    z.send('redirect\n');
    scheduler.flushAll();
    expect(z.written).toEqual(['redirect\n']);
  });

  it('a member being added holds replies from the proposal on; a member removed holds them until the removal is stored', () => {
    const { gate, turn } = setup([]);
    const x = new FakeConnection('x');
    gate.ack('b', 0);
    expect(gate.mayJoin('b')).toBe(true);
    gate.propose(['b']);
    turn(3, [[x, 'one\n']]);
    expect(x.written).toEqual([]); // b is proposed: it may be electable before we hear it stored
    gate.stored(['b']);
    expect(x.written).toEqual([]);
    gate.ack('b', 3);
    expect(x.written).toEqual(['one\n']);
    turn(5, [[x, 'two\n']]);
    gate.propose([]);
    expect(x.written).toEqual(['one\n']); // removal on its way: b still counts
    gate.stored([]);
    expect(x.written).toEqual(['one\n', 'two\n']);
  });
});

describe('activation', () => {
  it('counts everything up to the stream position at activation as answered: a standby behind it may not join', () => {
    const stream = new FakeStream();
    stream.lastSeq = 40;
    const gate = new ReplyGate(stream);
    gate.attach(new FlushScheduler());
    gate.activate([]);
    gate.ack('b', 39);
    expect(gate.mayJoin('b')).toBe(false);
    gate.ack('b', 40);
    expect(gate.mayJoin('b')).toBe(true);
  });
});
