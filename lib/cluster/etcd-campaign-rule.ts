// Whether a node may campaign for the active role key in the etcd mode (design rule 3, docs/cluster.md
// "Two modes"): a pure rule over the node's own state. Winning the key makes a node active at once,
// so only a node whose table is whole may try: serving part of a table would lose the rest.
//
// - A standby synced with the active it followed holds that active's whole table (the in-sync set
//   etcd stores says, on top of this, whether it has everything that active answered).
// - An active that stepped out (its lease lapsed at etcd) keeps its own table: whole.
// - A node that never held any table (a new process) may campaign only in a new cluster: when no
//   in-sync set was ever stored (`storedInSync` null, or not read yet), and after its start-up
//   wait. Once a set is stored, some node holds the cluster's table, and an empty one must not win.
// - A standby that asked its active for a snapshot again (`syncing`: the active went silent and
//   came back, or a restarted process took its place on the peer link) keeps its whole table until
//   the new snapshot begins (snapshot-begin clears syncedWith), so it may campaign meanwhile: once
//   that active is dead or cut off, no snapshot comes, and a rule that waited for one left every
//   standby syncing and nobody campaigning (the CI chaos run of seed 4926: kill -9 of the active,
//   restarted with an empty table, which is not electable).
// - Never while leaving (shutting down), stopped, holding only part of a table (a join cut short),
//   or syncing into a table begun over (syncedWith null: its table is being replaced).
import type { NodePhase } from '../ops-api/cluster-vocabulary.ts';

export interface CampaignInput {
  phase: NodePhase;
  /** This process's instance. */
  instance: string;
  /** Instance of the active whose state the node's table holds (its own when it was active). */
  syncedWith: string | null;
  /** Instance of the last active the node followed (its own after it stepped out). */
  lastActiveInstance: string | null;
  stopped: boolean;
  leaving: boolean;
  /** Holds part of an active's table only (role-decider.ts holdsPartialTable). */
  partial: boolean;
  /** Whether the start-up wait is over. */
  discovered: boolean;
}

/** `storedInSync`: the in-sync set etcd stores as last read (undefined: not read yet; null: never stored). */
export function mayCampaign(i: CampaignInput, storedInSync: ReadonlySet<string> | null | undefined): boolean {
  if (i.stopped || i.leaving || i.partial) return false;
  if ((i.phase === 'standby' || i.phase === 'syncing') && i.syncedWith !== null) return true;
  if (i.phase === 'discovering' && i.syncedWith === i.instance) return true;
  const fresh = i.phase === 'discovering' && i.syncedWith === null && i.lastActiveInstance === null;
  return fresh && i.discovered && (storedInSync === null || storedInSync === undefined);
}
