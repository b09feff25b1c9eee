// A heartbeat that arrives after a full lease of silence, before the server's timer has
// fired: the server must not confirm ownership it has already lost (a late ACQUIRED would let
// the client believe it still holds the lock). A fake clock stands between deadline and timer.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../lib/engine/clock.ts';
import { SESSION_REFUSAL, SessionConnection } from './session-connection.ts';
import { LineClient } from '../testing/line-client.ts';
import { startProtocolStack } from '../testing/protocol-stack.ts';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

describe('session server and a lapsed lease', () => {
  it('ends a session whose heartbeat came after its lease ran out, and hands the lock on', async () => {
    const clock = new FakeClock(1_000);
    const stack = await startProtocolStack((transport, ctx, engine) => new SessionConnection(transport, ctx, engine), SESSION_REFUSAL, { clock });
    teardown.push(stack.stop);
    const a = await LineClient.open(stack.port);
    const b = await LineClient.open(stack.port);
    teardown.push(
      () => a.close(),
      () => b.close(),
    );
    a.send('ACQUIRE lapse 1000');
    expect(await a.next()).toMatch(/^ACQUIRED \d+$/);
    b.send('ACQUIRE lapse 1000');
    expect(await b.next()).toBe('WAITING 1');
    b.send('HEARTBEAT');
    expect(await b.next()).toBe('WAITING 1');
    // More than a full lease of silence from a, while b heartbeats. No timer has run: the clock is fake.
    clock.advance(600);
    b.send('HEARTBEAT');
    expect(await b.next()).toBe('WAITING 1');
    clock.advance(600);
    a.send('HEARTBEAT');
    expect(await a.next()).toMatch(/^ERROR 0x03 /);
    expect(await b.next()).toMatch(/^ACQUIRED \d+$/);
  });
});
