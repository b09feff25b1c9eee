// A real daemon per test, on 127.0.0.1 with every port 0, no data dir and no drain, torn down
// after the test with whatever else the test registered (latest first): the set-up the daemon
// tests over real sockets share.
import { afterEach } from 'vitest';
import { type Daemon, startDaemon } from '../daemon/daemon.ts';
import { LineClient } from './line-client.ts';

export interface DaemonKit {
  /** Runs `fn` after the current test, the latest registered first. */
  defer(fn: () => unknown): void;
  /** A daemon for this test (stopped after it). */
  daemon(): Promise<Daemon>;
  /** A line client on `port` (closed after the test). */
  client(port: number): Promise<LineClient>;
}

/** Call once at the top of a test file: it registers the file's afterEach teardown. */
export function daemonKit(): DaemonKit {
  const steps: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of steps.splice(0).reverse()) await step();
  });
  const defer = (fn: () => unknown) => {
    steps.push(fn);
  };
  return {
    defer,
    async daemon() {
      const d = await startDaemon({ host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir: null, drainMs: 0 });
      defer(() => d.shutdown());
      return d;
    },
    async client(port) {
      const c = await LineClient.open(port);
      defer(() => c.close());
      return c;
    },
  };
}
