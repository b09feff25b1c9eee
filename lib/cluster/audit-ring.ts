// The audit entries a node keeps in memory: its own and those its peers replicated to it, in
// time order, each once. Bounded twice: at most `capacity` entries and at most `byteBudget`
// bytes of them (auditEntryBytes: every field is bounded, so this is a ceiling, not a guess);
// past either the oldest go. Entries carry a cluster-unique `id` (node, process instance,
// count); one without (read back from an older audit.log) is never a duplicate of anything.
//
// Each entry kept gets an arrival position (`seq`, 1, 2, … in this process): pages walk back in
// time from a cursor (time, seq), so entries that arrive while an operator pages (newer ones,
// and a peer's catch-up of older ones) never shift a page or show twice in the walk; what
// arrived since a position is asked by `seq` (since()), whatever its time.
// Pure: no clock, no I/O (server/audit/audit-log.ts owns the file).
import type { AuditEntry } from '../ops-api/api-types.ts';
import { AUDIT_FIELD_MAX } from './peer-messages.ts';
import { type AuditCursor, type AuditFilter, type AuditRow, encodeAuditCursor, matchesAudit } from '../ops-api/audit-filter.ts';

interface Slot {
  entry: AuditEntry;
  seq: number;
  bytes: number;
}

/** What an entry costs in memory at most: two bytes a character (UTF-16) plus the object, the slot and the id's place in the set. */
export function auditEntryBytes(e: AuditEntry): number {
  const chars = e.who.length + e.action.length + e.target.length + e.result.length + (e.detail?.length ?? 0) + (e.node?.length ?? 0) + 2 * (e.id?.length ?? 0);
  return 2 * chars + ENTRY_OVERHEAD_BYTES;
}
/** The object, its slot, numbers and pointers, the Set's entry: generous for V8 on 64-bit. */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * The entry with every text field within the peer protocol's bounds (lib/cluster/peer-messages.ts),
 * a longer one cut with an ellipsis: what the ring keeps, so its byte ceiling holds whatever
 * was recorded (the node's own file keeps its own entries whole).
 */
export function boundAuditEntry(e: AuditEntry): AuditEntry {
  const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
  if (
    e.who.length <= AUDIT_FIELD_MAX.who &&
    e.target.length <= AUDIT_FIELD_MAX.target &&
    e.result.length <= AUDIT_FIELD_MAX.result &&
    (e.detail?.length ?? 0) <= AUDIT_FIELD_MAX.detail &&
    (e.node?.length ?? 0) <= AUDIT_FIELD_MAX.node &&
    (e.id?.length ?? 0) <= AUDIT_FIELD_MAX.id
  ) {
    return e;
  }
  const out: AuditEntry = {
    ...e,
    who: cut(e.who, AUDIT_FIELD_MAX.who),
    target: cut(e.target, AUDIT_FIELD_MAX.target),
    result: cut(e.result, AUDIT_FIELD_MAX.result),
    detail: e.detail === null ? null : cut(e.detail, AUDIT_FIELD_MAX.detail),
  };
  if (e.node !== undefined) out.node = cut(e.node, AUDIT_FIELD_MAX.node);
  // An id is never cut (it would stop telling entries apart); one too long is dropped, like an old line's.
  if (e.id !== undefined && e.id.length > AUDIT_FIELD_MAX.id) delete out.id;
  return out;
}

function before(s: Slot, c: AuditCursor): boolean {
  return s.entry.at < c.at || (s.entry.at === c.at && s.seq < c.seq);
}

function row(s: Slot): AuditRow {
  return { ...s.entry, seq: s.seq };
}

export class AuditRing {
  private readonly slots: Slot[] = [];
  private readonly ids = new Set<string>();
  private bytes = 0;
  private lastSeq = 0;

  constructor(
    private readonly capacity: number,
    initial: readonly AuditEntry[] = [],
    private readonly byteBudget = Number.POSITIVE_INFINITY,
  ) {
    this.merge(initial);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Bytes the kept entries cost at most (auditEntryBytes); never above the budget. */
  get byteSize(): number {
    return this.bytes;
  }

  /** The newest arrival position (0 before the first entry). */
  get latest(): number {
    return this.lastSeq;
  }

  /** Whether an entry with this id is kept. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  /**
   * Adds the entries not kept yet, each at its place in time (after entries with the same `at`:
   * arrival order breaks ties), and returns those added. An entry older than everything kept
   * while the ring is full is not added (it would be the first to go).
   */
  merge(incoming: readonly AuditEntry[]): AuditEntry[] {
    const added: Slot[] = [];
    for (const given of incoming) {
      const e = boundAuditEntry(given);
      if (e.id !== undefined && this.ids.has(e.id)) continue;
      const oldest = this.slots[0];
      const bytes = auditEntryBytes(e);
      const full = this.slots.length >= this.capacity || this.bytes + bytes > this.byteBudget;
      if (full && oldest !== undefined && e.at < oldest.entry.at) continue;
      // Entries mostly arrive in order: look for the place from the end.
      let i = this.slots.length;
      while (i > 0 && (this.slots[i - 1] as Slot).entry.at > e.at) i--;
      const slot: Slot = { entry: e, seq: ++this.lastSeq, bytes };
      this.slots.splice(i, 0, slot);
      this.bytes += bytes;
      if (e.id !== undefined) this.ids.add(e.id);
      added.push(slot);
    }
    const gone = this.trim();
    return added.filter((s) => !gone.has(s)).map((s) => s.entry);
  }

  /** The newest `limit` entries, newest last. */
  recent(limit: number): AuditEntry[] {
    return limit <= 0 ? [] : this.slots.slice(-limit).map((s) => s.entry);
  }

  /**
   * The newest `limit` entries that match `filter` and come before `cursor` in time (all, with
   * none), newest last; `older` is the cursor for the page before it, null when none is kept.
   */
  page(filter: AuditFilter, cursor: AuditCursor | null, limit: number): { entries: AuditRow[]; older: string | null } {
    let i = this.slots.length;
    if (cursor !== null) {
      // Binary search for the first slot not before the cursor: slots are in (at, seq) order.
      let lo = 0;
      let hi = this.slots.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (before(this.slots[mid] as Slot, cursor)) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    const out: AuditRow[] = [];
    let older: string | null = null;
    for (i--; i >= 0; i--) {
      const s = this.slots[i] as Slot;
      if (!matchesAudit(s.entry, filter)) continue;
      if (out.length === limit) {
        const last = out[out.length - 1] as AuditRow;
        older = encodeAuditCursor({ at: last.at, seq: last.seq });
        break;
      }
      out.push(row(s));
    }
    return { entries: out.reverse(), older };
  }

  /**
   * The entries that match `filter` and arrived after position `after` (in arrival order, the
   * first `limit` of them), newest last; `latest` is the position to ask from next time.
   */
  since(filter: AuditFilter, after: number, limit: number): { entries: AuditRow[]; latest: number; more: boolean } {
    const arrived = this.slots.filter((s) => s.seq > after && matchesAudit(s.entry, filter)).sort((x, y) => x.seq - y.seq);
    if (arrived.length <= limit) return { entries: this.inTimeOrder(arrived), latest: this.lastSeq, more: false };
    const taken = arrived.slice(0, limit);
    return { entries: this.inTimeOrder(taken), latest: (taken[taken.length - 1] as Slot).seq, more: true };
  }

  private inTimeOrder(slots: Slot[]): AuditRow[] {
    return slots.sort((x, y) => x.entry.at - y.entry.at || x.seq - y.seq).map(row);
  }

  /** Drops the oldest past either bound; returns the slots dropped. */
  private trim(): Set<Slot> {
    let over = 0;
    let bytes = this.bytes;
    while (over < this.slots.length && (this.slots.length - over > this.capacity || bytes > this.byteBudget)) {
      bytes -= (this.slots[over] as Slot).bytes;
      over++;
    }
    if (over === 0) return new Set();
    const gone = this.slots.splice(0, over);
    this.bytes = bytes;
    for (const s of gone) if (s.entry.id !== undefined) this.ids.delete(s.entry.id);
    return new Set(gone);
  }
}
