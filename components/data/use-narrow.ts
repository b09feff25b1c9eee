// Phone width: below Tailwind's `sm` (640 px) the lock table draws each lock as a card. Read in
// JS, not only in CSS, because the virtualised list must know each row's height.
import { useSyncExternalStore } from 'react';

const QUERY = '(max-width: 639.98px)';

function subscribe(listener: () => void): () => void {
  const media = window.matchMedia(QUERY);
  media.addEventListener('change', listener);
  return () => media.removeEventListener('change', listener);
}

export function useNarrow(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => window.matchMedia(QUERY).matches,
    () => false,
  );
}
