// The keyed protocol's side of the socket-level fuzz tests (server/lines/keyed-fuzz.test.ts,
// server/lines/raw-bytes-fuzz.test.ts): generated connection plans (requests, near misses, garbage,
// and how each connection ends), the client that plays a plan, and the oracle that matches
// every reply to the request it answers.
//
// The expected reply to each request comes from the bytes actually written, split the way
// the server splits them (splitLikeServer) and read with the protocol codecs; the codecs have
// their own unit tests, so this is about the server around them.
import fc from 'fast-check';
import { ERRORS, type ErrorName } from '../../lib/errors.ts';
import { encodeKeyedError, parseKeyedRequest } from '../../lib/protocol/keyed-codec.ts';
import { ALL_AT_ONCE, bytesOf, chunking, garbage, invalidUtf8Key, utf8 } from './fuzz-generators.ts';
import { type EngineMonitor, fail, type PlannedLine, type RawConnection, sleep, splitLikeServer, writePlanned } from './fuzz-helpers.ts';

// --- generated input ---------------------------------------------------------------------

const seconds = (minMs: number, maxMs: number) => fc.integer({ min: minMs, max: maxMs }).map((ms) => String(ms / 1000));

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
  kind: fc.constant('acquire' as const),
  key,
  lease: seconds(50, 300),
  // Mostly bounded waits; sometimes 0, which waits until the holder's short lease runs out.
  wait: fc.oneof({ weight: 1, arbitrary: fc.constant('0') }, { weight: 4, arbitrary: seconds(1, 200) }),
});
const release = fc.record({ kind: fc.constant('release' as const), key, token: tokenRef });
const malformedKeyed: fc.Arbitrary<Uint8Array> = fc.oneof(
  garbage(/^[AR] /),
  fc
    .tuple(key, fc.constantFrom('0', '0.0', '-1', '1.', '.5', 'x', '1e3', '1234567890123', '0.0000000001', '+1', ''), seconds(0, 200))
    .map(([k, lease, wait]) => utf8(`A ${k} ${lease} ${wait}`)),
  fc.tuple(key, seconds(50, 300), fc.constantFrom('-1', 'x', '1 2', '', ' ', '1.', '0x1')).map(([k, lease, wait]) => utf8(`A ${k} ${lease} ${wait}`)),
  fc.tuple(key, fc.constantFrom('-1', 'x', '', '1.5', ' 1', '0x1', '99999999999999999999999')).map(([k, t]) => utf8(`R ${k} ${t}`)),
  fc.constantFrom('A', 'R', 'A k0', 'A k0 1', 'R k0', 'A  1 0', 'R  1', 'a k0 1 0', 'AA k0 1 0', 'ACQUIRE k0 100', 'T k0').map(utf8),
  fc
    .tuple(fc.constantFrom('A', 'R'), fc.constantFrom([0], [1], [9], [13], [27], [127], [0xc2, 0x85], [0xc3, 0x28], [0xff], [0xe2, 0x80, 0xa8]))
    .map(([op, bad]) => bytesOf(`${op} k`, bad, op === 'A' ? 'x 0.1 0' : 'x 1')),
  fc.tuple(fc.constantFrom('A', 'R'), invalidUtf8Key).map(([op, k]) => bytesOf(`${op} `, [...k], op === 'A' ? ' 0.1 0' : ' 1')),
  fc
    .tuple(fc.constantFrom('A', 'R'), fc.integer({ min: 251, max: 300 }), fc.constantFrom('x', 'é'))
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
  | { kind: 'cut'; at: number; settleMs: number; reset: boolean } // destroy (FIN or RST) mid-line or mid-pipeline
  | { kind: 'stall' }; // leave a line unfinished: the server ends it at the io-timeout
const keyedEnding: fc.Arbitrary<KeyedEnding> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<KeyedEnding>({ kind: 'open' }) },
  { weight: 2, arbitrary: fc.constant<KeyedEnding>({ kind: 'fin' }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('cut' as const),
      at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      settleMs: fc.integer({ min: 0, max: 30 }),
      reset: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant<KeyedEnding>({ kind: 'stall' }) },
);
export const keyedPlan = fc.record({
  lines: fc.array(fc.record({ line: keyedLine, crlf: fc.boolean(), chunking }), { minLength: 1, maxLength: 10 }),
  allAtOnce: fc.boolean(),
  startDelayMs: fc.integer({ min: 0, max: 20 }),
  ending: keyedEnding,
});
export type KeyedPlan = typeof keyedPlan extends fc.Arbitrary<infer T> ? T : never;

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

export interface KeyedOutcome {
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
export function checkKeyedReplies(c: RawConnection, everyReply: boolean): KeyedOutcome {
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
    else if (req.kind === 'identity') push('now I', { release: false, line: 'I OK' });
    else
      push(req.op === 'A' ? `wait A ${req.key}` : `now ${req.op} ${req.key}`, { release: false, line: encodeKeyedError(req.op, req.key, req.error).trimEnd() });
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
      // After our FIN, requests still waiting are answered T: they are gone, however long they would wait.
      if (answered.waitsForever && !c.endedByUs) fail(`${reply} answers an A that waits forever`, c);
    } else if ((m = /^R (\S+) (OK|STALE)$/.exec(reply))) {
      if (!take(`now R ${m[1]}`, reply).release) fail(`${reply} answers a request that was not a release`, c);
      if (m[2] === 'OK') released++;
    } else if (reply === 'I OK') {
      if (take('now I', reply).line !== reply) fail(`${reply} answers a request that was not an identity`, c);
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

export async function driveKeyed(c: RawConnection, plan: KeyedPlan, monitor: EngineMonitor): Promise<void> {
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
    if (ending.reset) c.reset();
    else c.destroy();
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
