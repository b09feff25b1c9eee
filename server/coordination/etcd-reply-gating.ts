// The etcd mode's reply rule as one object for the node to hold (issue 32 rule 6): the reply gate
// on the daemon's flush scheduler and the in-sync keeper over the replication source. The node
// calls activate() once it holds the role key and is active (the holder stored [] when it won),
// before it answers anything, and deactivate() when it steps out or stops being active for any
// reason: held replies are dropped and their connections closed. Peers mode builds none of this.
import { DEFAULT_LAG_BOUND_MS, InSyncKeeper, type StandbySource, standbysOf } from './in-sync-keeper.ts';
import { type GatedScheduler, type GatedStream, ReplyGate } from './reply-gate.ts';

/** The replication source as this needs it (ReplicationSource fits). */
export interface GatingSource extends GatedStream, StandbySource {
  onSyncedAck(listener: ((id: string, seq: number) => void) | null): void;
}

export interface EtcdReplyGatingOptions {
  source: GatingSource;
  scheduler: GatedScheduler;
  /** Stores the in-sync set if this node still holds the role key: `(m) => holder.storeInSync(m)`. */
  store: (members: string[]) => Promise<boolean>;
  /** A member whose oldest unacked batch is older than this is taken out; DEFAULT_LAG_BOUND_MS if not given. */
  lagBoundMs?: number;
  /** At most this many members (`--etcd-in-sync`); every synced standby if not given. */
  maxMembers?: number;
  /** Node ids in priority order (the cluster file's): the keeper prefers the first ones. */
  priority?: readonly string[];
  /** Whether the keeper may change the set now (the node is active and not handing off). */
  mayChange?: () => boolean;
  /** Each change of the set etcd stored, or a write that failed (for the log). */
  onChange?: (event: { members: string[]; stored: boolean; error?: Error }) => void;
}

export class EtcdReplyGating {
  readonly gate: ReplyGate;
  readonly keeper: InSyncKeeper;
  private readonly ack = (id: string, seq: number): void => this.gate.ack(id, seq);

  constructor(private readonly o: EtcdReplyGatingOptions) {
    this.gate = new ReplyGate(o.source);
    this.gate.attach(o.scheduler);
    this.keeper = new InSyncKeeper({
      gate: this.gate,
      store: o.store,
      standbys: standbysOf(o.source),
      lagBoundMs: o.lagBoundMs ?? DEFAULT_LAG_BOUND_MS,
      ...(o.onChange === undefined ? {} : { onChange: o.onChange }),
      ...(o.mayChange === undefined ? {} : { mayChange: o.mayChange }),
      ...(o.maxMembers === undefined ? {} : { maxMembers: o.maxMembers }),
      ...(o.priority === undefined ? {} : { priority: o.priority }),
    });
  }

  /** This node is active under the role key, whose in-sync set etcd stores as [] (the campaign wrote it). */
  activate(): void {
    this.gate.activate([]);
    this.o.source.onSyncedAck(this.ack);
    this.keeper.start();
  }

  /** This node is no longer active: nothing held is ever written. */
  deactivate(): void {
    this.keeper.stop();
    this.o.source.onSyncedAck(null);
    this.gate.deactivate();
  }

  get active(): boolean {
    return this.gate.active;
  }
}
