// The coordination lines as React renders them (to static markup: the page's own hooks are not
// involved), from a CoordinationView fixture: what an operator reads in the Cluster card.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { coordinationModel } from '@/lib/dashboard/coordination-model.ts';
import type { CoordinationView } from '@/lib/ops-api/api-types.ts';
import { coordinationView } from '@/lib/ops-api/testing/coordination-fixture.ts';
import { CoordinationDetails } from './coordination-panel.tsx';

function html(coordination: CoordinationView | undefined, elapsedMs = 0): string {
  const model = coordinationModel({ clustered: true, self: 'a', ...(coordination === undefined ? {} : { coordination }) }, elapsedMs);
  if (model === null) throw new Error('no model');
  return renderToStaticMarkup(createElement(CoordinationDetails, { model }));
}

/** The text of the element with `data-testid="id"` (tags dropped). */
function text(markup: string, id: string): string | undefined {
  const start = markup.indexOf(`data-testid="${id}"`);
  if (start < 0) return undefined;
  const open = markup.lastIndexOf('<', start);
  const tag = /^<(\w+)/.exec(markup.slice(open))?.[1] as string;
  let depth = 0;
  const re = new RegExp(`<(/?)${tag}\\b[^>]*>`, 'g');
  re.lastIndex = open;
  for (let m = re.exec(markup); m !== null; m = re.exec(markup)) {
    depth += m[1] === '/' ? -1 : 1;
    if (depth === 0)
      return markup
        .slice(open, m.index)
        .replace(/<[^>]*>/g, '')
        .replace(/&#x27;/g, "'");
  }
  return undefined;
}

describe('the Cluster card’s coordination lines', () => {
  it('in the default mode: one quiet "peers" line and nothing about etcd', () => {
    const markup = html(undefined);
    expect(text(markup, 'coordination-mode')).toBe('Coordination: peers');
    expect(markup).not.toContain('etcd');
  });

  it('on the etcd active: the mode, the grant time and TTL, the holder, the in-sync set, replies waiting, each endpoint', () => {
    const markup = html(coordinationView({ repliesWaiting: 4 }), 250);
    expect(text(markup, 'coordination-mode')).toBe('etcd (partition-safe)');
    expect(text(markup, 'coordination-grant-left')).toBe('1.0 s left');
    expect(text(markup, 'coordination-grant')).toContain('lease TTL 2.0 s');
    expect(text(markup, 'coordination-holder')).toBe('this node (a)');
    expect(text(markup, 'coordination-in-sync')).toBe('b');
    expect(text(markup, 'coordination-replies-waiting')).toBe('4');
    expect(markup.match(/data-testid="etcd-endpoint"/g)).toHaveLength(3);
    expect(text(markup, 'etcd-endpoints-summary')).toBe('3/3 healthy');
    expect(markup).not.toContain('coordination-blocked');
    expect(text(markup, 'coordination-last-error')).toBe('none');
  });

  it('on a blocked active: the reason in the grant row, and the failing endpoints with their errors', () => {
    const blocked = 'etcd quorum lost: no keep-alive answered for 1.9 s';
    const markup = html(
      coordinationView({
        blocked,
        lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: 0 },
        endpoints: [
          { endpoint: 'http://e0', healthy: false, lastError: 'answers, but has no raft leader (quorum lost?)', checkedAgoMs: 300 },
          { endpoint: 'http://e1', healthy: false, lastError: '14 UNAVAILABLE: No connection established', checkedAgoMs: 300 },
        ],
      }),
    );
    expect(text(markup, 'coordination-blocked')).toBe(`Cannot grant: ${blocked}`);
    expect(text(markup, 'coordination-grant-left')).toBeUndefined();
    expect(text(markup, 'etcd-endpoints-summary')).toBe('0/2 healthy');
    expect(markup).toContain('data-healthy="false"');
    expect(markup).toContain('14 UNAVAILABLE: No connection established');
    expect(markup).toContain('answers, but has no raft leader (quorum lost?)');
  });

  it('on a standby that may not campaign: the holder and that it grants nothing', () => {
    const markup = html(coordinationView({ holding: false, holder: 'b', electable: false, lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: null } }));
    expect(text(markup, 'coordination-holder')).toBe('b');
    expect(text(markup, 'coordination-grant-left')).toBe('not the holder: grants nothing');
    expect(text(markup, 'coordination-in-sync')).toBe('b · this node may not campaign');
    expect(text(markup, 'coordination-quiet')).toBe('none');
  });

  it("after a clean stop: the quiet period's row says who stopped and how long nobody takes the role", () => {
    const markup = html(coordinationView({ holding: false, holder: null, inSync: null, quiet: { by: 'a', remainingMs: 30_000 } }), 5_000);
    expect(text(markup, 'coordination-quiet')).toBe('a stopped cleanly: nobody takes the role for 25.0 s (its longest lease)');
    expect(text(markup, 'coordination-holder')).toBe('nobody');
  });
});
