// A raw keyed-protocol load generator: `clients` connections, each on its own key, each doing
// acquire+release pairs, `depth` pairs in flight (pipelined) at a time, for `durationMs`.
import { connect } from 'node:net';

export interface LoadResult {
  pairs: number;
  elapsedMs: number;
}

export async function rawKeyedLoad(port: number, clients: number, depth: number, durationMs: number): Promise<LoadResult> {
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
          const sendAcquires = () => {
            if (performance.now() >= deadline) {
              socket.end();
              return;
            }
            let out = '';
            for (const k of keys) out += `A ${k} 30 0\n`;
            outstanding = depth;
            socket.write(out);
          };
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
