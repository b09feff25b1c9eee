// Reading what a request brings (JSON bodies, query strings, path segments) into checked
// values. Bodies that are not JSON are 400 bad-request, bodies over the cap 413 body-too-large;
// JSON of the wrong shape, and bad query or path values, are 422 invalid-input with a message
// naming the field. The Content-Type is not checked: `curl -d` sends JSON as a form.
import { z } from 'zod';
import type { ErrorName } from '../../lib/errors.ts';
import { type LockName, lockNameSchema, readU64Text } from '../../lib/ops-api/admin-request.ts';
import { errorResponse } from './route-kit.ts';

/** Every body of the ops API is a few fields; anything bigger is not ours. */
export const MAX_BODY_BYTES = 16 * 1024;

/** A refusal is data, not a Response yet: mutations write it to the audit log before answering. */
export type Refusal = { ok: false; error: ErrorName; detail: string };
export type Checked<T> = { ok: true; value: T } | Refusal;

export function refusalResponse(refusal: Refusal): Response {
  return errorResponse(refusal.error, refusal.detail);
}

/** "limit: Too big: expected number to be <=1000" for the first issue. */
export function describeIssues(error: z.ZodError, where: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return where;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : where;
  return `${field}: ${issue.message}`;
}

/** The body's text, read with a size cap so an anonymous caller cannot make us buffer megabytes. */
async function readCapped(req: Request, maxBytes: number): Promise<string | null> {
  if (req.body === null) return '';
  const reader = req.body.getReader();
  // A body announced too large is refused unread; a chunked one is counted as it comes.
  if (Number(req.headers.get('content-length') ?? 0) > maxBytes) {
    await reader.cancel();
    return null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An empty body reads as `undefined`, so schemas decide whether a body is optional. `maxBytes`: a route's own cap (the route table says it too). */
export async function readJsonBody<S extends z.ZodType>(req: Request, schema: S, maxBytes = MAX_BODY_BYTES): Promise<Checked<z.output<S>>> {
  const text = await readCapped(req, maxBytes);
  if (text === null) return { ok: false, error: 'body-too-large', detail: `over ${maxBytes} bytes` };
  let json: unknown;
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, error: 'bad-request', detail: 'the body is not valid JSON' };
    }
  }
  return check(schema, json, 'body');
}

export function readQuery<S extends z.ZodType>(req: Request, schema: S): Checked<z.output<S>> {
  return check(schema, Object.fromEntries(new URL(req.url).searchParams), 'query');
}

export function check<S extends z.ZodType>(schema: S, input: unknown, where: string): Checked<z.output<S>> {
  const parsed = schema.safeParse(input);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: 'invalid-input', detail: describeIssues(parsed.error, where) };
}

/**
 * A lock name from the path (Next has already URL-decoded it), checked once here: inward it
 * travels as a LockName. A name the wire protocols could never hold is answered 422
 * invalid-input, like every other bad field of the ops API, with the bad-key rule as the
 * detail (bad-key itself is the wire protocols' 400).
 */
export function checkLockName(name: string): Checked<LockName> {
  return check(lockNameSchema, name, 'name');
}

/**
 * A fencing token: a decimal u64 string (the one u64 rule, as on the wire) or a safe-integer
 * number; a bigint from here on. One union of the two JSON types, then one transform, so a bad
 * value is named by the rule it broke rather than zod's "Invalid input" for a failed union.
 */
export const tokenSchema = z
  .union([z.string(), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)])
  .transform((t, ctx) => (typeof t === 'number' ? BigInt(t) : readU64Text(t, ctx)));

/** A claim id from the path: a positive decimal that fits a safe integer. */
export function checkClaimId(id: string): Checked<number> {
  const n = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : Number.NaN;
  return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: false, error: 'invalid-input', detail: 'id: expected a decimal claim id' };
}
