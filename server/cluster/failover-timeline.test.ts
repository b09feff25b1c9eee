// The failover timeline's client figures, node by node without processes: a transition's entry
// follows its claims (resumed, expired, re-sent keyed requests granted), is sent again with the
// same id whenever they change, and a standby that receives it replaces the entry it has (it
// used to keep the counts of its snapshot: "2 still reconnecting" after one had expired).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/engine/events.ts';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import type { FailoverView } from '../../lib/ops-api/api-types.ts';
import { FailoverTimeline } from './failover-timeline.ts';
import { KEYED_WATCH_MS, TransitionClaims } from './transition-report.ts';

function node() {
  let now = 10_000;
  const sent: FailoverView[] = [];
  const listeners: Array<(ev: LockEvent) => void> = [];
  const timeline = new FailoverTimeline({
    broadcast: (f) => sent.push(structuredClone(f)),
    logger: pino({ level: 'silent' }),
    now: () => now,
    wallNow: () => 1_700_000_000_000 + now,
    subscribe: (l) => {
      listeners.push(l);
      return () => listeners.splice(listeners.indexOf(l), 1);
    },
  });
  const grant = (lock: string, protocol: 'keyed' | 'session' = 'keyed') => {
    const ev: LockEvent = {
      type: 'grant',
      at: now,
      lock,
      claimId: 1,
      token: 1n,
      protocol,
      client: 'k',
      clientName: null,
      leaseMs: 1,
      sliding: false,
      waitedMs: 0,
      handoverMs: null,
      handoverCause: null,
    };
    for (const l of [...listeners]) l(ev);
  };
  return { timeline, sent, listeners, grant, advance: (ms: number) => (now += ms), now: () => now };
}

/** A real claim to hand the owner's callbacks (they do not read it). */
const someClaim = () => engineFixture().fixed('x', new Owner());

describe('a transition entry on the node that took over', () => {
  it('counts a claim that expires as expired, not moved, measures each stall from the start, and finishes when every claim has its fate', () => {
    const n = node();
    const claims = new TransitionClaims(n.now, n.now() - 20);
    claims.carried = 2;
    const entry = n.timeline.recordTransition(
      { at: 1, from: 'a', to: 'b', gapMs: 20, cause: 'api-handoff' },
      { claims, keyedHolders: 3, lost: 1, keyedWaiters: new Map([['stuck', 2]]) },
    );
    expect(entry.id).toBe('b/1');
    expect(entry.clients).toMatchObject({ moved: 3, expired: 0, lost: 1, reconnecting: 2, requeued: 2, regranted: 0, longestStallMs: null, finishedAt: null });
    n.advance(30);
    claims.onResumed(someClaim());
    n.advance(4_000);
    claims.onEnded(someClaim(), 'expired');
    n.grant('other');
    n.grant('stuck', 'session');
    n.grant('stuck');
    expect(entry.clients).toMatchObject({ moved: 4, expired: 1, reconnecting: 0, regranted: 1, stalls: 2, longestStallMs: 4_050, finishedAt: null });
    n.advance(10);
    n.grant('stuck');
    expect(entry.clients).toMatchObject({ regranted: 2, stalls: 3, longestStallMs: 4_060 });
    expect(entry.clients?.finishedAt).not.toBeNull();
    // Nothing left to watch: the engine listener is gone.
    expect(n.listeners).toHaveLength(0);
    n.timeline.flush();
    expect(n.timeline.fates).toMatchObject({ moved: 4, expired: 1, lost: 1, requeued: 2, regranted: 2 });
  });

  it('sends the entry again, same id, when its figures change, and a standby replaces its copy', () => {
    const active = node();
    const standby = node();
    const claims = new TransitionClaims(active.now, active.now());
    claims.carried = 2;
    active.timeline.recordTransition({ at: 5, from: 'a', to: 'b', gapMs: 6.3, cause: 'crash' }, { claims, keyedHolders: 0, lost: 0, keyedWaiters: new Map() });
    // The old active re-synced: its snapshot says both claims are still reconnecting.
    standby.timeline.replace(active.sent.map((f) => structuredClone(f)));
    expect(standby.timeline.entries()[0]?.clients?.reconnecting).toBe(2);
    claims.onEnded(someClaim(), 'expired');
    active.timeline.flush();
    for (const f of active.sent.slice(1)) standby.timeline.add(f);
    expect(standby.timeline.entries()).toHaveLength(1);
    expect(standby.timeline.entries()[0]?.clients).toMatchObject({ expired: 1, reconnecting: 1 });
    // Unchanged figures are not sent again.
    const sentBefore = active.sent.length;
    active.timeline.flush();
    expect(active.sent).toHaveLength(sentBefore);
  });

  it('stops watching re-sent keyed requests after the watch, and ends an entry early when the node loses the role', () => {
    const n = node();
    const quiet = new TransitionClaims(n.now, n.now());
    const watched = n.timeline.recordTransition(
      { at: 7, from: 'a', to: 'b', gapMs: 1, cause: 'crash' },
      { claims: quiet, keyedHolders: 0, lost: 0, keyedWaiters: new Map([['never', 1]]) },
    );
    n.advance(KEYED_WATCH_MS);
    n.timeline.flush();
    expect(watched.clients).toMatchObject({ requeued: 1, regranted: 0 });
    expect(watched.clients?.finishedAt).not.toBeNull();

    const pending = new TransitionClaims(n.now, n.now());
    pending.carried = 1;
    const open = n.timeline.recordTransition(
      { at: 8, from: 'a', to: 'b', gapMs: 1, cause: 'api-handoff' },
      { claims: pending, keyedHolders: 0, lost: 0, keyedWaiters: new Map() },
    );
    const sentBefore = n.sent.length;
    n.timeline.closeLive();
    expect(open.clients).toMatchObject({ reconnecting: 1 });
    expect(open.clients?.finishedAt).not.toBeNull();
    expect(n.sent.length).toBe(sentBefore + 1);
  });
});
