import { describe, expect, it } from 'vitest';
import { type CampaignInput, mayCampaign } from './etcd-campaign-rule.ts';

const SYNCED: CampaignInput = {
  phase: 'standby',
  instance: 'me',
  syncedWith: 'old-active',
  lastActiveInstance: 'old-active',
  stopped: false,
  leaving: false,
  partial: false,
  discovered: true,
};
const FRESH: CampaignInput = { ...SYNCED, phase: 'discovering', syncedWith: null, lastActiveInstance: null };
const STORED = new Set(['b']);

describe('mayCampaign (the etcd mode)', () => {
  it('a standby synced with the active it followed may campaign (the stored set decides the rest)', () => {
    expect(mayCampaign(SYNCED, STORED)).toBe(true);
    expect(mayCampaign(SYNCED, undefined)).toBe(true);
  });

  it('an active that stepped out keeps its own whole table', () => {
    expect(mayCampaign({ ...SYNCED, phase: 'discovering', syncedWith: 'me', lastActiveInstance: 'me' }, STORED)).toBe(true);
  });

  it('a node with no table campaigns only in a new cluster (no set ever stored), after its start-up wait', () => {
    expect(mayCampaign(FRESH, null)).toBe(true);
    expect(mayCampaign(FRESH, undefined)).toBe(true);
    expect(mayCampaign(FRESH, STORED)).toBe(false);
    expect(mayCampaign(FRESH, new Set())).toBe(false);
    expect(mayCampaign({ ...FRESH, discovered: false }, null)).toBe(false);
  });

  it('a standby re-syncing keeps its whole table until the new snapshot begins, and may campaign meanwhile', () => {
    // Its active died or was restarted empty after it asked for the snapshot: nobody else may be electable.
    expect(mayCampaign({ ...SYNCED, phase: 'syncing' }, STORED)).toBe(true);
  });

  it('never while syncing, holding part of a table, leaving or stopped', () => {
    expect(mayCampaign({ ...SYNCED, phase: 'syncing', syncedWith: null }, null)).toBe(false);
    // A join cut short: it followed an active and never finished its snapshot.
    expect(mayCampaign({ ...FRESH, lastActiveInstance: 'old-active' }, null)).toBe(false);
    expect(mayCampaign({ ...SYNCED, partial: true }, null)).toBe(false);
    expect(mayCampaign({ ...SYNCED, leaving: true }, null)).toBe(false);
    expect(mayCampaign({ ...SYNCED, stopped: true }, null)).toBe(false);
  });
});
