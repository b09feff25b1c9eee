// The token ceiling store of a clustered node: a ceiling the token source reserves is stored
// on this node's disk and sent to every standby streaming from it, and a block reserved ahead
// is issued from only once this node and every such standby have stored it. A standby that
// takes over then never issues a token this node may have issued (replication-source.ts cuts
// off a standby that does not answer, rather than holding up the tokens).
import type { CeilingStore } from '../../lib/tokens/token-source.ts';
import type { ReplicationSource } from './replication-source.ts';

/** The standbys, as the replication source reaches them. */
export type CeilingPeers = Pick<ReplicationSource, 'broadcastCeiling' | 'awaitCeiling'>;

export class CeilingFanOut implements CeilingStore {
  /** Null until the cluster node exists (it needs the token source, which needs this store). */
  private peers: CeilingPeers | null = null;

  constructor(private readonly durable: CeilingStore & { saveAhead(ceiling: bigint): Promise<void> }) {}

  /** From now on every ceiling also goes to the standbys. */
  attach(peers: CeilingPeers): void {
    this.peers = peers;
  }

  load(): bigint {
    return this.durable.load();
  }

  /** Stored here first (a failure throws before any standby hears of it), then sent to the standbys without waiting. */
  save(ceiling: bigint): void {
    this.durable.save(ceiling);
    this.peers?.broadcastCeiling(ceiling);
  }

  /** Resolves once this node and every streaming standby have stored it (both start at once). */
  async saveAhead(ceiling: bigint): Promise<void> {
    await Promise.all([this.durable.saveAhead(ceiling), this.peers?.awaitCeiling(ceiling)]);
  }
}
