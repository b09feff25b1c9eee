// The dashboard's view (selected lock, search, filters) lives in the URL query, so a pasted link
// opens the same view, a reload restores it and Back undoes the last change. This hook is the
// one reader and writer of those parameters (lib/dashboard/view-params.ts says what they are).
// Client-side only: the server renders the same shell whatever the query.
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { formatViewParams, parseViewParams, sameView, type ViewParams } from '@/lib/dashboard/view-params.ts';

/** push: a new history entry (a selection, a filter); replace: the same entry (a search being refined). */
export type HistoryMode = 'push' | 'replace';

const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Back and Forward: the browser changed the URL without us.
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const readSearch = () => window.location.search;
// The server renders the plain view; the browser then reads its own URL (no hydration mismatch).
const serverSearch = () => '';

/** Writes `next` into the URL when it differs from the view there now. */
export function writeView(next: ViewParams, mode: HistoryMode): void {
  const current = window.location.search;
  if (sameView(parseViewParams(current), next)) return;
  const search = formatViewParams(next, current);
  const url = `${window.location.pathname}${search}${window.location.hash}`;
  // Next's router keeps its own entries in history.state: pass it on so Back stays a soft navigation.
  if (mode === 'push') window.history.pushState(window.history.state, '', url);
  else window.history.replaceState(window.history.state, '', url);
  for (const listener of listeners) listener();
}

export interface ViewParamsHandle {
  view: ViewParams;
  /** Changes part of the view. */
  update(patch: Partial<ViewParams>, mode: HistoryMode): void;
}

export function useViewParams(): ViewParamsHandle {
  const search = useSyncExternalStore(subscribe, readSearch, serverSearch);
  const view = useMemo(() => parseViewParams(search), [search]);
  const update = useCallback((patch: Partial<ViewParams>, mode: HistoryMode) => {
    writeView({ ...parseViewParams(window.location.search), ...patch }, mode);
  }, []);
  return { view, update };
}

/**
 * One query parameter outside the lock view (the charts' `range`), read and written through the
 * same listeners, so a reload or a pasted link keeps it and Back undoes it. `null` removes it.
 */
export function useQueryParam(key: string): [string | null, (value: string | null, mode: HistoryMode) => void] {
  const search = useSyncExternalStore(subscribe, readSearch, serverSearch);
  const value = useMemo(() => new URLSearchParams(search).get(key), [search, key]);
  const set = useCallback(
    (next: string | null, mode: HistoryMode) => {
      const p = new URLSearchParams(window.location.search);
      if (p.get(key) === next) return;
      if (next === null) p.delete(key);
      else p.set(key, next);
      const text = p.toString();
      const url = `${window.location.pathname}${text === '' ? '' : `?${text}`}${window.location.hash}`;
      if (mode === 'push') window.history.pushState(window.history.state, '', url);
      else window.history.replaceState(window.history.state, '', url);
      for (const listener of listeners) listener();
    },
    [key],
  );
  return [value, set];
}
