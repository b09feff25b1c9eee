// The peer protocol: one TCP connection per pair of nodes, one JSON object per line. Control
// messages (hello, status, sync, handoff, admin) are rare and checked with zod; replication
// batches (`ev`) are the hot path and carry events as small arrays, checked by hand where they
// are applied; snapshot parts carry thousands of entries, checked by hand here
// (snapshot-entries.ts). Tokens travel as decimal strings (a u64 does not fit a JSON number).
import { z } from 'zod';
import { adminOpFromWire, type WireAdminOp } from '../ops-api/admin-request.ts';
import { AUDIT_ACTIONS, type FailoverView, type ReplicationLag } from '../ops-api/api-types.ts';
import { FAILOVER_CAUSES, NODE_PHASES, type NodePhase } from '../ops-api/cluster-vocabulary.ts';
import { isU64Text } from '../protocol/u64-text.ts';
import {
  KEY_HASH,
  isSnapshotHolder,
  isSnapshotHolders,
  isSnapshotWaiter,
  isSnapshotWaiters,
  type SnapshotHolder,
  type SnapshotWaiter,
} from './snapshot-entries.ts';

const phase = z.enum(NODE_PHASES);
/** A u64 in decimal (tokens, ceilings), by the one rule of lib/protocol/u64-text.ts. */
const decimal = z.string().refine(isU64Text, 'not a u64 in decimal');
const count = z.number().int().min(0);
/** The largest lock count a snapshot-begin may announce (a hint: the standby's table is split for at most 1,024 shards whatever it says). */
export const MAX_SNAPSHOT_LOCKS_HINT = 1_000_000_000;
const failover = z.object({
  at: z.number(),
  from: z.string().nullable(),
  to: z.string(),
  gapMs: z.number(),
  cause: z.enum(FAILOVER_CAUSES),
  // What the new active did with the resumable session claims it kept (absent for a split brain).
  claimsCarried: z.number().int().min(0).optional(),
  claimsResumed: z.number().int().min(0).optional(),
  claimsExpired: z.number().int().min(0).optional(),
  claimsEnded: z.number().int().min(0).optional(),
  // The entry's id, and the transition as the clients saw it (api-types.ts: TransitionClients).
  id: z.string().max(256).optional(),
  clients: z
    .object({
      moved: count,
      expired: count,
      lost: count,
      ended: count,
      reconnecting: count,
      requeued: count,
      regranted: count,
      longestStallMs: z.number().min(0).nullable(),
      stalls: count,
      finishedAt: z.number().nullable(),
    })
    .optional(),
});

export type { SnapshotHolder, SnapshotWaiter };
export { KEY_HASH };

/**
 * Audit entries a peer replicates (its own as they are recorded, and its recent ones when a link
 * comes up): bounded in count and in every field, since an entry is shown and stored as it came.
 */
export const MAX_AUDIT_BATCH = 200;
/**
 * A sender also keeps one message's entries under this many bytes of JSON (a catch-up pages the
 * whole retained audit in such messages), well under the peer line limit (4 MiB): 200 entries
 * of the longest fields, escaped, could pass it.
 */
export const MAX_AUDIT_BATCH_BYTES = 1024 * 1024;
/** The longest text of each field; a sender cuts its entries to these (audit-replication.ts). */
export const AUDIT_FIELD_MAX = { who: 256, target: 1024, result: 64, detail: 2048, node: 64, id: 256 } as const;
const auditEntry = z
  .object({
    at: z.number().finite(),
    who: z.string().max(AUDIT_FIELD_MAX.who),
    action: z.enum(AUDIT_ACTIONS),
    target: z.string().max(AUDIT_FIELD_MAX.target),
    result: z.string().max(AUDIT_FIELD_MAX.result),
    detail: z.string().max(AUDIT_FIELD_MAX.detail).nullable(),
    node: z.string().min(1).max(AUDIT_FIELD_MAX.node),
    id: z.string().min(1).max(AUDIT_FIELD_MAX.id),
  })
  .strict();

/**
 * The op a standby forwarded, read once here by the contract's peer-edge rule (adminOpFromWire:
 * the lock name, the token, the claim id checked). An op that does not read is not a broken
 * link: the message decodes with the refusal, and the active answers it `invalid-input`.
 */
const forwardedOp = z.unknown().transform(adminOpFromWire);

const holder = z.custom<SnapshotHolder>(isSnapshotHolder, 'malformed snapshot holder');
const waiter = z.custom<SnapshotWaiter>(isSnapshotWaiter, 'malformed snapshot waiter');

const messages = z.discriminatedUnion('t', [
  /** The first message each way, sent only once TLS has authenticated both sides: `id` must be the dialler's PSK identity. */
  z.object({ t: z.literal('hello'), id: z.string(), instance: z.string() }),
  z.object({
    t: z.literal('status'),
    id: z.string(),
    instance: z.string(),
    phase,
    /** The node this one takes as active (itself when active) while it hears it; null when none is heard. */
    active: z.string().nullable(),
    /** Instance of the active whose state this node has replicated (itself when active). */
    syncedWith: z.string().nullable(),
    yielded: z.boolean(),
    /** Shutting down (SIGTERM/SIGINT): never a candidate for the active role again. */
    leaving: z.boolean().optional(),
    /** Active with state of its own making only (see role-decider.ts). */
    fresh: z.boolean().optional(),
    /** Holds only part of an active's table (a join cut short): no candidate for the role (role-decider.ts holdsPartialTable). */
    partial: z.boolean().optional(),
    /**
     * For an active, the highest ceiling it knows of; for a standby, the highest ceiling of ranges
     * other nodes than its active may have issued from (see TokenCeilings.foreign, server/cluster/token-ceilings.ts).
     */
    ceiling: decimal,
    /** Every ceiling this node knows of (a node that promotes starts above all of them). */
    known: decimal.optional(),
    /** Sent by the active: the replication lag of each standby it streams to. */
    lags: z.record(z.string(), z.object({ events: z.number(), ms: z.number() })).optional(),
    /**
     * The sender's token slot: its position in its own cluster.json (lib/tokens/token-slots.ts).
     * A receiver whose file puts the sender elsewhere logs the mismatch (token-slot-check.ts).
     */
    slot: z.number().int().min(0).max(1_000).optional(),
  }),
  z.object({ t: z.literal('sync') }),
  /**
   * A snapshot is streamed: `snapshot-begin` (the standby's table starts over, as the active's
   * at `seq`), then `snapshot-part` lines, each applied as it comes, with the event stream
   * (`ev`) interleaved in the order things happened on the active, then `snapshot`, which ends
   * it and names how many parts came (see server/cluster/snapshot-walk.ts for why the result is
   * the active's table). Its own holders and waiters, if any, are applied as one more part (the
   * source sends none). `locks`: how many locks the active has as it begins, so that the
   * standby's table is made for that many (lib/engine/lock-map.ts); absent from older actives.
   */
  z.object({
    t: z.literal('snapshot-begin'),
    instance: z.string(),
    seq: z.number(),
    ceiling: decimal,
    highWater: decimal,
    locks: z.number().int().min(0).max(MAX_SNAPSHOT_LOCKS_HINT).optional(),
  }),
  z.object({
    t: z.literal('snapshot'),
    instance: z.string(),
    seq: z.number(),
    ceiling: decimal,
    highWater: decimal,
    holders: z.array(holder),
    waiters: z.array(waiter),
    failovers: z.array(failover),
    parts: z.number().int().min(0),
  }),
  /**
   * Whole locks (each lock's holder, then its waiters in queue order): the standby replaces what
   * it has for each lock named here. A lock too long for one line goes on in the next line,
   * which names it in `cont`: its entries so far are kept, and the rest are added.
   */
  z.object({ t: z.literal('snapshot-part'), cont: z.string().optional(), holders: z.array(holder), waiters: z.array(waiter) }),
  z.object({ t: z.literal('ev'), seq: z.number(), e: z.array(z.array(z.unknown())) }),
  z.object({ t: z.literal('ack'), seq: z.number() }),
  /**
   * Coalesced lease renewals of resumable sessions, a few times a second (never one per
   * heartbeat): claimId, remainingMs, claimId, remainingMs... (flat, no lock names: the line is
   * built every 250 ms for every renewed claim), remainingMs counted from when it was sent.
   * Not numbered: a renewal of a claim that has ended meanwhile is ignored.
   */
  z.object({ t: z.literal('renew'), r: z.array(z.number().int().min(0)).refine((r) => r.length % 2 === 0, 'claim id and lease pairs') }),
  z.object({ t: z.literal('ceil'), ceiling: decimal }),
  z.object({ t: z.literal('ceil-ack'), ceiling: decimal }),
  z.object({ t: z.literal('failover'), f: failover }),
  // lost: the session claims without a claim key the old active ended (REDIRECT) for this handoff.
  z.object({
    t: z.literal('handoff'),
    seq: z.number(),
    pausedMs: z.number(),
    cause: z.enum(['signal', 'api-handoff', 'priority-return']),
    lost: z.number().int().min(0).optional(),
  }),
  // failover: the id of the timeline entry the successor recorded for it.
  z.object({ t: z.literal('promoted'), instance: z.string(), failover: z.string().max(256).optional() }),
  z.object({ t: z.literal('handoff-refused') }),
  /** After the hello: this node will not link with the dialer (its id is already linked; 'auth' is a failed TLS handshake, never sent). */
  z.object({ t: z.literal('refused'), reason: z.enum(['auth', 'duplicate']) }),
  z.object({ t: z.literal('admin'), req: z.number(), who: z.string(), op: forwardedOp }),
  z.object({ t: z.literal('admin-result'), req: z.number(), result: z.unknown() }),
  z.object({ t: z.literal('restore') }),
  /** Admin actions recorded in the cluster (see server/cluster/audit-replication.ts). */
  z.object({ t: z.literal('audit'), entries: z.array(auditEntry).max(MAX_AUDIT_BATCH) }),
]);

/**
 * A message as decoded. The same as a sent one (PeerMessage) but for a forwarded admin op, which
 * arrives read (ReadAdminOp: the op, or why it does not read).
 */
export type ReceivedPeerMessage = z.output<typeof messages>;
/** The admin message as a standby sends it: the op in its wire form (adminOpToWire: tokens as text). */
export type AdminRequestMessage = { t: 'admin'; req: number; who: string; op: WireAdminOp };
/** A message as sent. */
export type PeerMessage = Exclude<ReceivedPeerMessage, { t: 'admin' }> | AdminRequestMessage;
export type StatusMessage = Extract<PeerMessage, { t: 'status' }>;
export type SnapshotMessage = Extract<PeerMessage, { t: 'snapshot' }>;
export type SnapshotPartMessage = Extract<PeerMessage, { t: 'snapshot-part' }>;
export type SnapshotBeginMessage = Extract<PeerMessage, { t: 'snapshot-begin' }>;
export type { FailoverView, NodePhase, ReplicationLag };

export type DecodedPeerMessage = { ok: true; message: ReceivedPeerMessage } | { ok: false; error: string };

/**
 * One line (without its newline) → a message. `ev` batches skip zod (their events are checked as
 * they are applied), and so do snapshot parts (their entries are checked by hand, all of them).
 */
export function decodePeerMessage(line: string): DecodedPeerMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  if (typeof value === 'object' && value !== null && (value as { t?: unknown }).t === 'ev') {
    const ev = value as { seq?: unknown; e?: unknown };
    if (typeof ev.seq === 'number' && Array.isArray(ev.e)) return { ok: true, message: value as ReceivedPeerMessage };
    return { ok: false, error: 'malformed ev batch' };
  }
  if (typeof value === 'object' && value !== null && (value as { t?: unknown }).t === 'snapshot-part') {
    const { cont, holders, waiters } = value as { cont?: unknown; holders?: unknown; waiters?: unknown };
    if (!isSnapshotHolders(holders)) return { ok: false, error: 'malformed snapshot holder' };
    if (!isSnapshotWaiters(waiters)) return { ok: false, error: 'malformed snapshot waiter' };
    if (cont !== undefined && typeof cont !== 'string') return { ok: false, error: 'malformed snapshot part' };
    return { ok: true, message: cont === undefined ? { t: 'snapshot-part', holders, waiters } : { t: 'snapshot-part', cont, holders, waiters } };
  }
  const parsed = messages.safeParse(value);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0]?.message ?? 'malformed message' };
  return { ok: true, message: parsed.data };
}

export function encodePeerMessage(message: PeerMessage): string {
  return `${JSON.stringify(message)}\n`;
}
