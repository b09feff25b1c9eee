// A raw keyed-protocol load generator: `clients` connections, each on its own keys, each doing
// acquire+release pairs, `depth` pairs in flight (pipelined) at a time, for `durationMs`.
// Closed loop by default: a client sends its next batch of `depth` acquires as soon as its
// previous batch's last release is answered. With `periodMs` > 0 the load is paced, so two
// servers can be compared at the same offered rate (bench/etcd-turns.ts): each client sends a
// batch at the earliest every `periodMs` on a grid of its own (the clients' grids staggered over
// one period), which offers at most clients x depth x 1000 / periodMs pairs/s; a client more than
// a period behind sends as soon as its batch is done and does not catch up the batches it missed.
import { connect } from 'node:net';

export interface LoadResult {
  pairs: number;
  elapsedMs: number;
}

export async function rawKeyedLoad(port: number, clients: number, depth: number, durationMs: number, periodMs = 0): Promise<LoadResult> {
  if (!(Number.isFinite(periodMs) && periodMs >= 0)) throw new Error(`rawKeyedLoad: periodMs must be 0 or more, not ${periodMs}`);
  let pairs = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from(
      { length: clients },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port });
          socket.setNoDelay(true);
          const keys = Array.from({ length: depth }, (_, d) => `bench/${i}/${d}`);
          let buffered = '';
          let outstanding = 0;
          const sendBatch = () => {
            if (performance.now() >= deadline) {
              socket.end();
              return;
            }
            let out = '';
            for (const k of keys) out += `A ${k} 30 0\n`;
            outstanding = depth;
            socket.write(out);
          };
          // Paced only: wait for this client's next slot on its grid, then send (the deadline is
          // checked after the wait). The closed loop calls sendBatch itself: no clock read or
          // timer more than before the period existed.
          let next = start + (i / clients) * periodMs;
          const sendPaced = () => {
            const now = performance.now();
            if (now < next) {
              setTimeout(sendPaced, next - now);
              return;
            }
            next = Math.max(next + periodMs, now);
            sendBatch();
          };
          const sendAcquires = periodMs > 0 ? sendPaced : sendBatch;
          socket.on('connect', sendAcquires);
          socket.setEncoding('latin1');
          socket.on('data', (text: string) => {
            buffered += text;
            let nl = buffered.indexOf('\n');
            let releases = '';
            while (nl >= 0) {
              const line = buffered.slice(0, nl);
              buffered = buffered.slice(nl + 1);
              if (line.charCodeAt(0) === 65) {
                const sp = line.lastIndexOf(' ');
                releases += `R ${line.slice(2, sp)} ${line.slice(sp + 1)}\n`;
              } else if (line.charCodeAt(0) === 82) {
                pairs++;
                if (--outstanding === 0) sendAcquires();
              } else {
                reject(new Error(`unexpected reply ${line}`));
              }
              nl = buffered.indexOf('\n');
            }
            if (releases) socket.write(releases);
          });
          socket.on('error', reject);
          socket.on('close', () => resolve());
        }),
    ),
  );
  return { pairs, elapsedMs: performance.now() - start };
}
