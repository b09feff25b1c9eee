// Socket-level fuzzing of the session protocol against a real daemon on 127.0.0.1: several
// sessions on a few names, each a first line (ACQUIRE or not), heartbeats, garbage and pauses
// cut into random chunks, ended by a close, a cut mid-line, a FIN or by waiting for the server.
// Each run checks what docs/protocol.md promises: well-formed lines with ERROR last, one holder
// per name, nothing left in the lock table once everyone has gone, and a server that still
// serves afterwards. The plans and the oracle are in testing/session-fuzz-model.ts.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { daemon, expectCleanEnd, FUZZ_TEST_MS, fuzzOptions, open, runTeardown } from '../testing/fuzz-harness.ts';
import { EngineMonitor, fail, type RawConnection } from '../testing/fuzz-helpers.ts';
import { checkSessionReplies, driveSession, sessionPlan } from '../testing/session-fuzz-model.ts';

afterEach(runTeardown);

describe('session protocol under fuzzed input', () => {
  it(
    'sends well-formed lines with ERROR last, keeps one holder per name, and leaks no claim',
    async () => {
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
          } catch (err) {
            for (const c of conns) c.destroy();
            throw err;
          }
          await expectCleanEnd(d, monitor, conns);
        }),
        fuzzOptions(20),
      );
    },
    FUZZ_TEST_MS,
  );
});
