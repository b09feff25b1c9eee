import { describe, expect, it } from 'vitest';
import { type LossAnnounceInput, lossToAnnounce } from './loss-announce-rule.ts';

const input = (over: Partial<LossAnnounceInput> = {}): LossAnnounceInput => ({ following: 'a', followingAlive: false, announcedFor: null, ...over });

describe('lossToAnnounce', () => {
  it('a standby whose active went silent announces it at once', () => {
    expect(lossToAnnounce(input())).toBe('a');
  });

  it('announces a silent active once, and a newly followed one that goes silent again', () => {
    expect(lossToAnnounce(input({ announcedFor: 'a' }))).toBeNull();
    expect(lossToAnnounce(input({ following: 'b', announcedFor: 'a' }))).toBe('b');
  });

  it('says nothing while it hears its active, or when it follows none', () => {
    expect(lossToAnnounce(input({ followingAlive: true }))).toBeNull();
    expect(lossToAnnounce(input({ following: null }))).toBeNull();
    expect(lossToAnnounce(input({ following: null, announcedFor: 'a' }))).toBeNull();
  });
});
