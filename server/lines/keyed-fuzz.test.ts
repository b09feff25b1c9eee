// Socket-level fuzzing of the keyed protocol against a real daemon on 127.0.0.1: valid
// requests mixed with garbage, cut into random chunks, over several connections that are
// sometimes cut off mid-line. Each run checks what docs/protocol.md promises: well-formed
// replies, one per request, tokens that only grow, at most one holder per lock, nothing left
// in the lock table once everyone has gone, and a server that still serves afterwards.
// The plans and the oracle are in testing/keyed-fuzz-model.ts.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { daemon, expectCleanEnd, FUZZ_TEST_MS, fuzzOptions, open, runTeardown } from '../testing/fuzz-harness.ts';
import { EngineMonitor, fail, type RawConnection, splitLikeServer } from '../testing/fuzz-helpers.ts';
import { checkKeyedReplies, driveKeyed, keyedPlan } from '../testing/keyed-fuzz-model.ts';

afterEach(runTeardown);

describe('keyed protocol under fuzzed input', () => {
  it(
    'answers every request once with a well-formed line, never reuses a token, and leaks no lock',
    async () => {
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
            expect(released + unseen, 'R OK replies (and releases we may not have seen answered), against releases by R').toBeGreaterThanOrEqual(
              monitor.releasedByRequest,
            );
          } catch (err) {
            for (const c of conns) c.destroy();
            throw err;
          }
          await expectCleanEnd(d, monitor, conns);
        }),
        fuzzOptions(25),
      );
    },
    FUZZ_TEST_MS,
  );

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
