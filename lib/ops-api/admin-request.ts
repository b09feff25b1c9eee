// The admin operations of the ops API as one typed request, and the rules that make one. An
// operation enters a process at one of two edges, an HTTP request (server/api-handlers) or a
// peer's `admin` message (a standby forwards what its API took, server/cluster), and is parsed
// there once: the lock name is checked by the wire protocols' key rule and branded, the token
// becomes a bigint by the one u64 rule (lib/protocol/u64-text.ts). Inward it travels as is;
// it is written as text only when it leaves again (the peer message below, the JSON reply).
import { z } from 'zod';
import { ERRORS } from '../errors.ts';
import { CLIENT_MATCH_KINDS, type ClientMatchKind } from './client-release-types.ts';
import { isValidClientName } from '../protocol/client-name.ts';
import { isValidKey } from '../protocol/key-rules.ts';
import { parseU64Text } from '../protocol/u64-text.ts';

/** A name the wire protocols could hold. Only the schema makes one, so holding one means it was checked. */
export const lockNameSchema = z.string().refine(isValidKey, ERRORS['bad-key'].message).brand<'LockName'>();
export type LockName = z.output<typeof lockNameSchema>;

/**
 * Text → bigint by the one u64 rule (1-20 digits, at most 2^64-1), as a zod transform step: an
 * issue when the text is not one. The HTTP edge also takes a JSON number (request-input.ts).
 */
export function readU64Text(text: string, ctx: z.RefinementCtx): bigint {
  const value = parseU64Text(text);
  if (value !== null) return value;
  ctx.addIssue({ code: 'custom', message: 'expected a decimal u64 string (0 to 18446744073709551615)' });
  return z.NEVER;
}

/** A fencing token written as text (a u64 does not fit a JSON number), as the peer link carries it. */
export const u64TextSchema = z.string().transform(readU64Text);

/**
 * The text a bulk release names its client by: an identity a client gave, or an address
 * ("127.0.0.1:5312"). Both follow the identity rule (lib/protocol/client-name.ts), so one check.
 */
export const clientMatchTextSchema = z
  .string()
  .refine(isValidClientName, 'expected a client identity or address: 1 to 128 bytes of UTF-8, no control characters, no space at either end')
  .brand<'ClientMatchText'>();

/**
 * Who a bulk release names, and how: `identity` matches the name a client gave, `address` its
 * address, never one for the other. A client chooses its identity, so it can choose one that
 * reads as another client's address ("127.0.0.1:5312"): a match by either would take that
 * client's locks too (issue 26).
 */
export type ClientMatch = { by: ClientMatchKind; value: z.output<typeof clientMatchTextSchema> };

/** How an audit entry, a log line or a dialog names a match: "identity worker-7" or "address 127.0.0.1:5312". */
export function clientMatchText(match: ClientMatch): string {
  return `${match.by} ${match.value}`;
}

/** Tokens one bulk release may name (client-release.ts MAX_CLIENT_LOCKS, kept here to avoid a cycle). */
export const MAX_RELEASE_TOKENS = 10_000;

/** A claim id: a positive safe integer (the engine numbers claims from 1). */
export const claimIdSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** The mutations of the ops API, checked. `token` null releases whoever holds the lock. */
export type AdminOp =
  | { op: 'force-release'; lock: LockName; token: bigint | null }
  | { op: 'kick'; lock: LockName; claimId: number }
  /** Force-releases each lock `client` still holds with one of `tokens` (client-release.ts). */
  | { op: 'release-client'; client: ClientMatch; tokens: bigint[] }
  | { op: 'handoff'; target: string | null }
  | { op: 'restore'; node: string | null };

/** The ops on one lock, run by the active node's engine; handoff and restore belong to the cluster. */
export type LockOp = Extract<AdminOp, { op: 'force-release' | 'kick' | 'release-client' }>;

/** An AdminOp as the peer link carries it (JSON): the token as decimal text. */
export type WireAdminOp =
  | { op: 'force-release'; lock: string; token: string | null }
  | { op: 'kick'; lock: string; claimId: number }
  | { op: 'release-client'; by: ClientMatchKind; client: string; tokens: string[] }
  | { op: 'handoff'; target: string | null }
  | { op: 'restore'; node: string | null };

/** Leaving the process for a peer: the only place the token of an op becomes text. */
export function adminOpToWire(op: AdminOp): WireAdminOp {
  if (op.op === 'release-client') return { op: op.op, by: op.client.by, client: op.client.value, tokens: op.tokens.map(String) };
  return op.op === 'force-release' ? { op: op.op, lock: op.lock, token: op.token === null ? null : op.token.toString() } : op;
}

const wireAdminOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('force-release'), lock: lockNameSchema, token: u64TextSchema.nullable() }),
  z.object({ op: z.literal('kick'), lock: lockNameSchema, claimId: claimIdSchema }),
  // `by` is required: an op from a build before issue 26 matched either, and is refused.
  z.object({
    op: z.literal('release-client'),
    by: z.enum(CLIENT_MATCH_KINDS),
    client: clientMatchTextSchema,
    tokens: z.array(u64TextSchema).max(MAX_RELEASE_TOKENS),
  }),
  z.object({ op: z.literal('handoff'), target: z.string().nullable() }),
  z.object({ op: z.literal('restore'), node: z.string().nullable() }),
]);

export type ReadAdminOp = { ok: true; op: AdminOp } | { ok: false; error: 'invalid-input'; detail: string };

/**
 * The peer edge: an op a standby forwarded, as unknown JSON. It is checked like an HTTP
 * request is (a peer of another version must not put a malformed name or token into the
 * engine), here and nowhere further in.
 */
export function adminOpFromWire(raw: unknown): ReadAdminOp {
  const parsed = wireAdminOp.safeParse(raw);
  if (parsed.success) {
    const op = parsed.data;
    if (op.op !== 'release-client') return { ok: true, op };
    return { ok: true, op: { op: op.op, client: { by: op.by, value: op.client }, tokens: op.tokens } };
  }
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? 'op' : issue.path.map(String).join('.');
  return { ok: false, error: 'invalid-input', detail: `unreadable admin operation: ${field}: ${issue?.message ?? 'invalid'}` };
}

/** What an op's audit entry names as its target, on the node that took the request and on the active node alike. */
export function auditTarget(op: AdminOp): string {
  switch (op.op) {
    case 'force-release':
    case 'kick':
      return op.lock;
    case 'release-client':
      return clientMatchText(op.client);
    case 'handoff':
      return op.target ?? 'any standby';
    case 'restore':
      return op.node ?? 'every yielded node';
  }
}
