import { describe, expect, it } from 'vitest';
import { type ReconfirmInput, type ReconfirmPeer, reconfirmVerdict } from './grant-reconfirm.ts';

const SINCE = 10_000;
const HEARTBEAT = 200;
const base = (peers: ReconfirmPeer[], now = SINCE + 450): ReconfirmInput => ({
  selfId: 'a',
  since: SINCE,
  now,
  heartbeatMs: HEARTBEAT,
  peerTimeoutMs: 1_000,
  peers,
});
const follower = (statusAt: number | null, active: string | null = 'a', alive = true): ReconfirmPeer => ({
  alive,
  status: { phase: 'standby', active },
  statusAt,
});

describe('reconfirmVerdict: when a lapsed active may grant again', () => {
  it('opens once every live peer follows this node in a status received a heartbeat after the lapse', () => {
    expect(reconfirmVerdict(base([follower(SINCE + HEARTBEAT), follower(SINCE + 300)]))).toEqual({ kind: 'open' });
  });

  it('waits while one status is older than since + heartbeat (it may predate the peer reading our post-lapse heartbeat)', () => {
    expect(reconfirmVerdict(base([follower(SINCE + 300), follower(SINCE + HEARTBEAT - 1)]))).toEqual({ kind: 'wait' });
    expect(reconfirmVerdict(base([follower(SINCE + 300), follower(null)]))).toEqual({ kind: 'wait' });
  });

  it('waits while a live peer follows nobody or another node (it may be about to promote)', () => {
    expect(reconfirmVerdict(base([follower(SINCE + 300, null)]))).toEqual({ kind: 'wait' });
    expect(reconfirmVerdict(base([follower(SINCE + 300, 'b'), follower(SINCE + 300)]))).toEqual({ kind: 'wait' });
  });

  it('waits for a live peer of which no status came at all', () => {
    expect(reconfirmVerdict(base([{ alive: true, status: null, statusAt: null }]))).toEqual({ kind: 'wait' });
  });

  it('steps out at once when a live peer is active or promoting, even if others confirmed', () => {
    for (const phase of ['active', 'handing-off', 'promoting'] as const) {
      const rival: ReconfirmPeer = { alive: true, status: { phase, active: null }, statusAt: SINCE + 300 };
      expect(reconfirmVerdict(base([follower(SINCE + 300), rival]))).toEqual({ kind: 'step-out', why: 'rival' });
    }
  });

  it('ignores dead peers, whatever they last said (a lone active keeps serving)', () => {
    const deadRival: ReconfirmPeer = { alive: false, status: { phase: 'active', active: null }, statusAt: SINCE + 300 };
    expect(reconfirmVerdict(base([follower(SINCE + 300), deadRival]))).toEqual({ kind: 'open' });
    expect(reconfirmVerdict(base([follower(SINCE - 5_000, null, false)]))).toEqual({ kind: 'open' });
    expect(reconfirmVerdict(base([]))).toEqual({ kind: 'open' });
  });

  it('steps out when the confirmation has not come within a peer timeout, and only then', () => {
    const slow = [follower(SINCE + 300), follower(SINCE - 1)];
    expect(reconfirmVerdict(base(slow, SINCE + 1_000))).toEqual({ kind: 'wait' });
    expect(reconfirmVerdict(base(slow, SINCE + 1_001))).toEqual({ kind: 'step-out', why: 'unconfirmed' });
    // A late but complete confirmation still opens: the peers' statuses say nobody promoted.
    expect(reconfirmVerdict(base([follower(SINCE + 300)], SINCE + 5_000))).toEqual({ kind: 'open' });
  });
});
