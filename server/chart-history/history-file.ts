// The charts' history as the data dir keeps it (`chart-history.json`): both rings' buckets that
// hold anything, each histogram as the base64 of its BINS little-endian u32 counts. Pure: text in,
// buckets out, and back; history-store.ts does the file work.
//
// Bounded both ways: a file holds at most the rings' 360 + 288 buckets of at most MEASURES
// histograms each (about 6.4 MB when every bucket saw every measure, 10-50 KB on a typical
// node), and a file larger than MAX_FILE_BYTES is not read at all. Anything else that is not
// exactly this format (another program's JSON, another version, other bucket sizes or
// histogram bins, counts that do not add up) is refused whole with a reason: the charts start
// empty rather than from numbers that mean something else.
import { z } from 'zod';
import { BINS } from './log-histogram.ts';
import { MEASURES, type SavedBucket } from './measure-ring.ts';

export const HISTORY_FORMAT = 'baton-chart-history';
export const HISTORY_VERSION = 1;
/** The largest file read back: above the 6.4 MB a full history takes, with room. */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** A ring as saved: its bucket length and its buckets. */
export interface SavedRing {
  bucketMs: number;
  bucketCount: number;
  buckets: readonly SavedBucket[];
}

export interface SavedHistory {
  /** Wall-clock ms when it was written. */
  savedAt: number;
  rings: readonly SavedRing[];
}

const HIST_BYTES = BINS * 4;
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

const bucketSchema = z.object({
  start: z.number().int().nonnegative(),
  grants: count,
  counts: z.array(count).length(MEASURES),
  hists: z
    .array(
      z
        .string()
        .max(Math.ceil(HIST_BYTES / 3) * 4)
        .nullable(),
    )
    .length(MEASURES),
});

const fileSchema = z.object({
  format: z.literal(HISTORY_FORMAT),
  version: z.literal(HISTORY_VERSION),
  bins: z.literal(BINS),
  savedAt: z.number().int().nonnegative(),
  rings: z
    .array(
      z.object({
        bucketMs: z.number().int().positive(),
        bucketCount: z.number().int().positive().max(100_000),
        buckets: z.array(bucketSchema),
      }),
    )
    .max(4),
});

/** The file's text for `history`. */
export function encodeHistory(history: SavedHistory): string {
  return JSON.stringify({
    format: HISTORY_FORMAT,
    version: HISTORY_VERSION,
    bins: BINS,
    savedAt: history.savedAt,
    rings: history.rings.map((ring) => ({
      bucketMs: ring.bucketMs,
      bucketCount: ring.bucketCount,
      buckets: ring.buckets.map((b) => ({
        start: b.start,
        grants: b.grants,
        counts: b.counts,
        hists: b.hists.map((h, m) => (h === null || (b.counts[m] ?? 0) === 0 ? null : encodeHist(h))),
      })),
    })),
  });
}

export type DecodeResult = { ok: true; history: SavedHistory } | { ok: false; reason: string };

/**
 * Reads a file's text back, checked against what the rings expect (`rings`: each one's bucket
 * length and count, in order). Never throws: anything unexpected is `{ ok: false, reason }`.
 */
export function decodeHistory(text: string, rings: ReadonlyArray<{ bucketMs: number; bucketCount: number }>): DecodeResult {
  if (text.length > MAX_FILE_BYTES) return { ok: false, reason: `larger than ${MAX_FILE_BYTES} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: `not a ${HISTORY_FORMAT} v${HISTORY_VERSION} file: ${parsed.error.issues[0]?.message ?? 'bad shape'}` };
  const file = parsed.data;
  if (file.rings.length !== rings.length) return { ok: false, reason: `${file.rings.length} rings where ${rings.length} are kept` };
  const out: SavedRing[] = [];
  for (const [i, ring] of file.rings.entries()) {
    const want = rings[i];
    if (want === undefined || ring.bucketMs !== want.bucketMs || ring.bucketCount !== want.bucketCount) {
      return { ok: false, reason: `ring ${i} has ${ring.bucketCount} buckets of ${ring.bucketMs} ms, not what this version keeps` };
    }
    if (ring.buckets.length > ring.bucketCount) return { ok: false, reason: `ring ${i} has more buckets than it can hold` };
    const buckets: SavedBucket[] = [];
    for (const b of ring.buckets) {
      if (b.start % ring.bucketMs !== 0) return { ok: false, reason: `bucket ${b.start} is not on a ${ring.bucketMs} ms boundary` };
      const hists: Array<Uint32Array | null> = [];
      for (let m = 0; m < MEASURES; m++) {
        const text64 = b.hists[m] ?? null;
        const samples = b.counts[m] ?? 0;
        const h = text64 === null ? null : decodeHist(text64);
        if (text64 !== null && h === null) return { ok: false, reason: `bucket ${b.start}: a histogram is not ${BINS} counts` };
        if (sum(h) !== samples) return { ok: false, reason: `bucket ${b.start}: a histogram does not add up to its count` };
        hists.push(h);
      }
      buckets.push({ start: b.start, grants: b.grants, counts: b.counts, hists });
    }
    out.push({ bucketMs: ring.bucketMs, bucketCount: ring.bucketCount, buckets });
  }
  return { ok: true, history: { savedAt: file.savedAt, rings: out } };
}

function encodeHist(h: Uint32Array): string {
  const bytes = Buffer.alloc(HIST_BYTES);
  for (let i = 0; i < BINS; i++) bytes.writeUInt32LE(h[i] ?? 0, i * 4);
  return bytes.toString('base64');
}

function decodeHist(text: string): Uint32Array | null {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== HIST_BYTES || bytes.toString('base64') !== text) return null;
  const h = new Uint32Array(BINS);
  for (let i = 0; i < BINS; i++) h[i] = bytes.readUInt32LE(i * 4);
  return h;
}

function sum(h: Uint32Array | null): number {
  let n = 0;
  if (h !== null) for (const c of h) n += c;
  return n;
}
