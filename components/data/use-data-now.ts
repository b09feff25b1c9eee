// The local clock that the page's countdowns and ages read. While the stream is lost it stops
// at the newest data: a lease counting down on a dead node's page would claim a knowledge the
// page no longer has, so every countdown freezes where the last data left it.
import { dataNow } from './data-now.ts';
import { useStreamStatus } from './queries.ts';
import { useNow } from './use-now.ts';

/** performance.now() every `intervalMs`, held at the last data's arrival while the stream is lost. */
export function useDataNow(intervalMs: number): number {
  const now = useNow(intervalMs);
  return dataNow(now, useStreamStatus());
}

/**
 * Why admin actions are off right now, or null when they are on: the page has lost its node
 * (a click would go nowhere, or act on a state the operator no longer sees).
 */
export function useActionBlock(): string | null {
  const { phase } = useStreamStatus();
  return phase === 'disconnected' ? 'No contact with this node: actions are off until its data comes back.' : null;
}
