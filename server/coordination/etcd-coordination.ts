// One node's part in the etcd mode (`baton serve --coordination etcd`, docs/cluster.md "Two
// modes"): its etcd client, its role holder (etcd-role-holder.ts) on `<prefix>/active` with the
// in-sync set on `<prefix>/in-sync`, and what the cluster view shows of them. Built by the daemon
// at start-up in that mode only (the default mode has no such object and pays nothing for it), and
// handed to the ClusterNode, which takes its role from the holder (cluster-etcd-role.ts).
//
// The node binds itself (bind) before start: the holder asks it whether it may campaign (a full
// table, not leaving) and tells it every change of what it may do.
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { EtcdOptions } from '../../lib/cluster/cluster-config.ts';
import type { CoordinationView } from '../../lib/ops-api/api-types.ts';
import { etcdClient } from './etcd-client.ts';
import { EtcdRoleHolder, type HolderEvent } from './etcd-role-holder.ts';
import { encodeInSync } from '../../lib/coordination/sync-gate.ts';

/** How much later each lower-priority node campaigns after the role key went (design rule 3). */
export const CAMPAIGN_STAGGER_MS = 150;
/** The fallback poll of the role key while the watch is down (the watch says at once when it goes). */
export const CAMPAIGN_POLL_MS = 250;

/** What the node tells the coordination (ClusterNode binds itself). */
export interface CoordinationHooks {
  /** Whether this node may campaign now; `storedInSync` is the in-sync set as last read (undefined: not read yet; null: never stored). */
  mayCampaign(storedInSync: ReadonlySet<string> | null | undefined): boolean;
  onHolderEvent(event: HolderEvent): void;
}

/**
 * Where the console's endpoint health comes from: the daemon passes endpoint-health.ts's probe (one
 * status call per endpoint every 2 s). Without one (tests), view() reports every endpoint by the
 * holder's last call (healthy when it succeeded).
 */
export interface EndpointHealthSource {
  start?(): void;
  /** Resolves once its calls under way ended (stop() waits for it before the node's client closes). */
  stop?(): void | Promise<void>;
  snapshot(now: number): CoordinationView['endpoints'];
}

/** What a handoff uses of the in-sync keeper (InSyncKeeper fits). */
export interface InSyncNarrowing {
  narrow(to: string, alsoElectable: readonly string[]): Promise<boolean>;
  resume(): void;
}

export interface EtcdCoordinationOptions {
  etcd: EtcdOptions;
  nodeId: string;
  /** 0 = highest: the campaign stagger is priority × CAMPAIGN_STAGGER_MS. */
  priority: number;
  /** The node's monotonic clock (ms): the engine's clock, as the grant window is read on it. */
  now: () => number;
  logger: Logger;
  /** Tests: an etcd3 client of their own (for the holder too); the endpoints' otherwise. */
  client?: Etcd3;
  endpointHealth?: EndpointHealthSource;
  /** Set when another part (etcd-gate's in-sync keeper) stores the in-sync set: keepInSync then does nothing. */
  inSyncKeptElsewhere?: boolean;
  /**
   * The reply gate's in-sync keeper (in-sync-keeper.ts), when it keeps the set: a handoff narrows
   * the set through it (and resumes it when called off), so the gate waits for exactly what etcd
   * stores; without it the handoff stores the narrowed set itself.
   */
  inSyncKeeper?: () => InSyncNarrowing | null;
  /** etcd-gate's reply gate: how many turns of replies wait for the in-sync standbys (0 without one). */
  repliesWaiting?: () => number;
}

export class EtcdCoordination {
  /** A client over every endpoint (token blocks and other calls that may go to any member). */
  readonly client: Etcd3;
  readonly holder: EtcdRoleHolder;
  private readonly holderClients: readonly Etcd3[];
  readonly keys: { active: string; inSync: string; tokenCeiling: string; quiet: string };
  private hooks: CoordinationHooks | null = null;
  /** The in-sync set this active last stored (its text), and whether a write is on its way. */
  private storedInSync = '';
  private storingInSync = false;
  private stopping: Promise<void> | null = null;
  /** When the holder last finished an etcd call without an error (monotonic ms). */
  private lastOkAt: number | null = null;

  constructor(private readonly o: EtcdCoordinationOptions) {
    const prefix = o.etcd.prefix;
    this.keys = { active: `${prefix}/active`, inSync: `${prefix}/in-sync`, tokenCeiling: `${prefix}/token-ceiling`, quiet: `${prefix}/quiet` };
    this.client = o.client ?? etcdClient(o.etcd.endpoints);
    // The holder's own client per endpoint: it moves to the next one after a failure (etcd-role-holder.ts).
    this.holderClients = o.client === undefined ? o.etcd.endpoints.map((e) => etcdClient([e])) : [o.client];
    this.holder = new EtcdRoleHolder({
      client: this.holderClients,
      key: this.keys.active,
      inSyncKey: this.keys.inSync,
      quietKey: this.keys.quiet,
      nodeId: o.nodeId,
      ttlSeconds: o.etcd.leaseTtlSeconds,
      now: o.now,
      campaignDelayMs: o.priority * CAMPAIGN_STAGGER_MS,
      campaignEveryMs: CAMPAIGN_POLL_MS,
      watch: true,
      mayCampaign: (inSync) => this.hooks?.mayCampaign(inSync) ?? false,
      onEvent: (event) => this.hooks?.onHolderEvent(event),
      onCall: (ok) => {
        if (ok) this.lastOkAt = o.now();
      },
    });
  }

  /** The node this coordination serves (once, before start). */
  bind(hooks: CoordinationHooks): void {
    this.hooks = hooks;
  }

  start(): void {
    this.o.endpointHealth?.start?.();
    this.holder.start();
    this.o.logger.info(
      { endpoints: this.o.etcd.endpoints, prefix: this.o.etcd.prefix, leaseTtlSeconds: this.o.etcd.leaseTtlSeconds },
      'etcd coordination started: the active role is held through an etcd lease',
    );
  }

  /** Gives the role up (revokes the lease: the key goes at once) and stops campaigning until start() again. */
  resign(): Promise<void> {
    return this.holder.resign();
  }

  /**
   * The last active stops with nobody to take over (docs/cluster.md "Stopping the whole cluster"):
   * the in-sync set goes, and nobody takes the role for `quietMs` (the longest lease still running
   * in its table), after which a cluster restarted with empty tables comes up by itself. Called
   * after the protocols drained (nothing more is answered) and before stop() resigns. Never throws:
   * a write that fails leaves the set as it was (an operator's `etcdctl del` then, as before).
   */
  async stopClean(quietMs: number): Promise<void> {
    try {
      const done = await this.holder.stopClean(quietMs);
      if (done)
        this.o.logger.info(
          { quietMs: Math.ceil(quietMs), key: this.keys.quiet },
          'clean stop stored in etcd: nodes may take the role once the quiet period is over',
        );
      else this.o.logger.warn('clean stop not stored: this node no longer holds the role key');
    } catch (err) {
      this.o.logger.warn({ err }, `clean stop not stored in etcd; a restarted cluster needs \`etcdctl del ${this.keys.inSync}\``);
    }
  }

  /** At shutdown: resigns (a standby has no key to give up, but its lease goes too) and closes the client. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const health = this.o.endpointHealth?.stop?.();
      await this.holder.resign();
      await health;
      this.client.close();
      for (const c of this.holderClients) if (c !== this.client) c.close();
    })();
    return this.stopping;
  }

  /** The holder won the role: it stored an empty in-sync set before it said so. */
  roleWon(): void {
    this.storedInSync = encodeInSync([]);
  }

  /**
   * The in-sync set as this active's synced standbys make it, stored when it changes (one write
   * at a time, guarded by the role lease). This is the stand-in until the reply gate (etcd-gate's
   * in-sync keeper) keeps the set: without the gate a member may not yet have applied the last
   * answered grants, so the mode is not yet partition-safe (docs/cluster.md says so).
   */
  keepInSync(members: readonly string[]): void {
    if (this.o.inSyncKeptElsewhere === true) return;
    const text = encodeInSync(members);
    if (text === this.storedInSync || this.storingInSync) return;
    this.storingInSync = true;
    this.holder.storeInSync(members).then(
      (stored) => {
        this.storingInSync = false;
        if (stored) this.storedInSync = text;
      },
      (err: unknown) => {
        this.storingInSync = false;
        this.o.logger.warn({ err, members }, 'the in-sync set could not be stored in etcd; trying again');
      },
    );
  }

  /** Stores `members` as the in-sync set now (a handoff narrows it); false when it is not stored. */
  async storeInSyncNow(members: readonly string[]): Promise<boolean> {
    try {
      const stored = await this.holder.storeInSync(members);
      if (stored) this.storedInSync = encodeInSync(members);
      return stored;
    } catch (err) {
      this.o.logger.warn({ err, members }, 'the in-sync set could not be stored in etcd');
      return false;
    }
  }

  /**
   * A handoff narrows the in-sync set to its successor `to` and this node (stored, so no other
   * node can win once the key goes): through the reply gate's keeper when there is one, so the
   * gate stops waiting for the others only once etcd no longer names them. False when not stored.
   */
  async narrowInSync(to: string): Promise<boolean> {
    const keeper = this.o.inSyncKeeper?.() ?? null;
    if (keeper === null) return this.storeInSyncNow([to, this.o.nodeId]);
    try {
      return await keeper.narrow(to, [this.o.nodeId]);
    } catch (err) {
      this.o.logger.warn({ err, to }, 'the in-sync set could not be narrowed to the successor');
      return false;
    }
  }

  /** The handoff was called off with this node still active: the keeper widens the set again (every synced standby). */
  handoffCalledOff(): void {
    this.o.inSyncKeeper?.()?.resume();
  }

  /** Campaigns at once (a handoff's successor); true once this node holds the role key, false after `timeoutMs`. */
  async win(timeoutMs: number): Promise<boolean> {
    const h = this.holder;
    const deadline = this.o.now() + timeoutMs;
    h.campaignNow(timeoutMs);
    while (!h.holding && this.o.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    return h.holding;
  }

  /** Why this node cannot grant now, in words; null when it can, or does not hold the role. */
  blockedReason(now: number): string | null {
    const h = this.holder;
    if (!h.holding || h.mayGrant(now)) return null;
    const since = Math.round(now - h.permittedUntil);
    const error = h.lastError === null ? '' : `; last etcd error: ${h.lastError.message}`;
    return `etcd has not confirmed this node's role lease in time (etcd unreachable, or without quorum): grants stopped ${since} ms ago and resume when a keep-alive is confirmed${error}`;
  }

  view(now: number): CoordinationView {
    const h = this.holder;
    const remaining = h.holding ? Math.max(0, Math.round(h.permittedUntil - now)) : null;
    return {
      mode: 'etcd',
      endpoints: this.o.endpointHealth?.snapshot(now) ?? this.endpointsByLastCall(now),
      holding: h.holding,
      holder: h.seenHolder,
      lease: { id: h.leaseId, ttlMs: h.grantedTtlMs, grantRemainingMs: remaining },
      inSync: h.inSync === null || h.inSync === undefined ? null : [...h.inSync].sort(),
      electable: h.electable,
      quiet: h.quiet === null ? null : { by: h.quiet.by, remainingMs: Number.isFinite(h.quiet.until) ? Math.max(0, Math.round(h.quiet.until - now)) : null },
      repliesWaiting: this.o.repliesWaiting?.() ?? 0,
      blocked: this.blockedReason(now),
      lastError: h.lastError?.message ?? null,
    };
  }

  /** The seam's default: every endpoint as the holder's last call found etcd (one client over them all). */
  private endpointsByLastCall(now: number): CoordinationView['endpoints'] {
    const error = this.holder.lastError?.message ?? null;
    const checkedAgoMs = this.lastOkAt === null ? null : Math.round(now - this.lastOkAt);
    return this.o.etcd.endpoints.map((endpoint) => ({ endpoint, healthy: error === null && this.lastOkAt !== null, lastError: error, checkedAgoMs }));
  }
}
