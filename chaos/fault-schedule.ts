// The faults of a chaos run, drawn from a seeded PRNG: the same (seed, duration, options) always
// give the same list, so a failing seed replays the same schedule. Which node a fault hits is
// chosen by role ("the active", "the 2nd standby"), resolved when the fault is applied.

export type NodePick = { role: 'active' } | { role: 'standby'; index: number };

/**
 * Which peer links a partition cuts (chaos/partition-faults.ts makes them at the proxies), by role:
 * - isolate: the active from every peer, both ways (the majority loses it);
 * - minority: the active from one standby (`standby`), both ways; the other still hears it;
 * - one-way-out: the active's messages to every peer held, theirs still reach it;
 * - one-way-in: the peers' messages to the active held, its own still reach them;
 * - standby-link: the link between the two standbys, both ways;
 * - all: every link, both ways;
 * - flap: the active from every peer (or from one standby), cut and healed `cycles` times: cuts
 *   both shorter and longer than the peer timeout;
 * - handoff: an API handoff of the active (to any standby), its peer links cut `cutAfterMs` after
 *   the request was sent (0-30 ms: the handoff message may or may not get out).
 */
export type PartitionShape = 'isolate' | 'minority' | 'one-way-out' | 'one-way-in' | 'standby-link' | 'all' | 'flap' | 'handoff';

export const PARTITION_SHAPES: readonly PartitionShape[] = ['isolate', 'minority', 'one-way-out', 'one-way-in', 'standby-link', 'all', 'flap', 'handoff'];

/** One cut of a flap and the heal after it, ms. */
export interface FlapCycle {
  cutMs: number;
  healMs: number;
}

export type ScheduledFault =
  | { kind: 'kill9'; at: number; node: NodePick; downMs: number }
  | { kind: 'sigterm'; at: number; node: NodePick; downMs: number }
  /** The active hands off (POST /api/v1/cluster/handoff) to a standby (index) or whichever it picks (null); restored afterwards. */
  | { kind: 'api-handoff'; at: number; to: number | null }
  /** Peer links cut (see PartitionShape) for forMs, then healed; a flap's cycles instead (forMs is their sum). */
  | {
      kind: 'partition';
      at: number;
      shape: PartitionShape;
      forMs: number;
      /** minority, and a flap cut from one standby: which standby (else null). */
      standby: number | null;
      cycles: FlapCycle[];
      /** handoff: how long after the handoff request the cut comes. */
      cutAfterMs: number;
    }
  /** SIGSTOP for longer than a lease, then SIGCONT. */
  | { kind: 'pause'; at: number; node: NodePick; forMs: number }
  /** kill -9 of a client worker process (chosen among those holding a lock when it is applied), respawned after downMs. */
  | { kind: 'client-kill'; at: number; group: number; downMs: number }
  /** etcd mode: one Baton node's every connection to etcd cut (refused, or silent: black-holed) for forMs, then healed. */
  | { kind: 'etcd-cut'; at: number; node: NodePick; forMs: number; silent: boolean }
  /** etcd mode: kill -9 of one etcd member (etcd's leader, or a follower), restarted on its data after downMs. */
  | { kind: 'etcd-member-kill'; at: number; leader: boolean; downMs: number }
  /** etcd mode: two of the three etcd members killed (quorum lost; the leader among them or not), restarted after forMs. */
  | { kind: 'etcd-quorum-loss'; at: number; leader: boolean; forMs: number };

export type ScheduledKind = ScheduledFault['kind'];

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  leaseMs: number;
  clientGroups: number;
  /** The first fault not before this (ms from the start); 2,000 if not given. */
  firstAtMs?: number;
  /** The last fault starts this long before the end at the latest; 4,000 if not given. */
  quietEndMs?: number;
  /** The cluster's --peer-timeout (a flap cuts both shorter and longer than it); 1,000 if not given. */
  peerTimeoutMs?: number;
  /**
   * etcd mode: its own mix (ETCD_WEIGHTS), with the etcd faults; the lease TTL sets how long
   * etcd is cut or out (both shorter and longer than it). The default mode's schedules are unchanged.
   */
  etcd?: { leaseTtlMs: number };
}

/** The fallback of the weighted pick (rounding can leave the roll just past the last weight). */
const FIRST_WEIGHT: [ScheduledKind, number] = ['kill9', 3];
const WEIGHTS: Array<[ScheduledKind, number]> = [FIRST_WEIGHT, ['sigterm', 2], ['api-handoff', 2], ['partition', 2], ['pause', 2], ['client-kill', 3]];
/** etcd mode: the same faults (fewer client kills, more partitions) and the three etcd faults. */
const ETCD_WEIGHTS: Array<[ScheduledKind, number]> = [
  FIRST_WEIGHT,
  ['sigterm', 1],
  ['api-handoff', 1],
  ['partition', 3],
  ['pause', 2],
  ['client-kill', 1],
  ['etcd-cut', 3],
  ['etcd-member-kill', 2],
  ['etcd-quorum-loss', 2],
];

/** An etcd fault: outages from a quarter of the lease TTL to twice it + 1 s (the lease outlives some, not others). */
function etcdFault(
  kind: 'etcd-cut' | 'etcd-member-kill' | 'etcd-quorum-loss',
  at: number,
  between: (lo: number, hi: number) => number,
  pickNode: () => NodePick,
  ttlMs: number,
): ScheduledFault {
  const outage = () => between(ttlMs / 4, 2 * ttlMs + 1_000);
  if (kind === 'etcd-cut') return { kind, at, node: pickNode(), forMs: outage(), silent: between(0, 1) === 1 };
  if (kind === 'etcd-member-kill') return { kind, at, leader: between(0, 1) === 1, downMs: between(1_000, 4_000) };
  return { kind, at, leader: between(0, 1) === 1, forMs: outage() };
}

/** mulberry32: a small, well-mixed 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function faultSchedule(options: ScheduleOptions): ScheduledFault[] {
  const random = mulberry32(options.seed);
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  const pickNode = (): NodePick => (random() < 0.6 ? { role: 'active' } : { role: 'standby', index: between(0, 1) });
  const weights = options.etcd === undefined ? WEIGHTS : ETCD_WEIGHTS;
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  const faults: ScheduledFault[] = [];
  const lastAt = options.durationMs - (options.quietEndMs ?? 4_000);
  for (let at = options.firstAtMs ?? 2_000; at <= lastAt; at += between(2_000, 4_000)) {
    let roll = random() * total;
    const [kind] = weights.find(([, w]) => (roll -= w) < 0) ?? FIRST_WEIGHT;
    switch (kind) {
      case 'kill9':
        faults.push({ kind, at, node: pickNode(), downMs: between(300, 1_500) });
        break;
      case 'sigterm':
        faults.push({ kind, at, node: pickNode(), downMs: between(300, 1_000) });
        break;
      case 'api-handoff':
        faults.push({ kind, at, to: random() < 0.5 ? null : between(0, 1) });
        break;
      case 'partition':
        faults.push(partition(at, between, options.peerTimeoutMs ?? 1_000));
        break;
      case 'pause':
        faults.push({ kind, at, node: pickNode(), forMs: options.leaseMs + between(500, 1_500) });
        break;
      case 'client-kill':
        faults.push({ kind, at, group: between(0, options.clientGroups - 1), downMs: between(200, 800) });
        break;
      case 'etcd-cut':
      case 'etcd-member-kill':
      case 'etcd-quorum-loss':
        faults.push(etcdFault(kind, at, between, pickNode, options.etcd?.leaseTtlMs ?? 2_000));
        break;
    }
  }
  return faults;
}

function partition(at: number, between: (lo: number, hi: number) => number, peerTimeoutMs: number): ScheduledFault {
  const shape = PARTITION_SHAPES[between(0, PARTITION_SHAPES.length - 1)] as PartitionShape;
  const forMs = between(1_500, 3_500);
  const standby = between(0, 1);
  if (shape === 'flap') {
    // Short cuts (a third to two thirds of the peer timeout: the links redial, nobody promotes)
    // and long ones (1.3 to 2 peer timeouts: a split brain each time), in a seeded mix.
    const cycles: FlapCycle[] = [];
    for (let i = between(3, 5); i > 0; i--) {
      const long = between(0, 2) === 0;
      const cutMs = long ? between(1.3 * peerTimeoutMs, 2 * peerTimeoutMs) : between(peerTimeoutMs / 3, (2 * peerTimeoutMs) / 3);
      cycles.push({ cutMs, healMs: between(200, 600) });
    }
    const sum = cycles.reduce((t, c) => t + c.cutMs + c.healMs, 0);
    return { kind: 'partition', at, shape, forMs: sum, standby: between(0, 1) === 0 ? standby : null, cycles, cutAfterMs: 0 };
  }
  return {
    kind: 'partition',
    at,
    shape,
    forMs,
    standby: shape === 'minority' ? standby : null,
    cycles: [],
    cutAfterMs: shape === 'handoff' ? between(0, 30) : 0,
  };
}

/** A partition in words, e.g. "the active cut one way: its messages to every peer held". */
export function describePartition(f: Extract<ScheduledFault, { kind: 'partition' }>): string {
  const standby = `standby #${f.standby ?? 0}`;
  switch (f.shape) {
    case 'isolate':
      return 'the active cut from every peer, both ways';
    case 'minority':
      return `the active cut from ${standby} only, both ways`;
    case 'one-way-out':
      return "one way: the active's messages to every peer held, theirs reach it";
    case 'one-way-in':
      return "one way: the peers' messages to the active held, its own reach them";
    case 'standby-link':
      return 'the link between the two standbys cut both ways';
    case 'all':
      return 'every link cut both ways';
    case 'flap':
      return `flapping: the active ${f.standby === null ? 'and every peer' : `and ${standby}`} cut/healed ${f.cycles.map((c) => `${c.cutMs}/${c.healMs}`).join(', ')} ms`;
    case 'handoff':
      return `an API handoff of the active, its links cut ${f.cutAfterMs} ms after the request`;
  }
}

export function describeFault(f: ScheduledFault): string {
  const at = `+${(f.at / 1000).toFixed(1)}s`;
  const node = (p: NodePick) => (p.role === 'active' ? 'the active' : `standby #${p.index}`);
  switch (f.kind) {
    case 'kill9':
      return `${at} kill -9 ${node(f.node)}, restart after ${f.downMs} ms`;
    case 'sigterm':
      return `${at} SIGTERM ${node(f.node)}, restart after ${f.downMs} ms`;
    case 'api-handoff':
      return `${at} API handoff ${f.to === null ? 'to any standby' : `to standby #${f.to}`}, then restore`;
    case 'partition':
      return `${at} partition: ${describePartition(f)}${f.shape === 'flap' ? '' : ` for ${f.forMs} ms`}`;
    case 'pause':
      return `${at} SIGSTOP ${node(f.node)} for ${f.forMs} ms`;
    case 'client-kill':
      return `${at} kill -9 a client worker holding a lock (else group ${f.group}), respawn after ${f.downMs} ms`;
    case 'etcd-cut':
      return `${at} ${node(f.node)} cut from etcd (${f.silent ? 'silent: black-holed' : 'refused'}) for ${f.forMs} ms`;
    case 'etcd-member-kill':
      return `${at} kill -9 etcd's ${f.leader ? 'leader' : 'follower'}, restart after ${f.downMs} ms`;
    case 'etcd-quorum-loss':
      return `${at} etcd quorum lost: kill -9 two members (${f.leader ? 'the leader and a follower' : 'both followers'}), restart after ${f.forMs} ms`;
  }
}
