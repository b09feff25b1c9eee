// The etcd mode's token source as the daemon builds it (lib/tokens/supplied-token-source.ts): its
// blocks from etcd (server/coordination/etcd-token-blocks.ts), each recorded in the data dir, and
// the engine's grant gate shut while no block is in hand, so requests wait rather than fail.
import type { Logger } from 'pino';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { type BlockSupplier, SuppliedTokenSource } from '../../lib/tokens/supplied-token-source.ts';
import type { CeilingStore } from '../../lib/tokens/token-source.ts';
import { NotRoleHolder } from '../coordination/etcd-block-reserver.ts';

/** What the source drives once a block runs out or arrives; built after the source (the engine needs it). */
export interface TokenGate {
  engine: Pick<LockEngine, 'awaitTokens' | 'tokensArrived'>;
  driver: { poke(): void };
}

/** `gate` is read only when a block runs out or arrives, never while the daemon is still being built. */
export function suppliedTokens(supplier: BlockSupplier, dataDir: CeilingStore, log: Logger, gate: () => TokenGate): SuppliedTokenSource {
  return new SuppliedTokenSource({
    supplier,
    // Recorded in this node's data dir only: the standbys take the active's tokens from its stream.
    store: dataDir,
    onStarved: () => gate().engine.awaitTokens(),
    onSupplied: () => {
      const { engine, driver } = gate();
      engine.tokensArrived();
      // A lock granted now has a lease to time.
      driver.poke();
    },
    onError: (err) => {
      // Refused as not the holder: the node stepped out (etcd-token-blocks.ts said so if it was news).
      if (err instanceof NotRoleHolder) log.info({ err }, 'no token block: this node does not hold the active role');
      else log.error({ err }, 'token block from etcd not reserved, or its ceiling not recorded in the data dir');
    },
  });
}
