// Option parsers shared by the CLI's commands. A bad value throws commander's
// InvalidArgumentError, which cli.ts turns into a clear message and exit code 2.
import { InvalidArgumentError } from 'commander';
import { MAX_ETCD_LAG_BOUND_MS, MAX_ETCD_TOKEN_BLOCK, MIN_ETCD_LAG_BOUND_MS, MIN_ETCD_TOKEN_BLOCK } from '../../lib/cluster/cluster-config.ts';
import { parseDurationFlag } from '../../lib/duration-flag.ts';
import type { Address } from '../../lib/protocol/address-text.ts';
import { isValidClientName } from '../../lib/protocol/client-name.ts';
import { parseU64Text } from '../../lib/protocol/u64-text.ts';
import { TOKEN_SLOTS } from '../../lib/tokens/token-slots.ts';

export function durationOption(text: string): number {
  if (text.trim() === '0') return 0; // zero needs no unit
  const ms = parseDurationFlag(text);
  if (ms === null) throw new InvalidArgumentError('expected a duration such as 250ms, 5s or 2m.');
  return ms;
}

export function positiveDurationOption(text: string): number {
  const ms = durationOption(text);
  if (ms <= 0) throw new InvalidArgumentError('must be greater than zero.');
  return ms;
}

export function portOption(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) throw new InvalidArgumentError('expected a port from 0 to 65535 (0 picks a free one).');
  return Number(text);
}

/** `--token-floor`: a decimal u64 (the highest token that may have been issued before). */
export function tokenFloorOption(text: string): bigint {
  const floor = parseU64Text(text);
  if (floor === null) throw new InvalidArgumentError('expected a decimal u64 (0 to 18446744073709551615): the highest token ever issued from this data dir.');
  return floor;
}

export function countOption(text: string): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new InvalidArgumentError('expected a whole number >= 1.');
  return Number(text);
}

/**
 * Admin and read tokens: long enough not to be guessed, and safe inside a header. Checked
 * apart from commander, whose messages quote the rejected value: a secret with a typo must not
 * end up in a log. An empty value (an unset variable in a compose file) counts as not given.
 */
export function checkToken(value: string | undefined, flag: string, env: string): { ok: true; token: string | undefined } | { ok: false; message: string } {
  if (value === undefined || value === '') return { ok: true, token: undefined };
  if (/^[\x21-\x7e]{16,256}$/.test(value)) return { ok: true, token: value };
  return {
    ok: false,
    message: `${flag} (or ${env}) is not a valid token (${value.length} characters): use 16 to 256 printable ASCII characters without spaces`,
  };
}

/** One host:port (IPv6 in brackets); port 1 to 65535, since someone else has to reach it. */
export function addressOption(text: string): Address {
  const [, host, port] = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(text.trim()) ?? [];
  if (host === undefined || Number(port) < 1 || Number(port) > 65_535) {
    throw new InvalidArgumentError(`expected host:port, got ${JSON.stringify(text)}.`);
  }
  return { host: host.replace(/^\[|\]$/g, ''), port: Number(port) };
}

export function addressListOption(text: string): Address[] {
  return text.split(',').map((part) => {
    try {
      return addressOption(part);
    } catch {
      throw new InvalidArgumentError(`expected host:port[,host:port...], got ${JSON.stringify(part)}.`);
    }
  });
}

/** Heartbeats go out every peer-timeout/5: below 100ms that is a flood, and scheduling jitter alone would declare peers dead. */
export const MIN_PEER_TIMEOUT_MS = 100;

export function peerTimeoutOption(text: string): number {
  const ms = durationOption(text);
  if (ms < MIN_PEER_TIMEOUT_MS) throw new InvalidArgumentError(`must be at least ${MIN_PEER_TIMEOUT_MS}ms (peers send a heartbeat every peer-timeout/5).`);
  return ms;
}

/** `--max-park`'s bound: a day. Longer would be no cap at all for a claim nobody stands behind. */
export const MAX_PARK_LIMIT_MS = 86_400_000;

/** `--max-park`: how long a claim between connections may wait for its client, from 1ms to 24h. */
export function maxParkOption(text: string): number {
  const ms = positiveDurationOption(text);
  if (ms > MAX_PARK_LIMIT_MS) throw new InvalidArgumentError('must be at most 24h: a claim between connections stands for no client.');
  return ms;
}

/** `--client-name`: an identity by the rule of lib/protocol/client-name.ts. */
export function clientNameOption(text: string): string {
  if (!isValidClientName(text)) {
    throw new InvalidArgumentError('expected 1 to 128 bytes of UTF-8 without control or format characters and without a space at either end.');
  }
  return text;
}

/** `--coordination`: who decides which node is active (docs/cluster.md, "Two modes"). */
export const COORDINATION_MODES = ['peers', 'etcd'] as const;

/** `--etcd-endpoints`: one or more http(s)://host:port URLs of etcd members, comma-separated. */
export function etcdEndpointsOption(text: string): string[] {
  const parts = text.split(',').map((p) => p.trim());
  for (const part of parts) {
    let url: URL | null = null;
    try {
      url = new URL(part);
    } catch {
      url = null;
    }
    if (
      url === null ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.port === '' ||
      url.pathname !== '/' ||
      url.search !== '' ||
      url.username !== ''
    ) {
      throw new InvalidArgumentError(`expected http://host:port[,http://host:port...] (etcd's client URLs), got ${JSON.stringify(part)}.`);
    }
  }
  if (new Set(parts).size !== parts.length) throw new InvalidArgumentError('names one endpoint twice.');
  return parts;
}

/** `--etcd-prefix`: the key prefix of this cluster's keys in etcd (`<prefix>/active` and its siblings). */
export function etcdPrefixOption(text: string): string {
  if (!/^[A-Za-z0-9_.\-/]{1,128}$/.test(text) || text.startsWith('/') || text.endsWith('/') || text.includes('//')) {
    throw new InvalidArgumentError('expected 1 to 128 characters from A-Z a-z 0-9 _ . - /, not starting or ending with / (e.g. baton/prod).');
  }
  return text;
}

/** Whole seconds etcd allows a lease; Baton's bound keeps an absurd TTL (a failover after an hour) out. */
export const MAX_ETCD_LEASE_TTL_S = 60;

/**
 * The role lease's TTL when none is given: 2 s. With etcd's default timing (election timeout
 * 1 s) that is the shortest lease etcd grants anyway (its minimum is 1.5 election timeouts,
 * rounded up to whole seconds), and it bounds a failover after kill -9 of the active to about
 * 2 s plus the priority stagger; the keep-alive a third of a TTL apart leaves two missed rounds
 * of slack before grants lapse. A longer TTL rides out longer etcd elections (a WAN etcd) at the
 * price of a slower failover.
 */
export const DEFAULT_ETCD_LEASE_TTL_S = 2;

/**
 * A whole number from `min` to `max`, digits only (no sign, fraction, unit or exponent, which
 * Number() would take); `expected` says what was wanted when it is not one.
 */
export function boundedWholeOption(text: string, min: number, max: number, expected: string): number {
  const digits = text.trim();
  if (!/^\d{1,16}$/.test(digits) || Number(digits) < min || Number(digits) > max) throw new InvalidArgumentError(expected);
  return Number(digits);
}

/** `--etcd-lease-ttl`: the role lease's TTL in whole seconds (1 to 60). */
export function etcdLeaseTtlOption(text: string): number {
  return boundedWholeOption(text, 1, MAX_ETCD_LEASE_TTL_S, `expected whole seconds from 1 to ${MAX_ETCD_LEASE_TTL_S} (etcd leases count in seconds).`);
}

/**
 * The in-sync set's bound when none is given (`--etcd-in-sync`): 1. Every reply waits for every
 * member's acknowledgement, so with one member no turn waits for the slower of two standbys; it
 * cost less CPU per pair than two in every side-by-side run (docs/benchmarks.md, "The in-sync
 * set's size"). The price: the active and that one member lost together leave no node electable
 * until an operator acts (docs/cluster.md, "How many members"); 2 rides out that double loss in
 * a three-node cluster.
 */
export const DEFAULT_ETCD_IN_SYNC = 1;

/** `--etcd-in-sync`: at most this many standbys in the in-sync set (1 to 63: a cluster has at most 64 nodes). */
export function etcdInSyncOption(text: string): number {
  return boundedWholeOption(text, 1, TOKEN_SLOTS - 1, `expected a whole number of standbys from 1 to ${TOKEN_SLOTS - 1}.`);
}

/**
 * `--etcd-token-block`: tokens per block reserved in etcd (MIN_ETCD_TOKEN_BLOCK to
 * MAX_ETCD_TOKEN_BLOCK; lib/cluster/cluster-config.ts says why each).
 */
export function etcdTokenBlockOption(text: string): number {
  return boundedWholeOption(
    text,
    MIN_ETCD_TOKEN_BLOCK,
    MAX_ETCD_TOKEN_BLOCK,
    `expected a whole number of tokens from ${MIN_ETCD_TOKEN_BLOCK} to ${MAX_ETCD_TOKEN_BLOCK} (a standby accepts tokens up to two skipped blocks ahead of the last it saw).`,
  );
}

/** `--etcd-lag-bound`: a duration from 100ms to 60s (lib/cluster/cluster-config.ts says why each). */
export function etcdLagBoundOption(text: string): number {
  const ms = durationOption(text);
  if (ms < MIN_ETCD_LAG_BOUND_MS || ms > MAX_ETCD_LAG_BOUND_MS) {
    throw new InvalidArgumentError(`must be from ${MIN_ETCD_LAG_BOUND_MS}ms to ${MAX_ETCD_LAG_BOUND_MS / 1_000}s.`);
  }
  return ms;
}
