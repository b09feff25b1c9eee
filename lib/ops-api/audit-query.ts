// GET /api/v1/audit: the query string read with zod (filters, a cursor or an arrival position,
// a page size); what the parts mean is in audit-filter.ts. Server side only (zod).
import { z } from 'zod';
import { AUDIT_ACTIONS } from './api-types.ts';
import { type AuditCursor, type AuditFilter, DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT, MAX_FILTER_TEXT } from './audit-filter.ts';

const cursorText = z
  .string()
  .max(64)
  .transform((text, ctx): AuditCursor => {
    const m = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)_(\d{1,15})$/.exec(text);
    const at = m === null ? Number.NaN : Number(m[1]);
    if (m === null || !Number.isFinite(at)) {
      ctx.addIssue({ code: 'custom', message: 'before: a cursor from an earlier answer (its `older`), like 1764912000000_42' });
      return z.NEVER;
    }
    return { at, seq: Number(m[2]) };
  });

const text = z.string().min(1).max(MAX_FILTER_TEXT);
const time = z.coerce.number().int().min(0).max(8_640_000_000_000_000);

/**
 * The query string of GET /api/v1/audit. `action` is a comma-separated list; `before` (a cursor)
 * and `after` (an arrival position) are exclusive: one pages back in time, the other asks what
 * arrived since.
 */
export const auditQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIMIT).default(DEFAULT_AUDIT_LIMIT),
    before: cursorText.optional(),
    after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    action: z
      .string()
      .max(200)
      .transform((v) => v.split(','))
      .pipe(z.array(z.enum(AUDIT_ACTIONS)).min(1))
      .optional(),
    who: text.optional(),
    lock: text.optional(),
    client: text.optional(),
    node: z.string().min(1).max(64).optional(),
    from: time.optional(),
    to: time.optional(),
  })
  .strict()
  .refine((q) => q.before === undefined || q.after === undefined, { message: 'before and after cannot be used together', path: ['after'] })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: 'from must not be later than to', path: ['from'] });

export type AuditQuery = z.output<typeof auditQuerySchema>;

export function auditFilterOf(q: AuditQuery): AuditFilter {
  const f: AuditFilter = {};
  if (q.action !== undefined) f.actions = q.action;
  if (q.who !== undefined) f.who = q.who;
  if (q.lock !== undefined) f.lock = q.lock;
  if (q.client !== undefined) f.client = q.client;
  if (q.node !== undefined) f.node = q.node;
  if (q.from !== undefined) f.from = q.from;
  if (q.to !== undefined) f.to = q.to;
  return f;
}
