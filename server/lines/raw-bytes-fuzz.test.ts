// Both wire protocols against what no client means to send, on a real daemon on 127.0.0.1:
// random bytes (and overlong lines) on both ports get documented errors or nothing, and a
// burst of 2,000 short-lived connections leaves no connection and no lock behind. Either way
// the server still serves afterwards.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { bytesOf, garbage, noLineBreak } from '../testing/fuzz-generators.ts';
import { daemon, FUZZ_TEST_MS, fuzzOptions, open, runTeardown, serverStillServes, teardown, waitIdle } from '../testing/fuzz-harness.ts';
import { connectionGauge, EngineMonitor, eventually, fail, RawConnection } from '../testing/fuzz-helpers.ts';
import { checkKeyedReplies } from '../testing/keyed-fuzz-model.ts';
import { checkSessionReplies } from '../testing/session-fuzz-model.ts';

afterEach(runTeardown);

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

  it(
    'answers random bytes with documented errors or nothing, and stays up',
    async () => {
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
    },
    FUZZ_TEST_MS,
  );
});

describe('many short-lived connections', () => {
  it(
    'returns to zero connections and zero locks after a burst of 2,000 garbage connections',
    async () => {
      const d = await daemon();
      const monitor = new EngineMonitor(d.engine);
      const live = new Set<RawConnection>();
      teardown.push(() => {
        for (const c of live) c.destroy();
      });
      const junk = fc.sample(garbage(/^([AR] |ACQUIRE )/), { numRuns: 2_000, seed: 7 });
      const behaviours: Array<(i: number, bytes: Uint8Array) => Promise<void>> = [
        (_, b) => visit(d.lockAddress.port, async (c) => c.write(bytesOf([...b], '\n'))),
        (_, b) => visit(d.lockAddress.port, async (c) => hangUp(c, bytesOf([...b], '\n'))),
        (i) => visit(d.lockAddress.port, async (c) => c.write(`A burst/${i % 5} 0.05 0.01\n`)),
        (_, b) => visit(d.sessionAddress.port, async (c) => hangUp(c, bytesOf([...b], '\n'))),
        (i) =>
          visit(d.sessionAddress.port, async (c) => {
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

      await eventually(
        async () => {
          const open = await connectionGauge(d.httpAddress.port);
          return open.keyed === 0 && open.session === 0;
        },
        5_000,
        'baton_connections to fall back to 0',
      );
      await waitIdle(d);
      expect(monitor.holding).toBe(0);
      expect(monitor.problems).toEqual([]);
      await serverStillServes(d, monitor);
    },
    FUZZ_TEST_MS,
  );
});
