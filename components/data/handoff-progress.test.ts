// The handoff status from the API's answer to its end: it used to stop at "Graceful handoff to b
// started." for good; it follows the successor's entry until finished, or says it failed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FailoverView } from '@/lib/ops-api/api-types.ts';
import { ApiRequestError } from './api-client.ts';
import { handoffFailed, handoffTaken, waitHandoffFinished } from './handoff-progress.ts';

const entry = (finishedAt: number | null, reconnecting: number): FailoverView => ({
  at: 1,
  from: 'a',
  to: 'b',
  gapMs: 6.3,
  cause: 'api-handoff',
  id: 'b/1',
  clients: { moved: 2, expired: 1, lost: 0, ended: 0, reconnecting, requeued: 0, regranted: 0, longestStallMs: 5_200, stalls: 2, finishedAt },
});

/** The page's node answering GET /api/v1/cluster with these entries, one read after the other. */
function clusterAnswers(...failovers: FailoverView[][]) {
  let i = 0;
  const fetch = vi.fn(async () => {
    const list = failovers[Math.min(i++, failovers.length - 1)] ?? [];
    return new Response(JSON.stringify({ failovers: list }), { status: 200 });
  });
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the handoff status', () => {
  it('reads who took over and the entry from the answer', () => {
    expect(handoffTaken({ handoff: { from: 'a', target: 'b', gapMs: 6.3, failover: 'b/1' } }, 'a standby')).toEqual({
      target: 'b',
      failover: 'b/1',
      gapMs: 6.3,
    });
    expect(handoffTaken({}, 'c')).toEqual({ target: 'c', failover: null, gapMs: null });
  });

  it('follows the entry until every claim has its fate, then ends finished with the figures', async () => {
    const fetch = clusterAnswers([], [entry(null, 1)], [entry(1_700_000_000_000, 0)]);
    const text = await waitHandoffFinished({ target: 'b', failover: 'b/1', gapMs: 7 }, 10_000);
    expect(text).toBe('Graceful handoff to b finished: 2 claims moved, 1 expired, 0 lost; longest client stall 5.2 s (no active node for 6.3 ms).');
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('says it failed, with the reason and the status code kept', () => {
    const failed = handoffFailed(new ApiRequestError(409, 'conflict', 'b did not take over in time; a stays active'), 'b');
    expect(failed).toBeInstanceOf(ApiRequestError);
    expect(failed).toMatchObject({ status: 409, message: 'Graceful handoff to b failed: b did not take over in time; a stays active' });
  });
});
