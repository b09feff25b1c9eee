// The cluster file (`baton serve --config cluster.json --node <id>`): the peers in priority
// order (front = highest). Every rule is checked before anything binds, and each refusal names
// the file, the peer and the field, because an operator fixes it by editing that one line.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TOKEN_SLOTS } from '../tokens/token-slots.ts';
import { firstIndexWhere } from '../binary-search.ts';

export interface PeerConfig {
  id: string;
  host: string;
  lockPort: number;
  sessionPort: number;
  peerPort: number;
  httpPort: number;
}

export interface ClusterConfig {
  /** Front of the list = highest promotion priority (priority 0). */
  peers: PeerConfig[];
}

/** What `baton serve` hands the daemon when it runs as one node of a cluster. */
export interface ClusterOptions {
  config: ClusterConfig;
  /** This node's id: one of config.peers. */
  nodeId: string;
  /** How long a silent peer still counts as alive (ms). */
  peerTimeoutMs: number;
  /**
   * Where this node listens for peer links, when not on its own entry's host:peerPort (a proxy
   * or port forward in between, as etcd's listen vs advertise URLs). Null: the entry's address.
   */
  peerListen: { host: string; port: number } | null;
  /**
   * How long a higher-priority node must be a synced standby of the active without a break before
   * the active hands the role back to it (priority-return.ts); defaultReturnHoldDownMs when absent.
   */
  returnHoldDownMs?: number;
  /**
   * The partition-safe mode (`--coordination etcd`, docs/cluster.md "Two modes"): the active role
   * is held through an etcd lease. Absent: the peers decide among themselves (the default mode).
   */
  etcd?: EtcdOptions;
}

/** Where and how a node holds the active role in etcd. */
export interface EtcdOptions {
  /** etcd's client URLs (http://host:port). */
  endpoints: string[];
  /** This cluster's keys are `<prefix>/active`, `<prefix>/in-sync` and `<prefix>/token-ceiling`. */
  prefix: string;
  /** The role lease's TTL asked of etcd (whole seconds). */
  leaseTtlSeconds: number;
  /**
   * At most this many standbys in the in-sync set (`--etcd-in-sync`): every reply waits for each
   * of them, and only they may win the role after the active. Every synced standby if absent.
   */
  inSyncMembers?: number;
  /** Tokens per block reserved in etcd (`--etcd-token-block`); DEFAULT_ETCD_TOKEN_BLOCK if absent. */
  tokenBlock?: number;
  /**
   * How old an in-sync member's oldest unacked batch may grow before the active takes it out of
   * the set (`--etcd-lag-bound`, ms); DEFAULT_ETCD_LAG_BOUND_MS if absent.
   */
  lagBoundMs?: number;
}

/**
 * Tokens per etcd block when none is given. At the pipelined rate of one node (about 100,000
 * grants/s here) this is one compare-and-swap every 10 s, and half a block (the refill's head
 * start) lasts 5 s, well past a lease TTL of etcd faults.
 */
export const DEFAULT_ETCD_TOKEN_BLOCK = 1_000_000;
/**
 * The smallest block: the next one is asked for when half is left, and 500 tokens are already
 * about a millisecond of one node's pipelined grants, less than a swap's round trip to most etcds;
 * below that a busy node would wait on etcd at every block.
 */
export const MIN_ETCD_TOKEN_BLOCK = 1_000;
/**
 * The largest block, bound by one reservation's reach in the ceiling guard
 * (server/cluster/ceiling-guard.ts, CEILING_SLACK = 6,400,000): a standby refuses a replicated
 * grant more than that reach above the highest token it has seen, and re-syncs. Inside one
 * active's term tokens jump only where a block is skipped (a compare-and-swap whose answer was
 * lost may have moved the ceiling; the block above it is taken instead): one token past a block
 * per skip. 3,000,000 keeps two skipped blocks in a row inside the reach (6,000,001); the default
 * keeps six. Two blocks also cover a successor's first token over the last its standbys saw (the
 * rest of the block in use and the one reserved ahead), though they re-sync from its snapshot
 * anyway. server/cluster/etcd-block-reach.test.ts ties this to CEILING_SLACK.
 */
export const MAX_ETCD_TOKEN_BLOCK = 3_000_000;

/**
 * The in-sync lag bound when none is given: 1 s. A member that stops acknowledging holds replies
 * about that long plus one etcd write (or the peer timeout, if its heartbeats stop and that is shorter).
 */
export const DEFAULT_ETCD_LAG_BOUND_MS = 1_000;
/** Below 100 ms a member that is only slow for a moment (a GC pause, a busy core) is taken out. */
export const MIN_ETCD_LAG_BOUND_MS = 100;
/** Above a minute, a member that heartbeats but acknowledges nothing would hold every reply longer than any client waits. */
export const MAX_ETCD_LAG_BOUND_MS = 60_000;

/**
 * The etcd key prefix when none is given: `baton/` and the cluster's node ids, so two clusters
 * sharing one etcd do not share a role key unless their node lists are the same (give
 * --etcd-prefix then, and keep it when the node list changes).
 */
export function defaultEtcdPrefix(config: ClusterConfig): string {
  return `baton/${config.peers.map((p) => p.id).join('-')}`;
}

export type ConfigResult = { ok: true; config: ClusterConfig } | { ok: false; message: string };

const PORT_FIELDS = ['lockPort', 'sessionPort', 'peerPort', 'httpPort'] as const;
const PEER_FIELDS = ['id', 'host', ...PORT_FIELDS] as const;

/** zod's own texts are generic; these say what a valid value looks like, and "missing" apart. */
const missingOr = (expected: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is missing' : expected);
const port = z
  .number({ error: missingOr('must be a whole number from 1 to 65535') })
  .int({ error: 'must be a whole number from 1 to 65535' })
  .min(1, { error: 'must be a whole number from 1 to 65535' })
  .max(65_535, { error: 'must be a whole number from 1 to 65535' });

const peerSchema = z.strictObject(
  {
    id: z.string({ error: missingOr('must be a string') }).regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be 1 to 64 characters from A-Z a-z 0-9 _ . -' }),
    host: z.string({ error: missingOr('must be a string') }).min(1, { error: 'must not be empty' }),
    lockPort: port,
    sessionPort: port,
    peerPort: port,
    httpPort: port,
  },
  { error: 'must be an object with id, host, lockPort, sessionPort, peerPort and httpPort' },
);

const configSchema = z.strictObject({
  peers: z
    .array(peerSchema, { error: missingOr('must be a list of nodes') })
    .min(1, { error: 'must list at least one node' })
    // One token slot per node (lib/tokens/token-slots.ts): a node's place in the list is its slot.
    .max(TOKEN_SLOTS, { error: `must list at most ${TOKEN_SLOTS} nodes (one fencing-token slot each)` }),
});

/** Parses and checks the text of a cluster file; `source` (its path) starts every message. */
export function parseClusterConfig(text: string, source: string): ConfigResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `${source}: ${describeJsonError(text, err instanceof Error ? err.message : String(err))}` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, message: `${source}: expected a JSON object with a "peers" list` };
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) {
    // A misspelt field ("lockport") also makes the real one missing: name the cause, not the effect.
    const issues = parsed.error.issues;
    const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
    return { ok: false, message: `${source}: ${describeIssue(issue, json)}` };
  }
  const clash = findClash(parsed.data.peers);
  return clash === null ? { ok: true, config: parsed.data } : { ok: false, message: `${source}: ${clash}` };
}

/** Reads and checks a cluster file. */
export async function readClusterConfig(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    return { ok: false, message: `cannot read the cluster config ${path}: ${why}` };
  }
  return parseClusterConfig(text, path);
}

/** This node's entry, or a message listing the ids there are (the usual mistake is a typo). */
export function findPeer(config: ClusterConfig, id: string, source = 'the cluster config'): { ok: true; peer: PeerConfig } | { ok: false; message: string } {
  const peer = config.peers.find((p) => p.id === id);
  if (peer !== undefined) return { ok: true, peer };
  return { ok: false, message: `${source} has no node ${JSON.stringify(id)}; its nodes are: ${config.peers.map((p) => p.id).join(', ')}` };
}

/** `peers[1] ("b")` when the entry has a usable id, else `peers[1]`. */
function peerLabel(index: number, entry: unknown): string {
  const id = typeof entry === 'object' && entry !== null ? (entry as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' ? `peers[${index}] (${JSON.stringify(id)})` : `peers[${index}]`;
}

function describeIssue(issue: z.core.$ZodIssue | undefined, json: object): string {
  if (issue === undefined) return 'invalid cluster config';
  const [top, index, field] = issue.path;
  let where: string;
  if (top === 'peers' && typeof index === 'number') {
    const entries = (json as { peers: unknown[] }).peers;
    where = peerLabel(index, entries[index]) + (field === undefined ? '' : `: ${String(field)}`);
  } else {
    where = issue.path.map(String).join('.');
  }
  if (issue.code === 'unrecognized_keys') {
    const known: readonly string[] = issue.path.length === 0 ? ['peers'] : PEER_FIELDS;
    const described = issue.keys.map((key) => {
      const meant = known.find((k) => k.toLowerCase() === key.toLowerCase());
      return JSON.stringify(key) + (meant === undefined ? '' : ` (did you mean ${JSON.stringify(meant)}?)`);
    });
    const fields = `known fields: ${known.join(', ')}`;
    return `${where === '' ? '' : `${where}: `}unknown field${issue.keys.length > 1 ? 's' : ''} ${described.join(', ')}; ${fields}`;
  }
  return `${where} ${issue.message}`;
}

/** Ids must be unique, and no two listeners on one host may share a port (within a peer too). */
function findClash(peers: PeerConfig[]): string | null {
  const ids = new Map<string, number>();
  const ports = new Map<string, { index: number; field: string }>();
  for (const [index, peer] of peers.entries()) {
    const sameId = ids.get(peer.id);
    if (sameId !== undefined) return `${peerLabel(index, peer)}: id ${JSON.stringify(peer.id)} is already used by peers[${sameId}]`;
    ids.set(peer.id, index);
    // Hosts compare as written: 'localhost' and '127.0.0.1' are different strings here, and a
    // clash between them still shows up at bind time.
    for (const field of PORT_FIELDS) {
      const key = `${peer.host}\u0000${peer[field]}`;
      const taken = ports.get(key);
      if (taken !== undefined) {
        const other = taken.index === index ? `its ${taken.field}` : `the ${taken.field} of ${peerLabel(taken.index, peers[taken.index])}`;
        return `${peerLabel(index, peer)}: ${field} ${peer[field]} on host ${peer.host} is also ${other}`;
      }
      ports.set(key, { index, field });
    }
  }
  return null;
}

/** "not valid JSON at line 3, column 12: Unexpected token '}'", whatever V8 put in its message. */
function describeJsonError(text: string, raw: string): string {
  const stated = / in JSON at position (\d+)/.exec(raw);
  let position: number;
  let what = raw.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
  if (stated !== null) position = Number(stated[1]);
  else if (raw.startsWith('Unexpected end of JSON input')) {
    position = text.length;
    what = 'the file ends in the middle of a value';
  } else position = firstBadPrefix(text, what);
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `not valid JSON at line ${line}, column ${column}: ${what}`;
}

/**
 * V8 gives no position for "Unexpected token 'x'": find where the first bad character is. Every
 * prefix shorter than it parses or fails only for ending early, every longer one fails with the
 * same message; so the shortest prefix that fails that way ends with the bad character.
 */
function firstBadPrefix(text: string, what: string): number {
  const failsThatWay = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (err) {
      return err instanceof Error && err.message.startsWith(what);
    }
  };
  return Math.max(0, firstIndexWhere(text.length, failsThatWay) - 1);
}
