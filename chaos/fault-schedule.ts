// The faults of a chaos run, drawn from a seeded PRNG: the same (seed, duration, options) always
// give the same list, so a failing seed replays the same schedule. Which node a fault hits is
// chosen by role ("the active", "the 2nd standby"), resolved when the fault is applied.

export type NodePick = { role: 'active' } | { role: 'standby'; index: number };

export type ScheduledFault =
  | { kind: 'kill9'; at: number; node: NodePick; downMs: number }
  | { kind: 'sigterm'; at: number; node: NodePick; downMs: number }
  /** The active hands off (POST /api/v1/cluster/handoff) to a standby (index) or whichever it picks (null); restored afterwards. */
  | { kind: 'api-handoff'; at: number; to: number | null }
  /** The peer proxies of these nodes refuse every link: "a" isolates a, "b" cuts b-c, "a+b" cuts every link. */
  | { kind: 'partition'; at: number; cut: string[]; forMs: number }
  /** SIGSTOP for longer than a lease, then SIGCONT. */
  | { kind: 'pause'; at: number; node: NodePick; forMs: number }
  /** kill -9 of a client worker process (chosen among those holding a lock when it is applied), respawned after downMs. */
  | { kind: 'client-kill'; at: number; group: number; downMs: number };

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
}

/** The fallback of the weighted pick (rounding can leave the roll just past the last weight). */
const FIRST_WEIGHT: [ScheduledKind, number] = ['kill9', 3];
const WEIGHTS: Array<[ScheduledKind, number]> = [FIRST_WEIGHT, ['sigterm', 2], ['api-handoff', 2], ['partition', 2], ['pause', 2], ['client-kill', 3]];

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
  const total = WEIGHTS.reduce((sum, [, w]) => sum + w, 0);
  const faults: ScheduledFault[] = [];
  const lastAt = options.durationMs - (options.quietEndMs ?? 4_000);
  for (let at = options.firstAtMs ?? 2_000; at <= lastAt; at += between(2_000, 4_000)) {
    let roll = random() * total;
    const [kind] = WEIGHTS.find(([, w]) => (roll -= w) < 0) ?? FIRST_WEIGHT;
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
      case 'partition': {
        const cuts = [['a'], ['b'], ['a', 'b']];
        faults.push({ kind, at, cut: cuts[between(0, cuts.length - 1)] as string[], forMs: between(1_500, 3_500) });
        break;
      }
      case 'pause':
        faults.push({ kind, at, node: pickNode(), forMs: options.leaseMs + between(500, 1_500) });
        break;
      case 'client-kill':
        faults.push({ kind, at, group: between(0, options.clientGroups - 1), downMs: between(200, 800) });
        break;
    }
  }
  return faults;
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
      return `${at} partition: peer links of ${f.cut.join('+')} refused for ${f.forMs} ms`;
    case 'pause':
      return `${at} SIGSTOP ${node(f.node)} for ${f.forMs} ms`;
    case 'client-kill':
      return `${at} kill -9 a client worker holding a lock (else group ${f.group}), respawn after ${f.downMs} ms`;
  }
}
