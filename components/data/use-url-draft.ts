// A text field whose value is also a URL parameter: it follows keystrokes at once (the table
// filters as you type) and is written to the URL only after a pause, so typing "jobs/nightly"
// is one history entry, not twelve. When the URL changes under it (Back, Forward) the field
// follows the URL.
import { useEffect, useState } from 'react';

export const URL_WRITE_DELAY_MS = 300;

export function useUrlDraft(urlValue: string, commit: (value: string) => void, delayMs = URL_WRITE_DELAY_MS): [string, (value: string) => void] {
  const [draft, setDraft] = useState(urlValue);
  // Derived state, updated during render (React's pattern for "reset when a prop changes").
  const [seenUrl, setSeenUrl] = useState(urlValue);
  if (seenUrl !== urlValue) {
    setSeenUrl(urlValue);
    setDraft(urlValue);
  }
  useEffect(() => {
    if (draft === urlValue) return;
    const timer = setTimeout(() => commit(draft), delayMs);
    return () => clearTimeout(timer);
  }, [draft, urlValue, commit, delayMs]);
  return [draft, setDraft];
}
