// Grants on a node's keyed port as fast as one pipelined connection allows, for the tests that
// need many tokens (a partition that outlasts a token block): `count` grants of fresh locks in
// windows of WINDOW, each window released before the next, so the table stays small. Resolves
// with every token granted, in order; rejects on any reply that is not a grant or a release.
import { connect } from 'node:net';

const WINDOW = 2_000;

export function churnTokens(port: number, count: number, prefix: string): Promise<bigint[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const tokens: bigint[] = [];
    let window: { names: string[]; tokens: bigint[] } = { names: [], tokens: [] };
    let releasing = 0;
    let next = 0;
    let buffered = '';
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const acquireWindow = () => {
      if (next >= count) {
        socket.end();
        resolve(tokens);
        return;
      }
      const n = Math.min(WINDOW, count - next);
      window = { names: Array.from({ length: n }, (_, i) => `${prefix}/${next + i}`), tokens: [] };
      next += n;
      socket.write(window.names.map((name) => `A ${name} 60 0\n`).join(''));
    };
    const onLine = (line: string) => {
      const parts = line.split(' ');
      if (parts[0] === 'A' && releasing === 0 && /^\d+$/.test(parts[2] ?? '')) {
        const token = BigInt(parts[2] as string);
        window.tokens.push(token);
        tokens.push(token);
        if (window.tokens.length === window.names.length) {
          releasing = window.names.length;
          socket.write(window.names.map((name, i) => `R ${name} ${window.tokens[i]}\n`).join(''));
        }
        return;
      }
      if (parts[0] === 'R' && parts[2] === 'OK' && releasing > 0) {
        releasing--;
        if (releasing === 0) acquireWindow();
        return;
      }
      fail(new Error(`unexpected reply on ${port}: ${line}`));
    };
    socket.setEncoding('latin1');
    socket.on('connect', acquireWindow);
    socket.on('data', (text: string) => {
      buffered += text;
      let start = 0;
      let nl = buffered.indexOf('\n', start);
      while (nl >= 0) {
        onLine(buffered.slice(start, nl));
        start = nl + 1;
        nl = buffered.indexOf('\n', start);
      }
      buffered = buffered.slice(start);
    });
    socket.on('error', fail);
    socket.on('close', () => {
      if (next < count || releasing > 0) reject(new Error(`connection to ${port} closed after ${tokens.length} of ${count} grants`));
    });
  });
}
