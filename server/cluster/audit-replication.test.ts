import { describe, expect, it } from 'vitest';
import { decodePeerMessage, encodePeerMessage, MAX_AUDIT_BATCH, MAX_AUDIT_BATCH_BYTES, type PeerMessage } from '../../lib/cluster/peer-messages.ts';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import { AuditReplication, type ReplicatedAudit } from './audit-replication.ts';
import type { MeshPeer } from './peer-mesh.ts';

const entry = (n: number, node?: string): AuditEntry => ({
  at: n,
  who: 'bearer:admin',
  action: 'kick',
  target: `t${n}`,
  result: 'ok',
  detail: null,
  ...(node === undefined ? {} : { node, id: `${node}/i/${n}` }),
});

function fakeAudit(initial: AuditEntry[]): ReplicatedAudit & { emit(e: AuditEntry): void; merged: AuditEntry[][] } {
  const listeners = new Set<(e: AuditEntry) => void>();
  const merged: AuditEntry[][] = [];
  return {
    merged,
    recent: (limit) => initial.slice(-limit),
    mergeRemote: (entries) => merged.push([...entries]),
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    emit: (e) => {
      for (const l of listeners) l(e);
    },
  };
}

function fakeMesh() {
  const broadcasts: PeerMessage[] = [];
  const sent: Array<{ to: string; m: PeerMessage }> = [];
  return {
    broadcasts,
    sent,
    mesh: {
      broadcast: (m: PeerMessage) => broadcasts.push(m),
      send: (peer: MeshPeer, m: PeerMessage) => sent.push({ to: peer.config.id, m }),
    },
  };
}

const peerB = { config: { id: 'b' } } as MeshPeer;

describe('AuditReplication', () => {
  it('sends this node’s own new entries to every peer, and not those it received from them', () => {
    const { mesh, broadcasts } = fakeMesh();
    const audit = fakeAudit([]);
    new AuditReplication('a', mesh).attach(audit);
    broadcasts.length = 0; // the catch-up on attach
    audit.emit(entry(1, 'a'));
    audit.emit(entry(2, 'b'));
    expect(broadcasts).toEqual([{ t: 'audit', entries: [entry(1, 'a')] }]);
  });

  it('gives a peer whose link comes up the recent entries, without the old ones that have no node or id', () => {
    const { mesh, sent } = fakeMesh();
    const replication = new AuditReplication('a', mesh);
    replication.linkUp(peerB); // nothing attached yet: nothing to send
    expect(sent).toEqual([]);
    replication.attach(fakeAudit([entry(1), entry(2, 'a'), entry(3, 'c')]));
    replication.linkUp(peerB);
    // Newest first: the most useful arrive first.
    expect(sent).toEqual([{ to: 'b', m: { t: 'audit', entries: [entry(3, 'c'), entry(2, 'a')] } }]);
  });

  it('gives a peer whose link comes up everything kept, in messages within the protocol’s count and byte bounds', () => {
    const { mesh, sent } = fakeMesh();
    const later: Array<() => void> = [];
    const replication = new AuditReplication('a', mesh, (fn) => later.push(fn));
    const kept = Array.from({ length: 1_234 }, (_, i) => ({ ...entry(i, 'a'), detail: 'é'.repeat(i % 7 === 0 ? 2_048 : 10) }));
    replication.attach(fakeAudit(kept));
    replication.linkUp(peerB);
    // One message a loop turn: the first now, the rest on later turns (the lock path runs between).
    expect(sent).toHaveLength(1);
    while (later.length > 0) (later.shift() as () => void)();
    const messages = sent.map((s) => s.m);
    const got: AuditEntry[] = [];
    for (const m of messages) {
      if (m.t !== 'audit') throw new Error('not an audit message');
      expect(m.entries.length).toBeLessThanOrEqual(MAX_AUDIT_BATCH);
      const line = encodePeerMessage(m);
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_AUDIT_BATCH_BYTES + 100);
      expect(decodePeerMessage(line.trimEnd()).ok).toBe(true);
      got.push(...m.entries);
    }
    expect(got.map((e) => e.id).sort()).toEqual(kept.map((e) => e.id).sort());
    expect(messages.length).toBeGreaterThan(1_234 / MAX_AUDIT_BATCH);
  });

  it('cuts an over-long field to the protocol’s bound, so the peer does not refuse the message', () => {
    const { mesh, broadcasts } = fakeMesh();
    const audit = fakeAudit([]);
    new AuditReplication('a', mesh).attach(audit);
    broadcasts.length = 0;
    audit.emit({ ...entry(1, 'a'), detail: 'x'.repeat(5_000) });
    const sent = broadcasts[0];
    if (sent?.t !== 'audit') throw new Error('no audit message sent');
    expect(sent.entries[0]?.detail).toHaveLength(2_048);
    expect(decodePeerMessage(encodePeerMessage(sent).trimEnd()).ok).toBe(true);
  });

  it('hands what peers send to the audit log, and stops sending once detached', () => {
    const { mesh, broadcasts } = fakeMesh();
    const audit = fakeAudit([]);
    const replication = new AuditReplication('a', mesh);
    replication.attach(audit);
    replication.receive([entry(5, 'b')]);
    expect(audit.merged).toEqual([[entry(5, 'b')]]);
    replication.detach();
    broadcasts.length = 0;
    audit.emit(entry(6, 'a'));
    expect(broadcasts).toEqual([]);
  });
});
