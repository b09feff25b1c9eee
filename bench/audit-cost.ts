// What the audit's retention costs (docs/console.md "Who may do what", docs/cluster.md "The
// cluster-wide audit"): 10,000 typical entries in the ring (bytes counted at their most), the
// time of a page of GET /api/v1/audit over them (newest, from a cursor, with a filter that scans
// them all), and the catch-up a link gets (messages, bytes). Prints figures; asserts nothing.
// Run: node --import tsx bench/audit-cost.ts
import { AuditRing } from '../lib/cluster/audit-ring.ts';
import type { AuditEntry } from '../lib/ops-api/api-types.ts';
import { auditBatches } from '../server/cluster/audit-replication.ts';

const COUNT = 10_000;
const typical = (i: number): AuditEntry => ({
  at: 1_764_900_000_000 + i,
  who: 'session:3fa2c1d0',
  action: i % 3 === 0 ? 'kick' : 'force-release',
  target: `jobs/nightly-${i}`,
  result: 'ok',
  detail: `token ${i} held by worker-${i % 50}@host-3 pid 4121`,
  node: 'a',
  id: `a/1bbe8882-9522-414f-b702-9a4c5c34e7a9/${i}`,
});

const ring = new AuditRing(COUNT, [], 16 * 1024 * 1024);
for (let i = 0; i < COUNT; i++) ring.merge([typical(i)]);
console.log(`${ring.size} entries kept, ${(ring.byteSize / 1e6).toFixed(2)} MB counted at their most (${Math.round(ring.byteSize / ring.size)} B each)`);

function median(label: string, fn: () => unknown, runs = 200): void {
  for (let i = 0; i < 20; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((x, y) => x - y);
  console.log(`${label}: median ${(times[runs >> 1] as number).toFixed(3)} ms, p99 ${(times[Math.floor(runs * 0.99)] as number).toFixed(3)} ms`);
}
median('page of 200, newest', () => ring.page({}, null, 200));
median('page of 200, from a cursor half-way', () => ring.page({}, { at: 1_764_900_000_000 + COUNT / 2, seq: COUNT / 2 + 1 }, 200));
median('page of 200, a lock filter matching 1 (scans all)', () => ring.page({ lock: 'nightly-5000' }, null, 200));

const t = performance.now();
const batches = auditBatches(ring.recent(COUNT).reverse());
const cut = performance.now() - t;
const bytes = batches.reduce((n, b) => n + Buffer.byteLength(JSON.stringify({ t: 'audit', entries: b })) + 1, 0);
console.log(`catch-up: ${batches.length} messages, ${(bytes / 1e6).toFixed(2)} MB, cut in ${cut.toFixed(1)} ms (one message sent a loop turn)`);
