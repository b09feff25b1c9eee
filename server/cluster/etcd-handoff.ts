// The etcd mode's parts of a graceful handoff (design rule 7), called by cluster-transitions.ts
// (handoff and takeOver): the active narrows the in-sync set to its successor and itself and
// waits for the successor's acknowledgement before it sends the handoff and revokes its lease;
// the successor campaigns at once and promotes only once it holds the role key.
import type { Clock } from '../../lib/engine/clock.ts';
import type { NodePhase } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { EtcdCoordination } from '../coordination/etcd-coordination.ts';
import type { ReplicationSource } from './replication-source.ts';
import type { Logger } from 'pino';

/** What the active's part reads. */
interface HandingOff {
  readonly self: { readonly id: string };
  readonly clock: Clock;
  readonly state: { readonly phase: NodePhase };
  readonly source: Pick<ReplicationSource, 'streaming' | 'lags'>;
}

/**
 * The etcd mode's first part of a handoff (design rule 7), with clients held and the last events
 * sent: the in-sync set narrowed to the successor and this node through the reply gate's keeper
 * (stored, so no other node can win once the key goes; the gate then waits for the successor
 * alone), then the successor's acknowledgement of every event sent. The lease is
 * revoked after the handoff message (grants stop at once; the key goes, and the successor, which
 * campaigns from the message on, wins). False, with the key still held, when the set cannot be
 * stored or the successor does not acknowledge in time.
 */
export async function narrowToSuccessor(node: HandingOff, etcd: Pick<EtcdCoordination, 'narrowInSync'>, to: string, timeoutMs: number): Promise<boolean> {
  const deadline = node.clock.now() + timeoutMs;
  // Through the reply gate's keeper: until etcd stores it replies wait for the old set and `to`,
  // then for `to` alone (a reply `to` acked goes out, whatever the other standbys do).
  if (!(await etcd.narrowInSync(to))) return false;
  for (;;) {
    if (!node.source.streaming(to) || node.state.phase !== 'handing-off') return false;
    if (node.source.lags()[to]?.events === 0) break;
    if (node.clock.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return true;
}

/**
 * The successor's part: campaigns at once (its predecessor resigns the key right after the handoff
 * message) and resolves true once this node holds the key; false after `timeoutMs`. The decision
 * timer does not promote meanwhile (etcdTakeOver): the takeover does, as a handoff.
 */
export async function winAsSuccessor(
  node: { readonly clock: Clock; readonly logger: Pick<Logger, 'info'>; readonly state: { etcdTakeOver: boolean } },
  etcd: Pick<EtcdCoordination, 'win'>,
  timeoutMs: number,
): Promise<boolean> {
  const t0 = node.clock.now();
  node.state.etcdTakeOver = true;
  const won = await etcd.win(timeoutMs);
  node.state.etcdTakeOver = false;
  node.logger.info({ won, ms: Math.round(node.clock.now() - t0) }, 'campaigned for the role key as the successor of a handoff');
  return won;
}
