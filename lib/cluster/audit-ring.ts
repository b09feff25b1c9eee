// The audit entries a node keeps in memory: its own and those its peers replicated to it, in
// time order, each once. Bounded: past `capacity` the oldest go. Entries carry a cluster-unique
// `id` (node, process instance, count); one without (read back from an older audit.log) is
// never a duplicate of anything. Pure: no clock, no I/O (server/audit/audit-log.ts
// owns the file).
import type { AuditEntry } from '../ops-api/api-types.ts';

export class AuditRing {
  private readonly entries: AuditEntry[] = [];
  private readonly ids = new Set<string>();

  constructor(
    private readonly capacity: number,
    initial: readonly AuditEntry[] = [],
  ) {
    this.merge(initial);
  }

  get size(): number {
    return this.entries.length;
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
    const added: AuditEntry[] = [];
    for (const e of incoming) {
      if (e.id !== undefined && this.ids.has(e.id)) continue;
      const oldest = this.entries[0];
      if (this.entries.length >= this.capacity && oldest !== undefined && e.at < oldest.at) continue;
      // Entries mostly arrive in order: look for the place from the end.
      let i = this.entries.length;
      while (i > 0 && (this.entries[i - 1] as AuditEntry).at > e.at) i--;
      this.entries.splice(i, 0, e);
      if (e.id !== undefined) this.ids.add(e.id);
      added.push(e);
    }
    this.trim();
    return added.filter((e) => e.id === undefined || this.ids.has(e.id));
  }

  /** The newest `limit` entries, newest last. */
  recent(limit: number): AuditEntry[] {
    return limit <= 0 ? [] : this.entries.slice(-limit);
  }

  private trim(): void {
    const over = this.entries.length - this.capacity;
    if (over <= 0) return;
    for (const gone of this.entries.splice(0, over)) if (gone.id !== undefined) this.ids.delete(gone.id);
  }
}
