import type { ClaimOwner } from '../lib/engine/claim.ts';
import { FakeClock } from '../lib/engine/clock.ts';
import { LockEngine } from '../lib/engine/lock-engine.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { decodePeerMessage } from '../lib/cluster/peer-messages.ts';
import { ReplicationSource } from '../server/cluster/replication-source.ts';
import { ReplicationSink } from '../server/cluster/replication-sink.ts';
import { HeldSlices, recordingLink } from '../server/testing/replication-wire.ts';
const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const clock = { now: () => performance.now() };
const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
for (let i = 0; i < 300_000; i++) engine.acquire(`bench/join/${i}`, owner, 'keyed', `127.0.0.1:${i % 60000}`, 600_000, 0, false);
const slices = new HeldSlices();
const source = new ReplicationSource({ engine, clock, instanceId: 'i', ackTimeoutMs: 1000, ceiling: () => 0n, failovers: () => [], onStreamDropped: () => {}, schedule: slices.schedule });
source.start();
const { link, lines } = recordingLink();
source.addStandby('b', link);
let maxSlice = 0; let t = performance.now();
while (slices.pending > 0) { const s = performance.now(); slices.runOne(); maxSlice = Math.max(maxSlice, performance.now() - s); }
console.log('walk total', (performance.now() - t).toFixed(0), 'ms; max slice', maxSlice.toFixed(1), 'parts', lines.length);
const b = new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore()));
const sink = new ReplicationSink(b);
sink.expectSnapshot('a');
let dec = 0, app = 0, maxPart = 0;
for (const line of lines) {
  const s0 = performance.now();
  const d = decodePeerMessage(line);
  const s1 = performance.now();
  if (!d.ok) throw new Error(d.error);
  const m = d.message;
  if (m.t === 'snapshot-begin') sink.beginSnapshot('a', m);
  else if (m.t === 'snapshot-part') sink.applyPart('a', m);
  else if (m.t === 'snapshot') sink.finishSnapshot('a', m);
  const s2 = performance.now();
  dec += s1 - s0; app += s2 - s1; maxPart = Math.max(maxPart, s2 - s0);
}
console.log('decode', dec.toFixed(0), 'apply', app.toFixed(0), 'max part', maxPart.toFixed(1), 'locks', b.lockCount);
