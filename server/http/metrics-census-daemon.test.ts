// The claim census on a real daemon with a table bigger than one slice (claim-census.ts): the
// first scrape waits for a sliced walk and is exact; later scrapes serve the last complete walk,
// and the background walk (every CENSUS_REFRESH_MS while scraped) catches up with a release and
// a waiter.
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../daemon/daemon.ts';
import { waitFor } from '../testing/cluster-harness.ts';
import { LineClient } from '../testing/line-client.ts';
import { CENSUS_REFRESH_MS, CENSUS_SLICE } from './claim-census.ts';
import { sample } from '../testing/metrics-text.ts';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

describe('the claim census of a big table on a real daemon', () => {
  it('is exact at the first scrape and catches up with changes within the refresh', async () => {
    const d = await startDaemon({ host: '127.0.0.1', lockPort: 0, sessionPort: 0, httpPort: 0, dataDir: null, drainMs: 0 });
    teardown.push(() => d.shutdown());
    const holder = await LineClient.open(d.lockAddress.port);
    teardown.push(() => holder.close());
    const waiter = await LineClient.open(d.lockAddress.port);
    teardown.push(() => waiter.close());
    const count = CENSUS_SLICE + 904;
    holder.send(...Array.from({ length: count }, (_, i) => `A big${i} 60 0`));
    const replies = await holder.take(count, 10_000);
    const scrape = async () => (await fetch(`http://127.0.0.1:${d.httpAddress.port}/metrics`)).text();

    const first = await scrape();
    expect(sample(first, 'baton_locks_held{protocol="keyed"}')).toBe(count);
    expect(sample(first, 'baton_waiters{protocol="keyed"}')).toBe(0);

    const token = (replies[0] as string).split(' ')[2] as string;
    holder.send(`R big0 ${token}`);
    expect(await holder.next()).toBe('R big0 OK');
    waiter.send('A big1 60 0');
    await waitFor(
      async () => {
        const text = await scrape();
        return (
          sample(text, 'baton_locks_held{protocol="keyed"}') === count - 1 &&
          sample(text, 'baton_waiters{protocol="keyed"}') === 1 &&
          sample(text, 'baton_sessions{protocol="keyed"}') === count
        );
      },
      { what: 'the census to count the release and the waiter', timeoutMs: CENSUS_REFRESH_MS * 3, intervalMs: 250 },
    );
  }, 30_000);
});
