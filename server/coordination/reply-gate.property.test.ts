// Property: whatever the interleaving of client output, passes, acks, closes and in-sync changes,
// no reply is written before every member of the in-sync set (stored, and proposed while a change
// is on its way) has acked the stream position of the turn that made it, and each connection's
// replies are written in the order they were made, none twice; once every member has acked
// everything, every open connection has had all of its replies.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { FakeConnection, FakeStream } from '../testing/reply-gate-fakes.ts';
import { ReplyGate } from './reply-gate.ts';

const NODES = ['b', 'c', 'd'] as const;
type Node = (typeof NODES)[number];

type Op =
  | { kind: 'send'; conn: number }
  | { kind: 'pass'; events: number }
  | { kind: 'ack'; node: Node; back: number }
  | { kind: 'close'; conn: number }
  | { kind: 'propose'; members: Node[] }
  | { kind: 'stored'; lost: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('send' as const), conn: fc.nat(3) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('pass' as const), events: fc.nat(3) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('ack' as const), node: fc.constantFrom(...NODES), back: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), conn: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('propose' as const), members: fc.subarray([...NODES]) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('stored' as const), lost: fc.boolean() }) },
);

it('no reply before every in-sync member acked its turn; in order per connection; nothing lost', () => {
  fc.assert(
    fc.property(fc.subarray([...NODES]), fc.array(opArb, { maxLength: 80 }), (initial, ops) => {
      const stream = new FakeStream();
      const scheduler = new FlushScheduler();
      const gate = new ReplyGate(stream);
      gate.attach(scheduler);
      gate.activate(initial);
      // The model: acks per node, the stored set and a proposal, each reply's position once cut.
      const acked = new Map<string, number>();
      let stored = new Set<string>(initial);
      let proposed: Set<string> | null = null;
      const position = new Map<string, number>();
      const conns = [0, 1, 2, 3].map((i) => new FakeConnection(`c${i}`));
      const sent = conns.map(() => [] as string[]);
      let n = 0;
      /** The lead moves the stream by `events`, then the pass cuts: each line queued is at that position. */
      const pass = (events: number) => {
        stream.lastSeq += events;
        for (const c of conns) for (const line of c.out.split('\n')) if (line !== '') position.set(line, stream.lastSeq);
        scheduler.flushAll();
      };
      for (const [i, conn] of conns.entries()) {
        const write = conn.writeCut.bind(conn);
        conn.writeCut = (data: string) => {
          for (const line of data.split('\n').filter((l) => l !== '')) {
            const pos = position.get(line);
            expect(pos, `${line} was never cut`).toBeDefined();
            for (const m of [...stored, ...(proposed ?? [])])
              expect(acked.get(m) ?? -1, `${line} at ${pos} before ${m} acked it`).toBeGreaterThanOrEqual(pos as number);
          }
          expect(conn.closed, `c${i} written after close`).toBe(false);
          write(data);
        };
      }
      for (const op of ops) {
        switch (op.kind) {
          case 'send': {
            const c = conns[op.conn] as FakeConnection;
            if (c.closed) break;
            const line = `c${op.conn}-${n++}`;
            if (c.out === '') scheduler.mark(c);
            c.send(`${line}\n`);
            (sent[op.conn] as string[]).push(line);
            break;
          }
          case 'pass':
            pass(op.events);
            break;
          case 'ack': {
            const seq = Math.max(0, stream.lastSeq - op.back);
            if (seq > (acked.get(op.node) ?? -1)) acked.set(op.node, seq);
            gate.ack(op.node, seq);
            break;
          }
          case 'close': {
            const c = conns[op.conn] as FakeConnection;
            c.closed = true;
            scheduler.forget(c);
            break;
          }
          case 'propose': {
            if (proposed !== null) break; // one write in flight at a time (the keeper's rule)
            // Added members must be able to join (the keeper checks mayJoin first).
            const members = op.members.filter((m) => stored.has(m) || gate.mayJoin(m));
            proposed = new Set(members);
            gate.propose(members);
            break;
          }
          case 'stored': {
            if (proposed === null) break;
            const now = op.lost ? stored : proposed;
            proposed = null;
            stored = new Set(now);
            gate.stored(now);
            break;
          }
        }
      }
      // Everything the stream has is acked by everyone: every open connection has all of its replies, in order.
      pass(0);
      for (const node of NODES) {
        acked.set(node, stream.lastSeq);
        gate.ack(node, stream.lastSeq);
      }
      for (const [i, c] of conns.entries()) {
        const got = c.written
          .join('')
          .split('\n')
          .filter((l) => l !== '');
        if (c.closed) expect(sent[i]?.slice(0, got.length)).toEqual(got);
        else expect(got).toEqual(sent[i]);
      }
      expect(gate.waiting).toBe(0);
      expect(gate.connectionsHeld).toBe(0);
    }),
    { numRuns: 1000 },
  );
});
