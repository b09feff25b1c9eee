// Acquire+release pairs/s through one TypeScript client process, for `npm run bench:clients`.
// Usage: node --import tsx bench/clients/ts-pairs.ts <host:port> <seconds> <in-flight>
// Prints one JSON line: {"pairs": N, "seconds": S}. `in-flight` loops share one KeyedClient,
// each taking and releasing its own key.
import { KeyedClient } from '../../lib/client/index.ts';

const [address = '', secondsText = '5', inFlightText = '1'] = process.argv.slice(2);
const seconds = Number(secondsText);
const inFlight = Number(inFlightText);
const client = new KeyedClient({ addresses: [address], clientName: null });
const pair = async (key: string) => {
  const grant = await client.acquire(key, { lease: 30_000 });
  await grant.release();
};
const keys = Array.from({ length: inFlight }, (_, i) => `bench/ts/${process.pid}/${i}`);
// One warm-up pair per loop before the clock starts (connects, first grants).
await Promise.all(keys.map(pair));
let pairs = 0;
let stop = false;
const began = performance.now();
const loops = keys.map(async (key) => {
  while (!stop) {
    await pair(key);
    pairs++;
  }
});
setTimeout(() => {
  stop = true;
}, seconds * 1000);
await Promise.all(loops);
const elapsed = (performance.now() - began) / 1000;
await client.close();
process.stdout.write(`${JSON.stringify({ pairs, seconds: elapsed })}\n`);
