// Slow clients against a real daemon on both line protocols: a writer that dribbles a line
// slower than the io-timeout is cut at the io-timeout with the protocol's documented error (a
// slow line that does finish in time is served), and a reader that never reads what it is sent
// is cut off while other clients' handovers go on. The HTTP side is in http-bad-input.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { daemon, open, runTeardown, teardown, waitIdle } from '../testing/fuzz-harness.ts';
import { connectionGauge, eventually, type RawConnection, sleep } from '../testing/fuzz-helpers.ts';
import { NeverReader } from '../testing/never-reader.ts';

afterEach(runTeardown);

const IO_TIMEOUT_MS = 500;
/** Generous: the watchdog runs every io-timeout/4, and the CI machine is busy. */
const CUT_WITHIN_MS = IO_TIMEOUT_MS + 3_000;

/** Writes `text` a byte every `everyMs` until done or the server closes; resolves with when it closed (or null). */
async function dribble(c: RawConnection, text: string, everyMs: number): Promise<number | null> {
  const started = performance.now();
  for (const byte of Buffer.from(text)) {
    if (c.closed) break;
    c.write(Buffer.from([byte]));
    await sleep(everyMs);
  }
  return c.closed ? performance.now() - started : null;
}

describe('slowloris writers', () => {
  it('cuts a line dribbled slower than the io-timeout on both protocols with the documented error, and serves others meanwhile', async () => {
    const d = await daemon({ ioTimeoutMs: IO_TIMEOUT_MS });
    const slowKeyed = await open(d.lockAddress.port);
    const slowFirst = await open(d.sessionAddress.port);
    const slowHolder = await open(d.sessionAddress.port);
    slowHolder.write('ACQUIRE dribbled 60000\n');
    const waiter = await open(d.sessionAddress.port);
    waiter.write('ACQUIRE dribbled 60000\n');
    await waiter.until(() => waiter.replies().lines[0] === 'WAITING 1', 3_000, 'the waiter to queue');
    // A byte every 100 ms: each line would take seconds to finish.
    const line = 'A dribbled/keyed 60 0'.padEnd(60, ' ');
    const cuts = Promise.all([
      dribble(slowKeyed, line, 100),
      dribble(slowFirst, `ACQUIRE ${'n'.repeat(50)} 60000\n`, 100),
      dribble(slowHolder, 'HEARTBEAT'.padEnd(60, 'T'), 100),
    ]);
    // Someone else is served at once, meanwhile.
    const other = await open(d.lockAddress.port);
    other.write('A other 60 0\n');
    await other.until(() => other.replies().lines.length === 1, 3_000, 'a grant for someone else');
    for (const ms of await cuts) {
      expect(ms, 'cut before the line was finished').not.toBeNull();
      expect(ms as number).toBeGreaterThanOrEqual(IO_TIMEOUT_MS - 50);
      expect(ms as number).toBeLessThan(CUT_WITHIN_MS);
    }
    expect(slowKeyed.replies()).toEqual({ lines: ['E - - io-timeout io timeout'], tail: '' });
    expect(slowFirst.replies()).toEqual({ lines: ['ERROR 0x02 io timeout: line not finished in time'], tail: '' });
    expect(slowHolder.replies().lines).toEqual([expect.stringMatching(/^ACQUIRED \d+$/), 'ERROR 0x02 io timeout: line not finished in time']);
    // The dribbling holder's lock went to the waiter at the cut, not after its 60 s lease.
    await waiter.until(() => waiter.replies().lines.length === 2, 3_000, 'the pushed grant');
    expect(waiter.replies().lines[1]).toMatch(/^ACQUIRED \d+$/);
  });

  it('serves a client whose every line is slow but finishes within the io-timeout, however long it stays', async () => {
    // A longer io-timeout than the cut tests': each line takes 25-30% of it, so timers that run
    // hundreds of ms late on a loaded machine still finish every line well in time.
    const ioTimeoutMs = 2_000;
    const d = await daemon({ ioTimeoutMs });
    const keyed = await open(d.lockAddress.port);
    const session = await open(d.sessionAddress.port);
    session.write('ACQUIRE slow 60000\n');
    // Together, and with the idle spell after them (silence between lines is not a line left
    // unfinished), the lines take several io-timeouts.
    const slowLines = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const cut = await Promise.all([
          dribble(keyed, `R slow/${i} 1\n`, (ioTimeoutMs * 0.3) / 11),
          dribble(session, 'HEARTBEAT\n', (ioTimeoutMs * 0.25) / 10),
        ]);
        expect(cut).toEqual([null, null]);
      }
    };
    await slowLines(0, 3);
    await sleep(ioTimeoutMs * 1.25);
    await slowLines(3, 4);
    await keyed.until(() => keyed.replies().lines.length === 4, 3_000, 'every keyed answer');
    expect(keyed.replies().lines).toEqual([0, 1, 2, 3].map((i) => `R slow/${i} STALE`));
    await session.until(() => session.replies().lines.length === 5, 3_000, 'every heartbeat answer');
    expect(new Set(session.replies().lines).size).toBe(1);
    expect(keyed.closed || session.closed).toBe(false);
  });
});

describe('slowloris readers', () => {
  it('cuts off a keyed and a session client that never read, while other clients hand a lock over and over', async () => {
    const d = await daemon({ ioTimeoutMs: IO_TIMEOUT_MS });
    // A session holder that floods heartbeats and never reads their answers.
    const stuckSession = await NeverReader.open(d.sessionAddress.port, 'ACQUIRE contended 60000\n');
    const queued = await open(d.sessionAddress.port);
    queued.write('ACQUIRE contended 60000\n');
    await queued.until(() => queued.replies().lines.length === 1, 3_000, 'the queued session');
    const stuckKeyed = await NeverReader.open(d.lockAddress.port);
    for (const c of [stuckSession, stuckKeyed]) teardown.push(() => c.destroy());
    const flooding = Promise.all([
      stuckSession.flood('HEARTBEAT\n'.repeat(20_000), CUT_WITHIN_MS + 10_000),
      stuckKeyed.flood('R some/long/key/that/fills/the/buffers/faster 1\n'.repeat(8_000), CUT_WITHIN_MS + 10_000),
    ]);
    // Two keyed clients hand one lock back and forth meanwhile: every grant must come.
    const [a, b] = [await open(d.lockAddress.port), await open(d.lockAddress.port)];
    let turn = 0;
    for (; turn < 60; turn++) {
      const c = turn % 2 === 0 ? a : b;
      const seen = c.replies().lines.length;
      c.write('A relay 60 5\n');
      await c.until(() => c.replies().lines.length > seen, 5_000, `handover ${turn}`);
      const reply = c.replies().lines[seen] as string;
      expect(reply).toMatch(/^A relay \d+$/);
      c.write(`R relay ${reply.split(' ')[2]}\n`);
      await c.until(() => c.replies().lines.length > seen + 1, 5_000, `release ${turn}`);
    }
    await eventually(() => stuckSession.closed && stuckKeyed.closed, CUT_WITHIN_MS + 5_000, 'both stuck readers to be cut off');
    await flooding;
    // The stuck holder's lock was handed on at the cut, not after its lease.
    await queued.until(() => queued.replies().lines.length === 2, 3_000, 'the pushed grant');
    expect(queued.replies().lines[1]).toMatch(/^ACQUIRED \d+$/);
    for (const c of [a, b, queued]) c.destroy();
    await eventually(
      async () => {
        const gauge = await connectionGauge(d.httpAddress.port);
        return gauge.keyed === 0 && gauge.session === 0;
      },
      5_000,
      'baton_connections to fall back to 0',
    );
    await waitIdle(d);
  });
});
