// The dashboard's view as the page's URL query, so an operator can paste a link into an incident
// channel: `lock` (the selected lock), `q` (search), `proto`, `waiters=1`, `expiring=<s>`,
// `held=<s>`, `sort=<key>.<asc|desc>` (the table's order; name A→Z is left out), and `client`
// (with `clientBy=address` when it is an address, not an identity: the client view). Pure: parse never throws, and a value it cannot read is ignored (as if absent).
import type { Protocol } from '../ops-api/api-types.ts';
import type { ClientMatchView } from './client-match.ts';
import { DEFAULT_SORT, type LockFilters, type LockSort, type LockSortKey } from './lock-table-query.ts';

export interface ViewParams extends LockFilters {
  lock: string | null;
  sort: LockSort;
  /** The client whose holds and waits the client view lists; null: no client view. */
  client: ClientMatchView | null;
}

export const EMPTY_VIEW: ViewParams = {
  lock: null,
  q: '',
  proto: null,
  waiters: false,
  expiringWithinS: null,
  heldLongerThanS: null,
  sort: DEFAULT_SORT,
  client: null,
};

/** The query parameters this module owns; any other parameter in the URL is kept as it is. */
export const VIEW_KEYS = ['lock', 'q', 'proto', 'waiters', 'expiring', 'held', 'sort', 'client', 'clientBy'] as const;

const SORT_KEYS: readonly LockSortKey[] = ['name', 'heldFor', 'token', 'leaseLeft', 'queue'];

/** "queue.desc" → the sort; anything else → the default order. */
function sortParam(raw: string | null): LockSort {
  const [key, direction, extra] = raw?.split('.') ?? [];
  const known = SORT_KEYS.find((k) => k === key);
  if (known === undefined || extra !== undefined || (direction !== 'asc' && direction !== 'desc')) return DEFAULT_SORT;
  return { key: known, direction };
}

/** An identity or address as the client view names it: what the held route takes (1-250 characters, no control character). */
function clientParam(raw: string | null, by: string | null): ClientMatchView | null {
  if (raw === null || raw.length === 0 || raw.length > MAX_CLIENT_PARAM || /[\p{Cc}\p{Cs}]/u.test(raw)) return null;
  return { by: by === 'address' ? 'address' : 'identity', value: raw };
}

/** An identity is at most 200 bytes on the wire; 250 bounds it with room. */
export const MAX_CLIENT_PARAM = 250;

/** A lock name is 1 to 250 bytes on the wire; 250 UTF-16 units bound it from above. */
export const MAX_LOCK_PARAM = 250;
export const MAX_SEARCH_PARAM = 200;
/** A day: longer leases exist, but "ends within a day" is already every lease worth filtering for. */
export const MAX_EXPIRING_S = 86_400;
/** Ten years of holding, in seconds. */
export const MAX_HELD_S = 315_360_000;

// A lone surrogate (\p{Cs} under the u flag) would travel as U+FFFD and name another lock.
const CONTROL_OR_SPACE = /[\s\p{Cc}\p{Cs}]/u;
const LONE_SURROGATE = /\p{Cs}/u;

function lockParam(raw: string | null): string | null {
  if (raw === null || raw.length === 0 || raw.length > MAX_LOCK_PARAM) return null;
  if (CONTROL_OR_SPACE.test(raw)) return null;
  return raw;
}

function searchParam(raw: string | null): string {
  if (raw === null || raw.length > MAX_SEARCH_PARAM || LONE_SURROGATE.test(raw)) return '';
  return raw;
}

function protoParam(raw: string | null): Protocol | null {
  return raw === 'keyed' || raw === 'session' ? raw : null;
}

/** A whole number of seconds written plainly ("10", not "1e1", "010" or "10.0"), within [min, max]. */
export function secondsParam(raw: string | null, min: number, max: number): number | null {
  if (raw === null || !/^(0|[1-9]\d{0,9})$/.test(raw)) return null;
  const n = Number(raw);
  return n >= min && n <= max ? n : null;
}

/** The view a query string (with or without its "?") names. */
export function parseViewParams(search: string): ViewParams {
  const p = new URLSearchParams(search);
  return {
    lock: lockParam(p.get('lock')),
    q: searchParam(p.get('q')),
    proto: protoParam(p.get('proto')),
    waiters: p.get('waiters') === '1',
    expiringWithinS: secondsParam(p.get('expiring'), 1, MAX_EXPIRING_S),
    heldLongerThanS: secondsParam(p.get('held'), 0, MAX_HELD_S),
    sort: sortParam(p.get('sort')),
    client: clientParam(p.get('client'), p.get('clientBy')),
  };
}

/**
 * The query string for `view` ("" or "?…"), keeping the parameters of `current` this module
 * does not own. Off filters are left out, so the plain page is the plain URL.
 */
export function formatViewParams(view: ViewParams, current = ''): string {
  const p = new URLSearchParams(current);
  for (const key of VIEW_KEYS) p.delete(key);
  if (view.lock !== null) p.set('lock', view.lock);
  if (view.q !== '') p.set('q', view.q);
  if (view.proto !== null) p.set('proto', view.proto);
  if (view.waiters) p.set('waiters', '1');
  if (view.expiringWithinS !== null) p.set('expiring', String(view.expiringWithinS));
  if (view.heldLongerThanS !== null) p.set('held', String(view.heldLongerThanS));
  if (view.sort.key !== DEFAULT_SORT.key || view.sort.direction !== DEFAULT_SORT.direction) p.set('sort', `${view.sort.key}.${view.sort.direction}`);
  if (view.client !== null) {
    p.set('client', view.client.value);
    if (view.client.by === 'address') p.set('clientBy', 'address');
  }
  const text = p.toString();
  return text === '' ? '' : `?${text}`;
}

/** Whether two views are the same (the hook writes the URL only when the view changed). */
export function sameView(a: ViewParams, b: ViewParams): boolean {
  return (
    a.lock === b.lock &&
    a.q === b.q &&
    a.proto === b.proto &&
    a.waiters === b.waiters &&
    a.expiringWithinS === b.expiringWithinS &&
    a.heldLongerThanS === b.heldLongerThanS &&
    a.sort.key === b.sort.key &&
    a.sort.direction === b.sort.direction &&
    a.client?.by === b.client?.by &&
    a.client?.value === b.client?.value
  );
}
