// The session protocol's side of the socket-level fuzz tests (server/lines/session-fuzz.test.ts,
// server/lines/raw-bytes-fuzz.test.ts): generated session plans (a first line, later heartbeats,
// garbage and pauses, and how the session ends), the client that plays a plan, and the oracle
// that checks one session's replies against what it sent.
//
// What a session may see follows from the bytes actually written, split the way the server
// splits them (splitLikeServer) and read with the session codec, which has its own unit tests.
import fc from 'fast-check';
import { parseSessionRequest } from '../../lib/protocol/session-codec.ts';
import { bytesOf, chunking, garbage, invalidUtf8Key, utf8 } from './fuzz-generators.ts';
import { type Chunking, fail, type PlannedLine, type RawConnection, sleep, splitLikeServer, writePlanned } from './fuzz-helpers.ts';
import { LONG_LEASE_MS } from './fuzz-harness.ts';

// --- generated input ---------------------------------------------------------------------

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
  fc
    .constantFrom(
      '',
      'HEARTBEAT',
      'ACQUIRE',
      'ACQUIRE s0',
      'ACQUIRE s0 0',
      'ACQUIRE s0 -5',
      'ACQUIRE s0 1.5',
      'ACQUIRE s0 100 extra',
      'acquire s0 100',
      ' ACQUIRE s0 100',
      'ACQUIRE a\tb 100',
      'ACQUIRE a\u00a0b 100',
      `ACQUIRE ${'n'.repeat(251)} 100`,
      'ACQUIRE s0 1000000000000000',
      'A s0 1 0',
    )
    .map(utf8),
  fc.constantFrom([0], [0xc3, 0x28], [0xff], [0x7f]).map((bad) => bytesOf('ACQUIRE s', bad, ' 100')),
  invalidUtf8Key.map((k) => bytesOf('ACQUIRE ', [...k], ' 100')),
);
const sessionFirst: fc.Arbitrary<SessionFirst> = fc.oneof(
  // Short leases expire within a run; a long one shows that closing, not the lease, released it.
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      leaseMs: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 60, max: 400 }) }, fc.constant(LONG_LEASE_MS)),
    }),
  },
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
type SessionEnding = { kind: 'close'; holdMs: number } | { kind: 'cut'; at: number; reset: boolean } | { kind: 'fin' } | { kind: 'linger' };
const sessionEnding: fc.Arbitrary<SessionEnding> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('close' as const), holdMs: fc.integer({ min: 0, max: 60 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), reset: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.constant<SessionEnding>({ kind: 'fin' }) },
  { weight: 1, arbitrary: fc.constant<SessionEnding>({ kind: 'linger' }) },
);
export const sessionPlan = fc.record({
  name: sessionName,
  first: sessionFirst,
  later: fc.array(fc.record({ item: sessionLater, chunking }), { maxLength: 6 }),
  firstChunking: chunking,
  startDelayMs: fc.integer({ min: 0, max: 10 }),
  ending: sessionEnding,
});
export type SessionPlan = typeof sessionPlan extends fc.Arbitrary<infer T> ? T : never;

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

export async function driveSession(c: RawConnection, plan: SessionPlan): Promise<void> {
  await sleep(plan.startDelayMs);
  const lines = sessionLines(plan);
  const first = plan.first;
  let ending = first.kind === 'silent' || first.kind === 'unfinished' ? { kind: 'linger' as const } : plan.ending;
  // A long lease would keep a lingering holder for a minute: hang up instead.
  if (ending.kind === 'linger' && first.kind === 'acquire' && first.leaseMs === LONG_LEASE_MS) ending = { kind: 'fin' };
  if (ending.kind === 'cut') {
    const at = ending.at * lines.length;
    await writePlanned(c, lines, { line: Math.floor(at), fraction: at % 1 });
    if (ending.reset) c.reset();
    else c.destroy();
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

// --- the session oracle ------------------------------------------------------------------

const SESSION_ERROR_TEXTS = /^(protocol error(: .+)?|io timeout: (no ACQUIRE in time|line not finished in time)|lease expired)$/;

/** Checks one session's output against what it sent; returns its grant token, if any. */
export function checkSessionReplies(c: RawConnection): bigint | null {
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
  const error = last?.startsWith('ERROR ') ? last : null;
  const others = error === null ? lines : lines.slice(0, -1);
  if (error !== null) {
    const m = /^ERROR 0x0([23]) (.+)$/.exec(error);
    if (m === null || !SESSION_ERROR_TEXTS.test(m[2] as string) || (m[1] === '3') !== (m[2] === 'lease expired')) fail(`unexpected ${error}`, c);
  }
  const protocolError = error?.startsWith('ERROR 0x02 protocol error');
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
