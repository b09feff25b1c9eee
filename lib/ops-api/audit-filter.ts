// GET /api/v1/audit: what a query may filter on, its pages and cursors, how an entry matches a
// filter, and the query string the console sends. Pure and without zod (the console's bundle
// takes it, and zod's eval probe trips the page's CSP): the route reads the query with the
// schema in audit-query.ts; the ring that answers is lib/cluster/audit-ring.ts.
import type { AuditAction, AuditEntry } from './api-types.ts';

export const DEFAULT_AUDIT_LIMIT = 200;
/** One page at most; a whole range is read page by page (the console's export does). */
export const MAX_AUDIT_LIMIT = 1000;
/** The longest text a text filter takes (the longest audit field is 2,048 characters). */
export const MAX_FILTER_TEXT = 256;

/** What an entry must match; every part is optional and they all must hold. */
export interface AuditFilter {
  /** One of these actions. */
  actions?: readonly AuditAction[];
  /** `who` contains this (case-insensitive): "bearer:admin", "session:3f2a…". */
  who?: string;
  /** A force-release or kick whose lock name contains this (case-insensitive, like the events feed's lock filter). */
  lock?: string;
  /** A client identity or address: in the target of a release-client, or named in a force-release or kick's detail (case-insensitive). */
  client?: string;
  /** Recorded on this node (exact). */
  node?: string;
  /** `at` ≥ from (ms since the epoch). */
  from?: number;
  /** `at` < to (ms since the epoch). */
  to?: number;
}

/** Where a page ends: the entry's time and its arrival position on the node that answers. */
export interface AuditCursor {
  at: number;
  seq: number;
}

/** An entry as the API answers it: with its arrival position on that node (`seq`, per process run). */
export type AuditRow = AuditEntry & { seq: number };

export interface AuditPage {
  /** Newest last. */
  entries: AuditRow[];
  /** Pass as `before` for the page older than this one; null when no older entry that matches is kept. */
  older: string | null;
  /** The node's newest arrival position this answer covers: pass as `after` to get only what arrived since. */
  latest: number;
  /** With `after`: more arrived than `limit`; ask again with `after=latest`. */
  more: boolean;
}

export function encodeAuditCursor(c: AuditCursor): string {
  return `${c.at}_${c.seq}`;
}

/** Actions whose target is a lock name; the others name a client, a node or a session. */
export function targetIsLock(action: AuditAction): boolean {
  return action === 'force-release' || action === 'kick';
}

function contains(text: string, part: string): boolean {
  return text.toLowerCase().includes(part.toLowerCase());
}

export function matchesAudit(e: AuditEntry, f: AuditFilter): boolean {
  if (f.actions !== undefined && !f.actions.includes(e.action)) return false;
  if (f.node !== undefined && e.node !== f.node) return false;
  if (f.from !== undefined && !(e.at >= f.from)) return false;
  if (f.to !== undefined && !(e.at < f.to)) return false;
  if (f.who !== undefined && !e.who.toLowerCase().includes(f.who.toLowerCase())) return false;
  if (f.lock !== undefined && !(targetIsLock(e.action) && contains(e.target, f.lock))) return false;
  if (f.client !== undefined) {
    const named = e.action === 'release-client' ? contains(e.target, f.client) : targetIsLock(e.action) && contains(e.detail ?? '', f.client);
    if (!named) return false;
  }
  return true;
}

/** The query string for a filter and a page position (the console's side of auditQuerySchema). */
export function auditSearch(f: AuditFilter, page: { limit: number; before?: string | null; after?: number }): string {
  const p = new URLSearchParams();
  p.set('limit', String(page.limit));
  if (page.before != null) p.set('before', page.before);
  if (page.after !== undefined) p.set('after', String(page.after));
  if (f.actions !== undefined && f.actions.length > 0) p.set('action', f.actions.join(','));
  if (f.who !== undefined && f.who !== '') p.set('who', f.who);
  if (f.lock !== undefined && f.lock !== '') p.set('lock', f.lock);
  if (f.client !== undefined && f.client !== '') p.set('client', f.client);
  if (f.node !== undefined && f.node !== '') p.set('node', f.node);
  if (f.from !== undefined) p.set('from', String(f.from));
  if (f.to !== undefined) p.set('to', String(f.to));
  return p.toString();
}
