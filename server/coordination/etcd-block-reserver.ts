// Token blocks reserved in etcd by compare-and-swap (issue 32; etcd-token-blocks.ts drives it): the
// etcd side of lib/coordination/block-reservation.ts. One transaction per try: if the ceiling key is
// at the revision last read (and, when guarded, the role key still carries this node's lease), write
// the new ceiling; otherwise read both back, so a lost swap retries without another round trip.
import type { Etcd3, ICompare, IRequestOp, ITxnResponse } from 'etcd3';
import {
  ABSENT,
  type Block,
  type CeilingRead,
  judgeReply,
  parseCeiling,
  type ReservationReply,
  type ReservationRequest,
  type RoleGuard,
  reservationRequest,
  encodeCeiling,
  TokensExhausted,
} from '../../lib/coordination/block-reservation.ts';

export interface BlockReserverOptions {
  client: Etcd3;
  /** The ceiling key, e.g. `baton/<cluster>/token-ceiling`. */
  key: string;
  /** Tokens per block. */
  size: bigint;
  /** When given, only the holder of this role key under this lease may reserve (the active's reserver). */
  role?: { key: string; lease: () => string | null };
  /** Deadline of each etcd call (ms); 1,000 if not given. */
  callTimeoutMs?: number;
  /** Tries (transactions) before reserve() gives up; 16 if not given. */
  maxTries?: number;
}

/** The role key no longer carries this node's lease: it is not the active and must not issue tokens. */
export class NotRoleHolder extends Error {
  constructor(key: string) {
    super(`not the holder of ${key}: no token block reserved`);
    this.name = 'NotRoleHolder';
  }
}

export class EtcdBlockReserver {
  /** What this node last knew of the ceiling key (after its own swap, the value it wrote). */
  private read: CeilingRead | null = null;
  /** Swaps tried, and those that lost to another writer (for logs and the console later). */
  tries = 0;
  lost = 0;

  constructor(private readonly o: BlockReserverOptions) {}

  /**
   * Reserves the next block above the ceiling and above `floor` (the highest token this node has
   * issued or heard of). A swap whose answer did not come (a timeout, etcd without quorum) may have
   * been applied: its block is never used, and the next try re-reads, so it is skipped, not reused.
   */
  async reserve(floor = 0n): Promise<Block> {
    const maxTries = this.o.maxTries ?? 16;
    let lastError: unknown;
    for (let i = 0; i < maxTries; i++) {
      try {
        if (this.read === null) this.read = await this.readCeiling();
        const request = reservationRequest(this.read, this.o.size, floor, this.guard());
        this.tries++;
        const res = await this.o.client.kv.txn(this.txn(request), { deadline: Date.now() + this.timeoutMs() });
        const judged = judgeReply(request, this.reply(res));
        if (judged.kind === 'reserved') {
          this.read = { ceiling: request.newCeiling, modRevision: BigInt(res.header.revision) };
          return judged.block;
        }
        if (judged.kind === 'not-holder') throw new NotRoleHolder(this.o.role?.key ?? '');
        this.lost++;
        this.read = judged.read;
      } catch (error) {
        // Neither is an unknown outcome: no try can succeed (the role is gone, or no block fits below 2^64).
        if (error instanceof NotRoleHolder || error instanceof TokensExhausted) throw error;
        // Unknown outcome: forget what was read, so the next try starts from etcd's value.
        this.read = null;
        lastError = error;
      }
    }
    throw new Error(`no token block reserved in etcd after ${maxTries} tries`, { cause: lastError });
  }

  /** The role guard of the next swap (none when unguarded); a node with no lease is not the holder. */
  private guard(): RoleGuard | undefined {
    if (this.o.role === undefined) return undefined;
    const lease = this.o.role.lease();
    if (lease === null) throw new NotRoleHolder(this.o.role.key);
    return { lease: BigInt(lease) };
  }

  private timeoutMs(): number {
    return this.o.callTimeoutMs ?? 1_000;
  }

  private async readCeiling(): Promise<CeilingRead> {
    const res = await this.o.client.kv.range({ key: Buffer.from(this.o.key) }, { deadline: Date.now() + this.timeoutMs() });
    const kv = res.kvs[0];
    return kv === undefined ? ABSENT : { ceiling: parseCeiling(kv.value.toString()), modRevision: BigInt(kv.mod_revision) };
  }

  private txn(request: ReservationRequest): { compare: ICompare[]; success: IRequestOp[]; failure: IRequestOp[] } {
    const key = Buffer.from(this.o.key);
    const compare: ICompare[] = [{ key, target: 'Mod', result: 'Equal', mod_revision: request.expectModRevision.toString() }];
    const failure: IRequestOp[] = [{ request_range: { key } }];
    if (this.o.role !== undefined && request.roleGuard !== undefined) {
      const roleKey = Buffer.from(this.o.role.key);
      compare.push({ key: roleKey, target: 'Lease', result: 'Equal', lease: request.roleGuard.lease.toString() });
      failure.push({ request_range: { key: roleKey } });
    }
    return { compare, success: [{ request_put: { key, value: Buffer.from(encodeCeiling(request.newCeiling)) } }], failure };
  }

  private reply(res: ITxnResponse): ReservationReply {
    if (res.succeeded) return { succeeded: true };
    const kv = res.responses[0]?.response_range.kvs[0];
    const current = kv === undefined ? ABSENT : { ceiling: parseCeiling(kv.value.toString()), modRevision: BigInt(kv.mod_revision) };
    const role = res.responses[1]?.response_range.kvs[0];
    return { succeeded: false, current, roleLease: role === undefined ? null : BigInt(role.lease) };
  }
}
