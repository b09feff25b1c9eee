// No fencing token given twice (chaos checker property 8): over the whole run, across every lock
// and every node, no two grants carry the same token. Each node issues tokens only from its own
// slot's blocks (lib/tokens/token-slots.ts), so this holds in a partition too, where two actives
// grant at once; before slots, the two sides of a partition could issue the same tokens. A grant
// is a client's `grant` event: one per acquire (a session claim carried over a handoff keeps its
// token without a new grant event), so one token on two grant events is two grants.
import type { ClientEvent } from './history.ts';
import { iso } from './mutual-exclusion.ts';
import type { Violation } from './violation.ts';

/** Returns how many distinct tokens were granted. */
export function checkTokensUnique(events: readonly ClientEvent[], violations: Violation[]): number {
  const first = new Map<string, Extract<ClientEvent, { kind: 'grant' }>>();
  for (const e of events) {
    if (e.kind !== 'grant') continue;
    const earlier = first.get(e.token);
    if (earlier === undefined) {
      first.set(e.token, e);
      continue;
    }
    violations.push({
      property: 'token-unique',
      message: `token ${e.token} was given twice: to ${earlier.client} for ${earlier.lock} at ${iso(earlier.t)} and to ${e.client} for ${e.lock} at ${iso(e.t)}`,
    });
  }
  return first.size;
}
