// The token blocks of the etcd mode (issue 32, design rule 5): the active takes each block by a
// compare-and-swap on `<prefix>/token-ceiling`, guarded by its lease on `<prefix>/active`
// (etcd-block-reserver.ts), above its own floor. lib/tokens/supplied-token-source.ts issues from
// them. A reservation keeps trying through etcd's faults (a lost answer is never used: the
// reserver re-reads and takes the block above it) and ends only when a block is won, when the
// role key no longer carries this node's lease (NotRoleHolder: onNotHolder says the node must
// step out, and no block is taken), or when no block fits below 2^64.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import { DEFAULT_ETCD_TOKEN_BLOCK } from '../../lib/cluster/cluster-config.ts';
import type { Block } from '../../lib/coordination/block-reservation.ts';
import { TokensExhausted } from '../../lib/coordination/block-reservation.ts';
import { EtcdBlockReserver, NotRoleHolder } from './etcd-block-reserver.ts';
import type { EtcdCoordination } from './etcd-coordination.ts';

/**
 * Tokens per etcd block when `--etcd-token-block` is not given (lib/cluster/cluster-config.ts says
 * why a million, and why the flag stays inside the ceiling guard's reach: standbys then take the
 * active's tokens as they come).
 */
export const ETCD_TOKEN_BLOCK = BigInt(DEFAULT_ETCD_TOKEN_BLOCK);
const LOG_EVERY_MS = 10_000;

export interface EtcdTokenBlocksOptions {
  client: Etcd3;
  /** The cluster's key prefix, e.g. `baton/<cluster-name>`. */
  prefix: string;
  /** This node's role lease (EtcdRoleHolder.leaseId); null: it holds none, so it takes no block. */
  lease: () => string | null;
  logger: Logger;
  /** Tokens per block; ETCD_TOKEN_BLOCK if not given. */
  size?: bigint;
  /** The role key does not carry this node's lease: it must not issue (the core steps out). */
  onNotHolder?: () => void;
  /** Pause between rounds of tries after etcd failed a whole round (ms); 250 if not given. */
  retryMs?: number;
  /** Deadline of each etcd call (ms); 1,000 if not given. */
  callTimeoutMs?: number;
}

export class EtcdTokenBlocks {
  readonly size: bigint;
  private readonly reserver: EtcdBlockReserver;
  private stoppedNow = false;
  private readonly stopping = new AbortController();
  private loggedAt = Number.NEGATIVE_INFINITY;
  /** Blocks won (the etcd load this adds is about this many compare-and-swaps, plus `lost`). */
  reserved = 0;

  constructor(private readonly o: EtcdTokenBlocksOptions) {
    this.size = o.size ?? ETCD_TOKEN_BLOCK;
    this.reserver = new EtcdBlockReserver({
      client: o.client,
      key: `${o.prefix}/token-ceiling`,
      size: this.size,
      role: { key: `${o.prefix}/active`, lease: o.lease },
      callTimeoutMs: o.callTimeoutMs ?? 1_000,
      maxTries: 4,
    });
  }

  /** Compare-and-swaps sent, and those that lost to another writer (or found the key moved by hand). */
  get tries(): number {
    return this.reserver.tries;
  }

  get lost(): number {
    return this.reserver.lost;
  }

  /** The next block above the etcd ceiling and above `floor`. */
  async reserve(floor: bigint): Promise<Block> {
    // No lease to offer: the node knows it is not the active (a standby, or one that stepped out), so nothing to say.
    if (this.o.lease() === null) throw new NotRoleHolder(`${this.o.prefix}/active`);
    for (;;) {
      if (this.stoppedNow) throw new Error('etcd token blocks stopped: no block reserved');
      try {
        const block = await this.reserver.reserve(floor);
        this.reserved++;
        return block;
      } catch (err) {
        if (err instanceof NotRoleHolder) {
          this.o.logger.warn({ err }, 'token block refused: this node does not hold the active role in etcd; it must not issue tokens');
          this.o.onNotHolder?.();
          throw err;
        }
        if (err instanceof TokensExhausted) throw err;
        this.logFailure(err);
      }
      await this.pause();
    }
  }

  get stopped(): boolean {
    return this.stoppedNow;
  }

  /** Ends every reservation at its next round (a node shutting down). */
  stop(): void {
    this.stoppedNow = true;
    this.stopping.abort();
  }

  private async pause(): Promise<void> {
    if (this.stoppedNow) return;
    // Rejects at once when stopped: the next round then says so.
    await sleep(this.o.retryMs ?? 250, undefined, { signal: this.stopping.signal }).catch(() => {});
  }

  private logFailure(err: unknown): void {
    const now = performance.now();
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = now;
    this.o.logger.error({ err }, 'no token block reserved in etcd yet (retrying): grants wait for one once the block in use is spent');
  }
}

/**
 * A node's token blocks in the etcd mode, from its coordination: reserved only while its holder
 * holds the role key (a standby asks etcd nothing). A refusal means the key is not under this
 * node's lease although the holder thought it was: the node resigns (its holder says 'released',
 * and the node steps out as after a lost lease) and campaigns again with a new lease.
 */
export function tokenBlocksOf(
  coordination: Pick<EtcdCoordination, 'client' | 'holder' | 'resign'>,
  prefix: string,
  logger: Logger,
  size?: bigint,
): EtcdTokenBlocks {
  const holder = coordination.holder;
  const blocks: EtcdTokenBlocks = new EtcdTokenBlocks({
    client: coordination.client,
    prefix,
    lease: () => (holder.holding ? holder.leaseId : null),
    logger,
    ...(size === undefined ? {} : { size }),
    onNotHolder: () => {
      if (!holder.holding) return;
      void coordination.resign().then(() => {
        if (!blocks.stopped) holder.start();
      });
    },
  });
  return blocks;
}
