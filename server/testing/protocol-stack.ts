// One protocol server for integration tests, built the way the daemon builds it: a lock engine
// on the real clock with in-memory tokens, the driver that runs its deadlines, and a line
// listener on 127.0.0.1 at a free port. Smaller than a daemon, so a test can set the listener's
// limits and reach the engine and the listener directly.
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { EngineDriver } from '../daemon/engine-driver.ts';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import type { ConnectionContext, LineConnection } from '../lines/line-connection.ts';
import { LineListener } from '../lines/line-listener.ts';
import type { LineTransport } from '../lines/line-transport.ts';
import { performanceClock } from '../daemon/performance-clock.ts';
import type { Clock } from '../../lib/engine/clock.ts';

export interface ProtocolStackOptions {
  /** 5,000 ms if not given. */
  ioTimeoutMs?: number;
  /** 100 if not given. */
  maxConnections?: number;
  /** The real monotonic clock if not given; a FakeClock lets a test stand between a deadline and its timer. */
  clock?: Clock;
  /** The listener's hold bound (routing.ts); 5,000 ms if not given. */
  holdMaxMs?: number;
}

export interface ProtocolStack<C extends LineConnection> {
  engine: LockEngine;
  driver: EngineDriver;
  listener: LineListener<C>;
  port: number;
  /** Drops every connection, stops listening and stops the driver; for the test's teardown. */
  stop(): Promise<void>;
}

export async function startProtocolStack<C extends LineConnection>(
  create: (transport: LineTransport, ctx: ConnectionContext, engine: LockEngine) => C,
  /** The protocol's line for a connection over the limit. */
  refusal: string,
  opts: ProtocolStackOptions = {},
): Promise<ProtocolStack<C>> {
  const clock = opts.clock ?? performanceClock;
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  const driver = new EngineDriver(engine, clock);
  const listener = new LineListener(
    {
      host: '127.0.0.1',
      port: 0,
      maxConnections: opts.maxConnections ?? 100,
      ioTimeoutMs: opts.ioTimeoutMs ?? 5_000,
      clock,
      flusher: new FlushScheduler(),
      afterInput: () => driver.poke(),
      holdMaxMs: opts.holdMaxMs,
    },
    (transport, ctx) => create(transport, ctx, engine),
    refusal,
  );
  const { port } = await listener.listen();
  const stop = async (): Promise<void> => {
    listener.destroyAll();
    await listener.stopAccepting();
    driver.stop();
  };
  return { engine, driver, listener, port, stop };
}
