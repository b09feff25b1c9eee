import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { HISTORY_FORMAT, MAX_FILE_BYTES, decodeHistory, encodeHistory } from './history-file.ts';
import { HistoryRecorder } from './history-recorder.ts';
import { BINS } from './log-histogram.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const EPOCH = 1_700_000_000_000;

/** A recorder on a fake engine clock; `now` moves both. */
function recorder() {
  const f = engineFixture({ blockSize: 1_000n });
  const r = new HistoryRecorder(f.engine, { wall: (ms) => EPOCH + ms }, () => EPOCH + f.clock.now());
  return { ...f, r };
}

/** Two hours of traffic: a contended lock every minute, so both rings and the roll-up hold something. */
function busyHistory() {
  const h = recorder();
  for (let minute = 0; minute < 120; minute++) {
    const first = h.fixed('a', live);
    h.fixed('a', live);
    h.tick(250 + minute);
    h.engine.release('a', first.token);
    h.tick(60_000 - 250 - minute);
  }
  return h;
}

describe('the chart history file', () => {
  it('round-trips both ranges exactly: a second recorder shows the same 1 h and 24 h', () => {
    const a = busyHistory();
    const text = encodeHistory(a.r.saved());
    const b = recorder();
    b.clock.advance(a.clock.now() - b.clock.now());
    const decoded = decodeHistory(text, b.r.ringShapes);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(b.r.restore(decoded.history)).toBeGreaterThan(0);
    for (const range of ['5m', '1h', '24h'] as const) expect(b.r.range(range)).toEqual(a.r.range(range));
    expect(a.r.range('24h').summary.grants).toBe(240);
  });

  it('puts a fine bucket older than the hour into the 24 h ring, where its roll-up would have gone', () => {
    const a = busyHistory();
    const text = encodeHistory(a.r.saved());
    const b = recorder();
    b.clock.advance(a.clock.now() - b.clock.now() + 3_600_000); // down for an hour
    const decoded = decodeHistory(text, b.r.ringShapes);
    if (!decoded.ok) throw new Error(decoded.reason);
    b.r.restore(decoded.history);
    expect(b.r.range('24h').summary.grants).toBe(240);
    expect(b.r.range('1h').summary.grants).toBe(0);
  });

  it('stays within its ceiling when every bucket saw every measure', () => {
    const full = {
      savedAt: EPOCH,
      rings: [
        { bucketMs: 10_000, bucketCount: 360 },
        { bucketMs: 300_000, bucketCount: 288 },
      ].map((ring) => ({
        ...ring,
        buckets: Array.from({ length: ring.bucketCount }, (_, i) => ({
          start: EPOCH - (EPOCH % ring.bucketMs) - i * ring.bucketMs,
          grants: 4_000_000_000,
          counts: Array.from({ length: 7 }, () => BINS * 4_000_000_000),
          hists: Array.from({ length: 7 }, () => new Uint32Array(BINS).fill(4_000_000_000)),
        })),
      })),
    };
    const text = encodeHistory(full);
    expect(text.length).toBeLessThan(MAX_FILE_BYTES);
    expect(decodeHistory(text, full.rings).ok).toBe(true);
  });

  it.each([
    ['not JSON', '{"format": "baton-chart-hist', /not JSON/],
    ['another program’s JSON', '{"nodes": []}', /not a baton-chart-history v1 file/],
    ['another version', JSON.stringify({ format: HISTORY_FORMAT, version: 2, bins: BINS, savedAt: 1, rings: [] }), /v1/],
    ['other histogram bins', JSON.stringify({ format: HISTORY_FORMAT, version: 1, bins: 100, savedAt: 1, rings: [] }), /v1/],
    [
      'other bucket sizes',
      JSON.stringify({
        format: HISTORY_FORMAT,
        version: 1,
        bins: BINS,
        savedAt: 1,
        rings: [
          { bucketMs: 60_000, bucketCount: 60, buckets: [] },
          { bucketMs: 300_000, bucketCount: 288, buckets: [] },
        ],
      }),
      /ring 0/,
    ],
    ['too much text', ' '.repeat(MAX_FILE_BYTES + 1), /larger than/],
  ])('refuses %s with a reason', (_what, text, reason) => {
    const result = decodeHistory(text, recorder().r.ringShapes);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('refuses a histogram that does not add up to its count, or is not BINS counts, or a bucket off its boundary', () => {
    const a = busyHistory();
    const shapes = a.r.ringShapes;
    const file = JSON.parse(encodeHistory(a.r.saved()));
    const bucket = file.rings[0].buckets[0];
    const m = bucket.hists.findIndex((h: string | null) => h !== null);
    bucket.counts[m] += 1;
    expect(decodeHistory(JSON.stringify(file), shapes)).toMatchObject({ ok: false, reason: expect.stringMatching(/add up/) });
    bucket.counts[m] -= 1;
    bucket.hists[m] = Buffer.from([1, 2, 3]).toString('base64');
    expect(decodeHistory(JSON.stringify(file), shapes)).toMatchObject({ ok: false, reason: expect.stringMatching(/counts/) });
    bucket.hists[m] = null;
    bucket.counts[m] = 0;
    bucket.start += 1;
    expect(decodeHistory(JSON.stringify(file), shapes)).toMatchObject({ ok: false, reason: expect.stringMatching(/boundary/) });
  });
});
