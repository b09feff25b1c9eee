// The reply gate in process, on real sockets: a real engine and ReplicationSource (a standby 'b'
// that has had its snapshot, on a recording link whose acks the test sends), the daemon's flush
// scheduler with the stream as its lead, and keyed and session listeners on 127.0.0.1. While b
// has not acked a turn's position its client hears nothing; b's ack releases the replies.
import { afterEach, describe, expect, it } from 'vitest';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { ReplicationSource } from '../cluster/replication-source.ts';
import { EngineDriver } from '../daemon/engine-driver.ts';
import { performanceClock } from '../daemon/performance-clock.ts';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { KEYED_REFUSAL, KeyedConnection } from '../lines/keyed-connection.ts';
import { LineListener } from '../lines/line-listener.ts';
import { SESSION_REFUSAL, SessionConnection } from '../lines/session-connection.ts';
import { eventually, LineClient } from '../testing/line-client.ts';
import { recordingLink } from '../testing/replication-wire.ts';
import { EtcdReplyGating } from './etcd-reply-gating.ts';
import { ReplyGate } from './reply-gate.ts';

const teardown: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

async function stack(gated = true) {
  const clock = performanceClock;
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  const driver = new EngineDriver(engine, clock);
  const source = new ReplicationSource({
    engine,
    clock,
    instanceId: 'active',
    ackTimeoutMs: 5_000,
    ceiling: () => 0n,
    failovers: () => [],
    onStreamDropped: () => {},
  });
  source.start();
  const flusher = new FlushScheduler();
  flusher.setLead(() => source.flush());
  const common = { host: '127.0.0.1', port: 0, maxConnections: 20, ioTimeoutMs: 5_000, clock, flusher, afterInput: () => driver.poke() };
  const keyed = new LineListener(common, (t, ctx) => new KeyedConnection(t, ctx, engine, { maxBacklog: 100 }), KEYED_REFUSAL);
  const sessions = new LineListener(common, (t, ctx) => new SessionConnection(t, ctx, engine), SESSION_REFUSAL);
  const keyedPort = (await keyed.listen()).port;
  const sessionPort = (await sessions.listen()).port;
  teardown.push(async () => {
    keyed.destroyAll();
    sessions.destroyAll();
    await keyed.stopAccepting();
    await sessions.stopAccepting();
    driver.stop();
    source.stop();
  });
  const b = recordingLink();
  source.addStandby('b', b.link);
  await eventually(() => source.streaming('b'), 3_000, 'the snapshot to b');
  const gate = new ReplyGate(source);
  if (gated) {
    gate.attach(flusher);
    source.onSyncedAck((id, seq) => gate.ack(id, seq));
    gate.activate(['b']);
  }
  /** The position of the last batch sent to b. */
  const lastBatch = (): number => {
    const line = b.lines.findLast((l) => l.startsWith('{"t":"ev"'));
    return line === undefined ? -1 : (JSON.parse(line) as { seq: number }).seq;
  };
  const open = async (port: number) => {
    const c = await LineClient.open(port, '127.0.0.1', { timeoutMs: 3_000 });
    teardown.push(() => c.close());
    return c;
  };
  return { engine, source, flusher, gate, b, lastBatch, keyedPort, sessionPort, open };
}

/** A few event-loop turns: long enough for a reply that was not held to reach the client. */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
}

describe('the reply gate on real sockets', () => {
  it('a grant and a release are answered only once the in-sync standby acked them', async () => {
    const t = await stack();
    const c = await t.open(t.keyedPort);
    c.send('A jobs 30000 0');
    await eventually(() => t.b.lines.some((l) => l.includes('["g","jobs"')), 3_000, 'the grant to reach b');
    await turns();
    expect(c.lines).toEqual([]);
    expect(t.gate.waiting).toBe(1);
    // An ack short of the grant's batch releases nothing.
    t.source.onAck('b', t.lastBatch() - 1);
    await turns();
    expect(c.lines).toEqual([]);
    t.source.onAck('b', t.lastBatch());
    const granted = await c.next();
    expect(granted).toMatch(/^A jobs \d+$/);
    c.send(`R jobs ${granted.split(' ')[2]}`);
    await eventually(() => t.b.lines.some((l) => l.includes('["r","jobs"')), 3_000, 'the release to reach b');
    await turns();
    expect(c.lines).toEqual([]);
    t.source.onAck('b', t.lastBatch());
    expect(await c.next()).toBe('R jobs OK');
    expect(t.gate.waiting).toBe(0);
  });

  it("a heartbeat's answer waits for the standby's ack of the renewal it made", async () => {
    const t = await stack();
    const s = await t.open(t.sessionPort);
    s.send(`ACQUIRE sess 5000 ${'ab'.repeat(16)}`);
    await eventually(() => t.gate.waiting === 1, 3_000, 'the grant to be held');
    t.source.onAck('b', t.lastBatch());
    expect(await s.next()).toMatch(/^ACQUIRED \d+$/);
    const before = t.lastBatch();
    s.send('HEARTBEAT');
    // The renewal goes to b with a position of its own, after it.
    await eventually(() => t.lastBatch() > before, 3_000, 'the renewal to reach b');
    const renewAt = t.b.lines.findLastIndex((l) => l.startsWith('{"t":"renew"'));
    const evAt = t.b.lines.findLastIndex((l) => l.startsWith('{"t":"ev"'));
    expect(renewAt).toBeGreaterThan(-1);
    expect(renewAt).toBeLessThan(evAt);
    await turns();
    expect(s.lines).toEqual([]);
    t.source.onAck('b', t.lastBatch());
    expect(await s.next()).toMatch(/^ACQUIRED \d+$/);
  });

  it('a client that half-closes gets its held replies, then the FIN; the gate keeps nothing', async () => {
    const t = await stack();
    const c = await t.open(t.keyedPort);
    c.send('A half 30000 0');
    await eventually(() => t.gate.waiting === 1, 3_000, 'the grant to be held');
    c.socket.end();
    await turns();
    expect(c.closed).toBe(false);
    t.source.onAck('b', t.lastBatch());
    const lines = await c.closedWith();
    expect(lines[0]).toMatch(/^A half \d+$/);
    await eventually(() => t.gate.waiting === 0 && t.gate.connectionsHeld === 0, 3_000, 'the gate to hold nothing');
  });

  it('session clients that close (FIN) or reset while replies are held: nothing is kept for them', async () => {
    const t = await stack();
    const fin = await t.open(t.sessionPort);
    const reset = await t.open(t.sessionPort);
    fin.send('ACQUIRE s-fin 5000');
    reset.send('ACQUIRE s-reset 5000');
    await eventually(() => t.gate.connectionsHeld === 2, 3_000, 'both grants held');
    fin.socket.end(); // session close = release
    reset.socket.resetAndDestroy();
    await eventually(() => t.gate.connectionsHeld === 1, 3_000, 'the reset connection forgotten');
    await eventually(() => t.engine.lockCount === 0, 3_000, 'both claims released');
    t.source.onAck('b', t.lastBatch());
    const lines = await fin.closedWith();
    expect(lines[0]).toMatch(/^ACQUIRED \d+$/);
    await eventually(() => t.gate.waiting === 0 && t.gate.connectionsHeld === 0, 3_000, 'the gate to hold nothing');
  });

  it('a step-out (deactivate) drops what is held: the client sees its connection close, never the grant', async () => {
    const t = await stack();
    const c = await t.open(t.keyedPort);
    c.send('A never 30000 0');
    await eventually(() => t.gate.waiting === 1, 3_000, 'the grant to be held');
    t.gate.deactivate();
    expect(await c.closedWith()).toEqual([]);
    // The claim whose grant was never told is released at once (its reply never left this process).
    await eventually(() => t.engine.lockCount === 0, 3_000, 'the unsent grant to be released');
  });

  it('as the node wires it (EtcdReplyGating): the set starts empty, the synced standby is added, then waited for; a step-out drops', async () => {
    const t = await stack(false);
    const stored: string[][] = [];
    const gating = new EtcdReplyGating({
      source: t.source,
      scheduler: t.flusher,
      store: async (m) => {
        stored.push(m);
        return true;
      },
    });
    teardown.push(() => gating.deactivate());
    gating.activate();
    const c = await t.open(t.keyedPort);
    c.send('A first 30000 0');
    // Nobody in the set yet: answered at once. b has acked nothing since its snapshot: not added yet.
    expect(await c.next()).toMatch(/^A first \d+$/);
    expect(stored).toEqual([]);
    t.source.onAck('b', t.lastBatch());
    await eventually(() => gating.gate.members.has('b'), 3_000, 'b to be stored in the set');
    expect(stored).toEqual([['b']]);
    c.send('A second 30000 0');
    await eventually(() => gating.gate.waiting === 1, 3_000, 'the grant to be held for b');
    await turns();
    expect(c.lines).toEqual([]);
    t.source.onAck('b', t.lastBatch());
    expect(await c.next()).toMatch(/^A second \d+$/);
    c.send('A third 30000 0');
    await eventually(() => gating.gate.waiting === 1, 3_000, 'the grant to be held for b');
    gating.deactivate();
    expect(await c.closedWith()).toEqual([]);
  });
});
