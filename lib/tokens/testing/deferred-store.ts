// A ceiling store whose background saves complete (or fail) only when the test says so, and
// that records what it was asked to save and how many saves were in flight at once. Like
// FileCeilingStore it keeps the two kinds of save apart and loads the larger; among background
// saves the one that completes last wins, as a file renamed into place would.
import type { CeilingStore } from '../token-source.ts';

export class DeferredStore implements CeilingStore {
  blockingCeiling = 0n;
  aheadCeiling = 0n;
  blockingSaves: bigint[] = [];
  aheadSaves: bigint[] = [];
  /** The most background saves that were in flight at the same time. */
  maxInFlight = 0;
  private pending: Array<{ ceiling: bigint; resolve: () => void; reject: (err: Error) => void }> = [];
  load(): bigint {
    return this.blockingCeiling > this.aheadCeiling ? this.blockingCeiling : this.aheadCeiling;
  }
  save(ceiling: bigint): void {
    this.blockingSaves.push(ceiling);
    this.blockingCeiling = ceiling;
  }
  saveAhead(ceiling: bigint): Promise<void> {
    this.aheadSaves.push(ceiling);
    this.maxInFlight = Math.max(this.maxInFlight, this.pending.length + 1);
    return new Promise((resolve, reject) => this.pending.push({ ceiling, resolve, reject }));
  }
  get inFlight(): number {
    return this.pending.length;
  }
  /** Completes every save in flight, in the order they were asked for. */
  finish(): void {
    for (const p of this.pending.splice(0)) {
      this.aheadCeiling = p.ceiling;
      p.resolve();
    }
  }
  /** Completes only the oldest save in flight. */
  finishFirst(): void {
    const p = this.pending.shift();
    if (p === undefined) throw new Error('no save in flight');
    this.aheadCeiling = p.ceiling;
    p.resolve();
  }
  fail(): void {
    for (const p of this.pending.splice(0)) p.reject(new Error('disk full'));
  }
}
