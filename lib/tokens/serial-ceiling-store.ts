// A ceiling store that several writers share. In a cluster, the token source saves the ceilings
// it reserves (while the node is active) and the replication sink saves the ceilings the active
// reports (while it is a standby), both through saveAhead on the one store. A CeilingStore
// must never see two saveAhead calls at once, and a lower ceiling written after a higher one
// would make load() go down: this wrapper queues the calls one after another and skips every
// call whose ceiling an earlier, completed save already covers. A blocking save() may still run
// while a saveAhead is in flight: the inner store must keep the two apart (FileCeilingStore
// writes them to two files and loads the larger).
import type { CeilingStore } from './token-source.ts';

export class SerialCeilingStore implements CeilingStore {
  /** The highest ceiling a completed save made durable. */
  private saved: bigint;
  /** The last queued saveAhead, settled or not; never rejects (each caller gets its own result). */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly inner: CeilingStore) {
    this.saved = inner.load();
  }

  /**
   * The highest ceiling this store has made durable (or found at start), without reading the
   * disk: cheap enough for every heartbeat. load() also asks the inner store.
   */
  get savedCeiling(): bigint {
    return this.saved;
  }

  /** The highest durable ceiling. */
  load(): bigint {
    const stored = this.inner.load();
    return stored > this.saved ? stored : this.saved;
  }

  save(ceiling: bigint): void {
    if (ceiling <= this.saved) return;
    this.inner.save(ceiling);
    this.saved = ceiling;
  }

  saveAhead(ceiling: bigint): Promise<void> {
    const run = this.tail.then(async () => {
      // Checked when its turn comes, not when queued: a save queued before it may cover it.
      if (ceiling <= this.saved) return;
      if (this.inner.saveAhead === undefined) this.inner.save(ceiling);
      else await this.inner.saveAhead(ceiling);
      if (ceiling > this.saved) this.saved = ceiling;
    });
    this.tail = run.catch(() => {});
    return run;
  }

  /** Resolves once every queued save has settled (tests, shutdown). */
  async settled(): Promise<void> {
    await this.tail;
  }
}
