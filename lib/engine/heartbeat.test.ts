// engine.heartbeat: the answer to a session's heartbeat line must not confirm a lease that has
// already lapsed, even when the timer that would end it has not fired. Each case moves the
// FakeClock by hand and never calls advance() itself, so only heartbeat() can end a claim here.
import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

describe('heartbeat', () => {
  it('leaves a live holder holding and tells its owner nothing', () => {
    const { clock, engine, sliding } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    clock.advance(499);
    expect(engine.heartbeat(holder)).toBe('holding');
    expect(owner.ended).toEqual([]);
    expect(engine.lock('a')?.holder).toBe(holder);
  });

  it('ends a holder whose lease lapsed before the timer fired, and hands the lock on', () => {
    const { clock, engine, sliding } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    const nextOwner = new Owner();
    const next = sliding('a', nextOwner, 10_000);
    clock.advance(600);
    expect(engine.heartbeat(holder)).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'expired' }]);
    expect(next.state).toBe('holding');
    expect(nextOwner.granted).toEqual([next]);
  });

  it('counts the lease as over at its very end (expiresAt itself)', () => {
    const { clock, engine, sliding } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    clock.advance(500);
    expect(engine.heartbeat(holder)).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'expired' }]);
  });

  it('keeps a holder whose lease a touch restarted in time', () => {
    const { clock, engine, sliding } = engineFixture();
    const holder = sliding('a', new Owner(), 500);
    clock.advance(400);
    engine.touch(holder);
    clock.advance(400);
    expect(engine.heartbeat(holder)).toBe('holding');
  });

  it('ends a lapsed lease even when a touch came first (the session touches on any input, then reads the line)', () => {
    const { clock, engine, sliding } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    clock.advance(501);
    engine.touch(holder);
    expect(engine.heartbeat(holder)).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'expired' }]);
  });

  it('answers a live waiter with its queue state', () => {
    const { clock, engine, sliding } = engineFixture();
    sliding('a', new Owner(), 10_000);
    const waiter = sliding('a', new Owner(), 500);
    clock.advance(300);
    expect(engine.heartbeat(waiter)).toBe('waiting');
    expect(engine.waiterCount).toBe(1);
  });

  it('takes a waiter whose sliding lease lapsed out of the queue', () => {
    const { clock, engine, sliding } = engineFixture();
    const holder = sliding('a', new Owner(), 10_000);
    const owner = new Owner();
    const waiter = sliding('a', owner, 500);
    clock.advance(500);
    expect(engine.heartbeat(waiter)).toBe('ended');
    expect(owner.ended).toEqual([{ id: waiter.id, reason: 'expired' }]);
    expect(engine.waiterCount).toBe(0);
    expect(engine.lock('a')?.holder).toBe(holder);
  });

  it('does nothing for a claim that has already ended', () => {
    const { clock, engine, sliding } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    engine.end(holder);
    clock.advance(1_000);
    expect(engine.heartbeat(holder)).toBe('ended');
    expect(owner.ended).toEqual([]);
    expect(engine.lockCount).toBe(0);
  });

  it("runs deadlines only for a lapsed lease of its own: another claim's end is left to the timer", () => {
    const { clock, engine, sliding } = engineFixture();
    const other = sliding('b', new Owner(), 100);
    const holder = sliding('a', new Owner(), 10_000);
    clock.advance(200);
    expect(engine.heartbeat(holder)).toBe('holding');
    expect(other.state).toBe('holding');
    engine.advance();
    expect(other.state).toBe('ended');
  });
});
