// Socket-level fuzzing of both wire protocols against a real daemon on 127.0.0.1: valid
// requests mixed with garbage, cut into random chunks, over several connections that are
// sometimes cut off mid-line. Each run checks what docs/protocol.md promises: well-formed
// replies, one per request, tokens that only grow, at most one holder per lock, nothing left
// in the lock table once everyone has gone, and a server that still serves afterwards.
//
// The expected reply to each request comes from the bytes actually written, split the way
// the server splits them (splitLikeServer) and read with the protocol codecs; the codecs have
// their own unit tests, so this file is about the server around them.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import { ERRORS, type ErrorName } from '../lib/errors.ts';
import { encodeKeyedError, parseKeyedRequest } from '../lib/protocol/keyed-codec.ts';
import { parseSessionRequest } from '../lib/protocol/session-codec.ts';
import { type Daemon, type DaemonOptions, startDaemon } from './daemon.ts';
import {
  type Chunking,
  connectionGauge,
  EngineMonitor,
  eventually,
  type PlannedLine,
  RawConnection,
  sleep,
  splitLikeServer,
  writePlanned,
} from './testing/fuzz-helpers.ts';

const IO_TIMEOUT_MS = 500;
/** Longer than any wait in this file: a lock held this long was leaked, not left to expire. */
const LONG_LEASE_MS = 60_000;
const FUZZ_TEST_MS = 60_000;
/** Past this, fast-check stops starting new runs (or shrinking) and reports what it has. */
const fuzzOptions = (numRuns: number) => ({ numRuns, plugins: [fc.interruptAfterTimeLimit(45_000)] });

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

async function daemon(extra: Partial<DaemonOptions> = {}): Promise<Daemon> {
  const d = await startDaemon({
    host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir: null, drainMs: 0, ioTimeoutMs: IO_TIMEOUT_MS, ...extra,
  });
  teardown.push(() => d.shutdown());
  return d;
}

async function open(port: number): Promise<RawConnection> {
  const c = await RawConnection.open(port);
  teardown.push(() => c.destroy());
  return c;
}

const idle = (engine: LockEngine): boolean => engine.heldCount === 0 && engine.waiterCount === 0 && engine.lockCount === 0;

async function waitIdle(d: Daemon): Promise<void> {
  await eventually(() => idle(d.engine), 5_000, 'every lock to be released or to expire');
}

/** A fresh client takes and gives back a fresh lock on each protocol. */
async function serverStillServes(d: Daemon, monitor: EngineMonitor): Promise<void> {
  const key = `fresh/${monitor.grants.size}`;
  const keyed = await open(d.lockAddress.port);
  keyed.write(`A ${key} 60 0\n`);
  await keyed.until(() => keyed.replies().lines.length >= 1, 3_000, 'a grant on a fresh key');
  const token = monitor.latest(key);
  expect(keyed.replies().lines).toEqual([`A ${key} ${token}`]);
  keyed.write(`R ${key} ${token}\n`);
  await keyed.until(() => keyed.replies().lines.length >= 2, 3_000, 'the release');
  expect(keyed.replies().lines[1]).toBe(`R ${key} OK`);
  keyed.destroy();
  const session = await open(d.sessionAddress.port);
  // A lease far past the wait below: only the hang-up can free the lock in time.
  session.write(`ACQUIRE ${key} ${LONG_LEASE_MS}\n`);
  await session.until(() => session.replies().lines.length >= 1, 3_000, 'a session grant on a fresh key');
  expect(session.replies().lines).toEqual([`ACQUIRED ${monitor.latest(key)}`]);
  session.destroy();
  await waitIdle(d);
}

function fail(why: string, c: RawConnection): never {
  throw new Error(`${why}\n  sent: ${JSON.stringify(c.sent.toString('latin1'))}\n  got: ${JSON.stringify(c.replies())}`);
}

// --- generated input ---------------------------------------------------------------------

const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const bytesOf = (...parts: Array<string | readonly number[]>): Uint8Array =>
  new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p)))));
/** Made-up lines never contain a line break, and never start a request they did not mean to. */
const noLineBreak = (b: Uint8Array): Uint8Array => b.map((x) => (x === 10 ? 11 : x));
const neverStarting = (words: RegExp) => (b: Uint8Array): Uint8Array =>
  words.test(Buffer.from(b).toString('latin1')) ? bytesOf('X', [...b]) : b;

const chunking: fc.Arbitrary<Chunking> = fc.record({
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
  delayMs: fc.integer({ min: 0, max: 8 }),
  coalesce: fc.boolean(),
});
const ALL_AT_ONCE: Chunking = { cuts: [], delayMs: 0, coalesce: true };
const seconds = (minMs: number, maxMs: number) => fc.integer({ min: minMs, max: maxMs }).map((ms) => String(ms / 1000));

/** Bytes nobody should mistake for a request, and the classic near misses. */
function garbage(noRequest: RegExp): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.string({ maxLength: 40 }).map(utf8),
    fc.string({ unit: 'binary', maxLength: 12 }).map(utf8),
    fc.uint8Array({ maxLength: 40 }),
    fc.constantFrom(
      bytesOf(''), bytesOf([0]), bytesOf([0xff, 0xfe]), bytesOf([0xc3, 0x28]), bytesOf([0xed, 0xa0, 0x80]), bytesOf('\r'), bytesOf(' '),
    ),
  ).map(noLineBreak).map(neverStarting(noRequest));
}

// Keyed lines.
const KEYS = ['k0', 'k1', 'ключ'];
const key = fc.constantFrom(...KEYS);
type TokenRef = { from: 'key' } | { from: 'any' } | { from: 'literal'; value: bigint };
type KeyedLine =
  | { kind: 'acquire'; key: string; lease: string; wait: string }
  | { kind: 'release'; key: string; token: TokenRef }
  | { kind: 'raw'; bytes: Uint8Array };

const literal = (value: bigint): TokenRef => ({ from: 'literal', value });
const tokenRef: fc.Arbitrary<TokenRef> = fc.oneof(
  fc.constant<TokenRef>({ from: 'key' }),
  fc.constant<TokenRef>({ from: 'any' }),
  fc.bigInt(0n, 64n).map(literal),
  fc.bigInt(2n ** 53n - 2n, 2n ** 64n - 1n).map(literal),
  fc.constantFrom(2n ** 53n + 1n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 64n + 1n).map(literal),
  fc.bigInt(2n ** 64n, 2n ** 80n).map(literal),
);
const acquire = fc.record({
  kind: fc.constant('acquire' as const), key, lease: seconds(50, 300),
  // Mostly bounded waits; sometimes 0, which waits until the holder's short lease runs out.
  wait: fc.oneof({ weight: 1, arbitrary: fc.constant('0') }, { weight: 4, arbitrary: seconds(1, 200) }),
});
const release = fc.record({ kind: fc.constant('release' as const), key, token: tokenRef });
const malformedKeyed: fc.Arbitrary<Uint8Array> = fc.oneof(
  garbage(/^[AR] /),
  fc.tuple(key, fc.constantFrom('0', '0.0', '-1', '1.', '.5', 'x', '1e3', '1234567890123', '0.0000000001', '+1', ''), seconds(0, 200))
    .map(([k, lease, wait]) => utf8(`A ${k} ${lease} ${wait}`)),
  fc.tuple(key, seconds(50, 300), fc.constantFrom('-1', 'x', '1 2', '', ' ', '1.', '0x1'))
    .map(([k, lease, wait]) => utf8(`A ${k} ${lease} ${wait}`)),
  fc.tuple(key, fc.constantFrom('-1', 'x', '', '1.5', ' 1', '0x1', '99999999999999999999999')).map(([k, t]) => utf8(`R ${k} ${t}`)),
  fc.constantFrom('A', 'R', 'A k0', 'A k0 1', 'R k0', 'A  1 0', 'R  1', 'a k0 1 0', 'AA k0 1 0', 'ACQUIRE k0 100', 'T k0').map(utf8),
  fc.tuple(fc.constantFrom('A', 'R'), fc.constantFrom([0], [1], [9], [13], [27], [127], [0xc2, 0x85], [0xc3, 0x28], [0xff], [0xe2, 0x80, 0xa8]))
    .map(([op, bad]) => bytesOf(`${op} k`, bad, op === 'A' ? 'x 0.1 0' : 'x 1')),
  fc.tuple(fc.constantFrom('A', 'R'), fc.integer({ min: 251, max: 300 }), fc.constantFrom('x', 'é'))
    .map(([op, n, ch]) => utf8(`${op} ${ch.repeat(ch === 'x' ? n : Math.ceil(n / 2))} ${op === 'A' ? '0.1 0' : '1'}`)),
);
const keyedLine: fc.Arbitrary<KeyedLine> = fc.oneof(
  { weight: 10, arbitrary: acquire },
  { weight: 6, arbitrary: release },
  { weight: 7, arbitrary: malformedKeyed.map((bytes) => ({ kind: 'raw' as const, bytes })) },
  // A line over 4 KiB: the server answers E - - line-too-long and closes.
  { weight: 1, arbitrary: fc.integer({ min: 4097, max: 6000 }).map((n) => ({ kind: 'raw' as const, bytes: utf8('x'.repeat(n)) })) },
);

type KeyedEnding =
  | { kind: 'open' } // wait for every reply, then hang up
  | { kind: 'fin' } // half-close; the server answers what it read and closes
  | { kind: 'cut'; at: number; settleMs: number } // destroy mid-line or mid-pipeline
  | { kind: 'stall' }; // leave a line unfinished: the server ends it at the io-timeout
const keyedEnding: fc.Arbitrary<KeyedEnding> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<KeyedEnding>({ kind: 'open' }) },
  { weight: 2, arbitrary: fc.constant<KeyedEnding>({ kind: 'fin' }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), settleMs: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 1, arbitrary: fc.constant<KeyedEnding>({ kind: 'stall' }) },
);
const keyedPlan = fc.record({
  lines: fc.array(fc.record({ line: keyedLine, crlf: fc.boolean(), chunking }), { minLength: 1, maxLength: 10 }),
  allAtOnce: fc.boolean(),
  startDelayMs: fc.integer({ min: 0, max: 20 }),
  ending: keyedEnding,
});
type KeyedPlan = typeof keyedPlan extends fc.Arbitrary<infer T> ? T : never;

function keyedBytes(line: KeyedLine, monitor: EngineMonitor): Uint8Array {
  switch (line.kind) {
    case 'acquire':
      return utf8(`A ${line.key} ${line.lease} ${line.wait}`);
    case 'release': {
      const ref = line.token;
      const token = ref.from === 'literal' ? ref.value : ((ref.from === 'key' ? monitor.latest(line.key) : monitor.latest()) ?? 1n);
      return utf8(`R ${line.key} ${token}`);
    }
    case 'raw':
      return line.bytes;
  }
}

// --- the keyed oracle --------------------------------------------------------------------

type Pending = { release: boolean; line: string | null; waitsForever?: boolean };

interface KeyedOutcome {
  grants: Array<{ key: string; token: bigint }>;
  /** `R ... OK` replies received. */
  released: number;
  /** Releases the server may have done without our seeing the reply (we cut the connection). */
  unseenReleases: number;
}

/**
 * Matches every reply on `c` to the request it answers; returns its grants and releases.
 * Replies about `A` requests (A, T, and E A for a malformed one) come in request order per key,
 * an immediate error never overtaking an earlier waiting `A`; the other replies (R, E about
 * other ops) come in request order per (op, key).
 * `everyReply`: the connection stayed open until all requests were answered.
 */
function checkKeyedReplies(c: RawConnection, everyReply: boolean): KeyedOutcome {
  const view = splitLikeServer(c.sent);
  const queues = new Map<string, Pending[]>();
  const push = (queue: string, p: Pending): void => {
    const q = queues.get(queue);
    if (q === undefined) queues.set(queue, [p]);
    else q.push(p);
  };
  for (const line of view.lines) {
    const req = parseKeyedRequest(line, 0, line.length);
    if (req.kind === 'acquire') push(`wait A ${req.key}`, { release: false, line: null, waitsForever: req.waitMs === 0 });
    else if (req.kind === 'release') push(`now R ${req.key}`, { release: true, line: null });
    else push(req.op === 'A' ? `wait A ${req.key}` : `now ${req.op} ${req.key}`, { release: false, line: encodeKeyedError(req.op, req.key, req.error).trimEnd() });
  }
  const take = (queue: string, reply: string): Pending => queues.get(queue)?.shift() ?? fail(`reply ${JSON.stringify(reply)} answers no request`, c);

  const { lines, tail } = c.replies();
  if (c.closed && !c.destroyedByUs && tail !== '') fail('the server closed in the middle of a reply line', c);
  const grants: Array<{ key: string; token: bigint }> = [];
  let released = 0;
  for (const [i, reply] of lines.entries()) {
    let m: RegExpExecArray | null;
    if ((m = /^A (\S+) (\d+)$/.exec(reply))) {
      if (take(`wait A ${m[1]}`, reply).line !== null) fail(`${reply} answers a malformed A`, c);
      grants.push({ key: m[1] as string, token: BigInt(m[2] as string) });
    } else if ((m = /^T (\S+)$/.exec(reply))) {
      // Matched to the oldest waiting A on the key: a T that overtook a wait-forever A lands on it.
      const answered = take(`wait A ${m[1]}`, reply);
      if (answered.line !== null) fail(`${reply} answers a malformed A`, c);
      if (answered.waitsForever) fail(`${reply} answers an A that waits forever`, c);
    } else if ((m = /^R (\S+) (OK|STALE)$/.exec(reply))) {
      if (!take(`now R ${m[1]}`, reply).release) fail(`${reply} answers a request that was not a release`, c);
      if (m[2] === 'OK') released++;
    } else if ((m = /^E (\S+) (\S+) ([a-z-]+) (.+)$/.exec(reply))) {
      const [, op = '', k = '', code = '', text = ''] = m;
      if (!Object.hasOwn(ERRORS, code) || ERRORS[code as ErrorName].message !== text) fail(`undocumented error ${reply}`, c);
      if (op === '-' && k === '-' && (code === 'line-too-long' || code === 'io-timeout')) {
        if (i !== lines.length - 1) fail(`connection error ${reply} is not the last line`, c);
        if (code === 'line-too-long' ? !view.overflow : view.tail.length === 0) fail(`${reply} without cause`, c);
      } else if (take(op === 'A' ? `wait A ${k}` : `now ${op} ${k}`, reply).line !== reply) {
        fail(`${reply} is not the answer to the request it stands for`, c);
      }
    } else {
      fail(`malformed reply ${JSON.stringify(reply)}`, c);
    }
  }
  let unseenReleases = 0;
  for (const [queue, left] of queues) {
    if (left.length === 0) continue;
    unseenReleases += left.filter((p) => p.release).length;
    // Unanswered: nothing, when we waited; only waiters (which leave with the connection) when the server closed.
    if (everyReply || (!c.destroyedByUs && !queue.startsWith('wait '))) fail(`${left.length} request(s) of ${queue} unanswered`, c);
  }
  for (let i = 1; i < grants.length; i++) {
    if ((grants[i] as { token: bigint }).token <= (grants[i - 1] as { token: bigint }).token) fail('grant tokens out of order on one connection', c);
  }
  return { grants, released, unseenReleases };
}

async function driveKeyed(c: RawConnection, plan: KeyedPlan, monitor: EngineMonitor): Promise<void> {
  await sleep(plan.startDelayMs);
  const lines: PlannedLine[] = plan.lines.map(({ line, crlf, chunking: how }) => ({
    bytes: () => bytesOf([...keyedBytes(line, monitor)], crlf ? '\r\n' : '\n'),
    chunking: plan.allAtOnce ? ALL_AT_ONCE : how,
  }));
  const ending = plan.ending;
  if (ending.kind === 'cut') {
    const at = ending.at * lines.length;
    await writePlanned(c, lines, { line: Math.floor(at), fraction: at % 1 });
    await sleep(ending.settleMs);
    c.destroy();
    return;
  }
  await writePlanned(c, lines);
  if (ending.kind === 'open') {
    const view = splitLikeServer(c.sent);
    if (!view.overflow) {
      await c.until(() => c.replies().lines.length >= view.lines.length || c.closed, 12_000, 'a reply to every request');
      return;
    }
  }
  if (ending.kind === 'stall') c.write('A k0 0.1');
  if (ending.kind === 'fin') c.end();
  await c.until(() => c.closed, 5_000, 'the server to close the connection');
}

// --- session input and oracle ------------------------------------------------------------

// Mostly one name, so that sessions queue behind each other.
const sessionName = fc.oneof({ weight: 3, arbitrary: fc.constant('s0') }, fc.constantFrom('s1', 'имя'));
type SessionFirst =
  | { kind: 'acquire'; leaseMs: number }
  | { kind: 'raw'; bytes: Uint8Array }
  | { kind: 'silent' } // never sends a line: ended at the io-timeout
  | { kind: 'unfinished' }; // starts ACQUIRE and never finishes it
type SessionLater =
  | { kind: 'heartbeat'; crlf: boolean }
  | { kind: 'acquire-again' }
  | { kind: 'raw'; bytes: Uint8Array; newline: boolean }
  | { kind: 'pause'; ms: number };

const malformedFirst: fc.Arbitrary<Uint8Array> = fc.oneof(
  garbage(/^ACQUIRE /),
  fc.constantFrom(
    '', 'HEARTBEAT', 'ACQUIRE', 'ACQUIRE s0', 'ACQUIRE s0 0', 'ACQUIRE s0 -5', 'ACQUIRE s0 1.5', 'ACQUIRE s0 100 extra',
    'acquire s0 100', ' ACQUIRE s0 100', 'ACQUIRE a\tb 100', 'ACQUIRE a\u00a0b 100', `ACQUIRE ${'n'.repeat(251)} 100`,
    'ACQUIRE s0 1000000000000000', 'A s0 1 0',
  ).map(utf8),
  fc.constantFrom([0], [0xc3, 0x28], [0xff], [0x7f]).map((bad) => bytesOf('ACQUIRE s', bad, ' 100')),
);
const sessionFirst: fc.Arbitrary<SessionFirst> = fc.oneof(
  // Short leases expire within a run; a long one shows that closing, not the lease, released it.
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('acquire' as const), leaseMs: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 60, max: 400 }) }, fc.constant(LONG_LEASE_MS)) }) },
  { weight: 3, arbitrary: malformedFirst.map((bytes) => ({ kind: 'raw' as const, bytes })) },
  { weight: 1, arbitrary: fc.constantFrom<SessionFirst>({ kind: 'silent' }, { kind: 'unfinished' }) },
);
const sessionLater: fc.Arbitrary<SessionLater> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), crlf: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant<SessionLater>({ kind: 'acquire-again' }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), bytes: garbage(/^ACQUIRE /), newline: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 250 }) }) },
  { weight: 1, arbitrary: fc.integer({ min: 4097, max: 6000 }).map((n) => ({ kind: 'raw' as const, bytes: utf8('H'.repeat(n)), newline: true })) },
);
type SessionEnding = { kind: 'close'; holdMs: number } | { kind: 'cut'; at: number } | { kind: 'fin' } | { kind: 'linger' };
const sessionEnding: fc.Arbitrary<SessionEnding> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('close' as const), holdMs: fc.integer({ min: 0, max: 60 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.constant<SessionEnding>({ kind: 'fin' }) },
  { weight: 1, arbitrary: fc.constant<SessionEnding>({ kind: 'linger' }) },
);
const sessionPlan = fc.record({
  name: sessionName,
  first: sessionFirst,
  later: fc.array(fc.record({ item: sessionLater, chunking }), { maxLength: 6 }),
  firstChunking: chunking,
  startDelayMs: fc.integer({ min: 0, max: 10 }),
  ending: sessionEnding,
});
type SessionPlan = typeof sessionPlan extends fc.Arbitrary<infer T> ? T : never;

function sessionLines(plan: SessionPlan): PlannedLine[] {
  const line = (text: Uint8Array | string, how: Chunking): PlannedLine => ({ bytes: () => (typeof text === 'string' ? utf8(text) : text), chunking: how });
  const first = plan.first;
  if (first.kind === 'silent') return [];
  if (first.kind === 'unfinished') return [line(`ACQUIRE ${plan.name}`, plan.firstChunking)];
  const lines = [line(first.kind === 'acquire' ? `ACQUIRE ${plan.name} ${first.leaseMs}\n` : bytesOf([...first.bytes], '\n'), plan.firstChunking)];
  for (const { item, chunking: how } of plan.later) {
    if (item.kind === 'heartbeat') lines.push(line(item.crlf ? 'HEARTBEAT\r\n' : 'HEARTBEAT\n', how));
    else if (item.kind === 'acquire-again') lines.push(line(`ACQUIRE ${plan.name} 1000\n`, how));
    else if (item.kind === 'raw') lines.push(line(item.newline ? bytesOf([...item.bytes], '\n') : item.bytes, how));
    else lines.push(line(new Uint8Array(0), { cuts: [], delayMs: item.ms, coalesce: false }));
  }
  return lines;
}

async function driveSession(c: RawConnection, plan: SessionPlan): Promise<void> {
  await sleep(plan.startDelayMs);
  const lines = sessionLines(plan);
  const first = plan.first;
  let ending = first.kind === 'silent' || first.kind === 'unfinished' ? { kind: 'linger' as const } : plan.ending;
  // A long lease would keep a lingering holder for a minute: hang up instead.
  if (ending.kind === 'linger' && first.kind === 'acquire' && first.leaseMs === LONG_LEASE_MS) ending = { kind: 'fin' };
  if (ending.kind === 'cut') {
    const at = ending.at * lines.length;
    await writePlanned(c, lines, { line: Math.floor(at), fraction: at % 1 });
    c.destroy();
    return;
  }
  await writePlanned(c, lines);
  if (ending.kind === 'close') {
    await sleep(ending.holdMs);
    c.destroy();
    return;
  }
  if (ending.kind === 'fin') c.end();
  // Lingering always ends: a bad line, a silent lease, or a missing first line ends the session.
  await c.until(() => c.closed, 5_000, 'the server to end the session');
}

const SESSION_ERROR_TEXTS = /^(protocol error(: .+)?|io timeout: (no ACQUIRE in time|line not finished in time)|lease expired)$/;

/** Checks one session's output against what it sent; returns its grant token, if any. */
function checkSessionReplies(c: RawConnection): bigint | null {
  const view = splitLikeServer(c.sent);
  const [firstLine, ...laterLines] = view.lines;
  const acquired = firstLine !== undefined && parseSessionRequest(firstLine, 0, firstLine.length).kind === 'acquire';
  // Heartbeats the server answers before the first line that ends the session.
  const heartbeats = laterLines.findIndex((l) => parseSessionRequest(l, 0, l.length).kind !== 'heartbeat');
  const answered = heartbeats < 0 ? laterLines.length : heartbeats;
  const endsInError = firstLine === undefined ? view.overflow : !acquired || heartbeats >= 0 || view.overflow;

  const { lines, tail } = c.replies();
  if (c.closed && !c.destroyedByUs && tail !== '') fail('the server closed in the middle of a line', c);
  const last = lines[lines.length - 1];
  const error = last !== undefined && last.startsWith('ERROR ') ? last : null;
  const others = error === null ? lines : lines.slice(0, -1);
  if (error !== null) {
    const m = /^ERROR 0x0([23]) (.+)$/.exec(error);
    if (m === null || !SESSION_ERROR_TEXTS.test(m[2] as string) || (m[1] === '3') !== (m[2] === 'lease expired')) fail(`unexpected ${error}`, c);
  }
  const protocolError = error !== null && error.startsWith('ERROR 0x02 protocol error');
  if (protocolError && !endsInError) fail('a protocol error for well-formed input', c);
  if (endsInError && !c.destroyedByUs && error === null) fail('bad input went unanswered', c);
  if (!acquired) {
    if (others.length > 0 || error?.startsWith('ERROR 0x03')) fail('replies to a session that never asked for a lock', c);
    return null;
  }
  if (error?.endsWith('no ACQUIRE in time')) fail('no ACQUIRE, after one', c);
  let token: string | null = null;
  let position = Number.POSITIVE_INFINITY;
  for (const line of others) {
    const m = /^(ACQUIRED|WAITING) ([1-9]\d*)$/.exec(line) ?? fail(`malformed or misplaced line ${JSON.stringify(line)}`, c);
    if (m[1] === 'ACQUIRED') {
      if (token !== null && token !== m[2]) fail('two tokens on one session', c);
      token = m[2] as string;
    } else {
      if (token !== null) fail('WAITING after ACQUIRED', c);
      if (Number(m[2]) > position) fail('the queue position grew', c);
      position = Number(m[2]);
    }
  }
  // One answer to ACQUIRE and to each heartbeat read, plus at most one pushed grant.
  if (others.length > answered + 2) fail('more replies than requests', c);
  if ((protocolError || (error === null && !c.destroyedByUs)) && others.length < answered + 1) fail('requests left unanswered', c);
  return token === null ? null : BigInt(token);
}

// --- the tests ---------------------------------------------------------------------------

describe('keyed protocol under fuzzed input', () => {
  it('answers every request once with a well-formed line, never reuses a token, and leaks no lock', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(keyedPlan, { minLength: 1, maxLength: 3 }), async (plans) => {
        const d = await daemon();
        const monitor = new EngineMonitor(d.engine);
        const conns = await Promise.all(plans.map(() => open(d.lockAddress.port)));
        const seen = new Set<bigint>();
        let released = 0;
        let unseen = 0;
        try {
          await Promise.all(plans.map((plan, i) => driveKeyed(conns[i] as RawConnection, plan, monitor)));
          for (const [i, c] of conns.entries()) {
            const everyReply = plans[i]?.ending.kind === 'open' && !splitLikeServer(c.sent).overflow;
            const outcome = checkKeyedReplies(c, everyReply);
            for (const { key: k, token } of outcome.grants) {
              if (seen.has(token)) fail(`token ${token} granted twice`, c);
              seen.add(token);
              expect(monitor.grants.get(token)).toEqual({ lock: k, protocol: 'keyed' });
            }
            released += outcome.released;
            unseen += outcome.unseenReleases;
          }
          // Every OK is a release the engine made, and every release the engine made by R was answered OK.
          expect(released, 'R OK replies, against releases by R').toBeLessThanOrEqual(monitor.releasedByRequest);
          expect(released + unseen, 'R OK replies (and releases we may not have seen answered), against releases by R')
            .toBeGreaterThanOrEqual(monitor.releasedByRequest);
        } finally {
          for (const c of conns) c.destroy();
        }
        await waitIdle(d);
        await serverStillServes(d, monitor);
        expect(monitor.problems).toEqual([]);
        await d.shutdown();
      }),
      fuzzOptions(25),
    );
  }, FUZZ_TEST_MS);

  // docs/protocol.md: replies about `A` on one key come in request order, and a client matches
  // `E A <key>` to the oldest `A` on that key; an immediate error must not overtake a waiting `A`.
  it('answers a malformed A after an earlier waiting A on the same key in request order', async () => {
    const d = await daemon();
    const holder = await open(d.lockAddress.port);
    holder.write('A k 5 0\n');
    await holder.until(() => holder.replies().lines.length === 1, 3_000, 'the grant');
    const c = await open(d.lockAddress.port);
    c.write('A k 5 0.2\nA k -1 0\n');
    await c.until(() => c.replies().lines.length >= 2, 3_000, 'both replies');
    expect(c.replies().lines).toEqual(['T k', 'E A k bad-lease bad lease: a decimal number of seconds > 0']);
  });
});

describe('session protocol under fuzzed input', () => {
  it('sends well-formed lines with ERROR last, keeps one holder per name, and leaks no claim', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sessionPlan, { minLength: 2, maxLength: 6 }), async (plans) => {
        const d = await daemon();
        const monitor = new EngineMonitor(d.engine);
        const conns = await Promise.all(plans.map(() => open(d.sessionAddress.port)));
        const seen = new Set<bigint>();
        try {
          await Promise.all(plans.map((plan, i) => driveSession(conns[i] as RawConnection, plan)));
          for (const [i, c] of conns.entries()) {
            const name = plans[i]?.name as string;
            const token = checkSessionReplies(c);
            if (token === null) continue;
            if (seen.has(token)) fail(`token ${token} granted to two sessions`, c);
            seen.add(token);
            expect(monitor.grants.get(token)).toEqual({ lock: name, protocol: 'session' });
          }
        } finally {
          for (const c of conns) c.destroy();
        }
        await waitIdle(d);
        await serverStillServes(d, monitor);
        expect(monitor.problems).toEqual([]);
        await d.shutdown();
      }),
      fuzzOptions(20),
    );
  }, FUZZ_TEST_MS);
});

describe('raw bytes on both ports', () => {
  async function sendAndHangUp(port: number, bytes: Uint8Array): Promise<RawConnection> {
    const c = await open(port);
    c.write(bytes);
    c.end();
    await c.until(() => c.closed, 5_000, 'the server to close');
    return c;
  }

  // Plain random bytes seldom hold a line break; pieces joined by LF make lines out of them.
  const randomBytes = fc.oneof(
    fc.uint8Array({ maxLength: 3_000 }),
    fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 15 }).map((parts) => bytesOf(...parts.flatMap((p) => [[...p], '\n']))),
  );

  it('answers random bytes with documented errors or nothing, and stays up', async () => {
    const d = await daemon();
    const monitor = new EngineMonitor(d.engine);
    const oneSession = (c: RawConnection): void => {
      const { lines } = c.replies();
      if (lines.length > 1 || (lines.length === 1 && !/^ERROR 0x02 protocol error(: .+)?$/.test(lines[0] as string))) fail('not a documented error', c);
      checkSessionReplies(c);
    };
    await fc.assert(
      fc.asyncProperty(randomBytes, async (bytes) => {
        const [keyed, session] = await Promise.all([sendAndHangUp(d.lockAddress.port, bytes), sendAndHangUp(d.sessionAddress.port, bytes)]);
        checkKeyedReplies(keyed, false);
        if (keyed.replies().lines.some((l) => !l.startsWith('E '))) fail('random bytes made a request', keyed);
        oneSession(session);
      }),
      fuzzOptions(60),
    );
    // Over 4 KiB without a line break: the line-too-long error, then the server closes.
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 4_200, maxLength: 8_192 }).map(noLineBreak), async (bytes) => {
        const [keyed, session] = await Promise.all([sendAndHangUp(d.lockAddress.port, bytes), sendAndHangUp(d.sessionAddress.port, bytes)]);
        expect(keyed.replies()).toEqual({ lines: ['E - - line-too-long line too long: over 4096 bytes'], tail: '' });
        expect(session.replies()).toEqual({ lines: ['ERROR 0x02 protocol error: line too long: over 4096 bytes'], tail: '' });
      }),
      fuzzOptions(10),
    );
    expect(monitor.grants.size).toBe(0);
    await waitIdle(d);
    await serverStillServes(d, monitor);
    expect(monitor.problems).toEqual([]);
  }, FUZZ_TEST_MS);
});

describe('many short-lived connections', () => {
  it('returns to zero connections and zero locks after a burst of 2,000 garbage connections', async () => {
    const d = await daemon();
    const monitor = new EngineMonitor(d.engine);
    const live = new Set<RawConnection>();
    teardown.push(() => live.forEach((c) => c.destroy()));
    const junk = fc.sample(garbage(/^([AR] |ACQUIRE )/), { numRuns: 2_000, seed: 7 });
    const behaviours: Array<(i: number, bytes: Uint8Array) => Promise<void>> = [
      (_, b) => visit(d.lockAddress.port, async (c) => c.write(bytesOf([...b], '\n'))),
      (_, b) => visit(d.lockAddress.port, async (c) => hangUp(c, bytesOf([...b], '\n'))),
      (i) => visit(d.lockAddress.port, async (c) => c.write(`A burst/${i % 5} 0.05 0.01\n`)),
      (_, b) => visit(d.sessionAddress.port, async (c) => hangUp(c, bytesOf([...b], '\n'))),
      (i) => visit(d.sessionAddress.port, async (c) => {
        c.write(`ACQUIRE burst/${i % 3} 60000\n`);
        await c.until(() => c.replies().lines.length > 0, 3_000, 'ACQUIRED or WAITING');
      }),
      (i) => visit(i % 2 === 0 ? d.lockAddress.port : d.sessionAddress.port, async () => {}),
      (i, b) => visit(i % 2 === 0 ? d.lockAddress.port : d.sessionAddress.port, async (c) => c.write(b.length > 0 ? b : 'A k')),
      (i, b) => visit(i % 2 === 0 ? d.lockAddress.port : d.sessionAddress.port, async (c) => hangUp(c, b)),
    ];
    async function visit(port: number, act: (c: RawConnection) => Promise<void>): Promise<void> {
      const c = await RawConnection.open(port);
      live.add(c);
      try {
        await act(c);
      } finally {
        c.destroy();
        live.delete(c);
      }
    }
    async function hangUp(c: RawConnection, bytes: Uint8Array): Promise<void> {
      c.write(bytes);
      c.end();
      await c.until(() => c.closed, 3_000, 'the server to close');
    }

    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < junk.length; i = next++) await (behaviours[i % behaviours.length] as (typeof behaviours)[number])(i, junk[i] as Uint8Array);
    };
    await Promise.all(Array.from({ length: 50 }, worker));

    await eventually(async () => {
      const open = await connectionGauge(d.httpAddress.port);
      return open.keyed === 0 && open.session === 0;
    }, 5_000, 'baton_connections to fall back to 0');
    await waitIdle(d);
    expect(monitor.holding).toBe(0);
    expect(monitor.problems).toEqual([]);
    await serverStillServes(d, monitor);
  }, FUZZ_TEST_MS);
});
