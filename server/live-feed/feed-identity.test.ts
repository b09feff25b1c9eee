import { describe, expect, it } from 'vitest';
import type { EnqueueEvent, GrantEvent } from '../../lib/engine/events.ts';
import { eventText } from './feed-ring.ts';

const grant: GrantEvent = {
  type: 'grant',
  at: 0,
  lock: 'jobs',
  claimId: 1,
  token: 42n,
  protocol: 'keyed',
  client: '127.0.0.1:5312',
  clientName: 'worker-7@host-3 pid 4121',
  leaseMs: 5_000,
  sliding: false,
  waitedMs: 0,
  handoverMs: null,
  handoverCause: null,
};
const enqueue: EnqueueEvent = {
  type: 'enqueue',
  at: 0,
  lock: 'jobs',
  claimId: 2,
  protocol: 'session',
  client: '127.0.0.1:6000',
  clientName: 'job runner 2',
  position: 1,
  waitDeadline: null,
};

describe('the feed names the client', () => {
  it('by its identity first, then its address and protocol', () => {
    expect(eventText(grant)).toBe('granted to worker-7@host-3 pid 4121 (127.0.0.1:5312, keyed) token 42');
    expect(eventText(enqueue)).toBe('job runner 2 (127.0.0.1:6000, session) queued at position 1');
  });

  it('by its address alone when it gave no identity, as before', () => {
    expect(eventText({ ...grant, clientName: null })).toBe('granted to 127.0.0.1:5312 (keyed) token 42');
    expect(eventText({ ...enqueue, clientName: null })).toBe('127.0.0.1:6000 (session) queued at position 1');
  });
});
