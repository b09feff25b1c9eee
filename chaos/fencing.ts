// Fencing as the resource saw it (chaos checker property 1): per lock, the tokens of the accepted
// writes, in the order the resource accepted them, strictly increase, except the same client
// writing again with its own token; an equal token accepted from a second client is one token
// with two holders. Every write refused as stale had a token below the highest accepted then.
// The recorded history is checked, not the resource's word.
import type { History } from './history.ts';
import type { Violation } from './violation.ts';

export function checkFencing(history: History, violations: Violation[]): void {
  const highest = new Map<string, bigint>();
  /** Who wrote the highest accepted token, per lock. */
  const holder = new Map<string, string>();
  for (const w of history.writes) {
    const token = BigInt(w.token);
    const top = highest.get(w.lock);
    if (w.outcome === 'stale') {
      if (top === undefined || token >= top)
        violations.push({
          property: 'fencing',
          message: `${w.lock}: write by ${w.client} with token ${w.token} was refused as stale, but the highest accepted was ${top ?? 'none'}`,
        });
      continue;
    }
    if (top !== undefined && token < top) {
      violations.push({
        property: 'fencing',
        message: `${w.lock}: the resource ${w.outcome === 'accepted' ? 'accepted' : 'let through'} token ${w.token} from ${w.client} after accepting ${top}`,
      });
    }
    const by = holder.get(w.lock);
    if (w.outcome === 'accepted' && top !== undefined && token === top && by !== undefined && by !== w.client) {
      violations.push({
        property: 'fencing',
        message: `${w.lock}: the resource accepted token ${w.token} from ${w.client} after accepting it from ${by}: one token, two holders`,
      });
    }
    if (w.outcome === 'accepted' && (top === undefined || token > top)) {
      highest.set(w.lock, token);
      holder.set(w.lock, w.client);
    }
  }
}
