// A child process of the 10,000-session section: opens `count` session connections, each holding
// its own lock with a `leaseMs` lease, and heartbeats each every lease/4 (the docs' schedule
// without the RTT term), spread evenly over 10 ms ticks rather than in one burst. Each socket
// keeps a reader. Prints {"ready":n,"refused":m} once every session is held or was refused, and its counts when told "stop" on stdin.
// With a fourth argument `resumable`, each ACQUIRE carries a random claim key (the resumable
// sessions of docs/protocol.md), as SessionClient sends by default.
// Usage: node --import tsx bench/session-holders.ts <sessionPort> <count> <leaseMs> [resumable]
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const [port, count, leaseMs] = process.argv.slice(2, 5).map(Number) as [number, number, number];
const resumable = process.argv[5] === 'resumable';
const sockets: Socket[] = [];
/** Open sockets: a session the server refused (too many connections) gets no heartbeats. */
const live = new Set<Socket>();
let acquired = 0;
let heartbeatReplies = 0;
let errors = 0;
/** ERROR lines by their first word after ERROR (the code: 0x03 is a lease that expired), for the counts. */
const errorCodes: Record<string, number> = {};
let closedEarly = 0;
let stopping = false;

function open(i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.write(resumable ? `ACQUIRE holders/${i} ${leaseMs} ${randomBytes(16).toString('hex')}\n` : `ACQUIRE holders/${i} ${leaseMs}\n`);
      // Heartbeats only after the ACQUIRE: a HEARTBEAT first is a protocol error (ERROR 0x02),
      // which earlier runs counted as refused sessions.
      live.add(s);
      sockets.push(s);
      resolve();
    });
    s.setNoDelay(true);
    s.setEncoding('latin1');
    s.once('error', (e) => (sockets.length < count ? reject(e) : errors++));
    let granted = false;
    s.on('data', (text: string) => {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        if (line.startsWith('ACQUIRED')) {
          if (granted) heartbeatReplies++;
          else {
            granted = true;
            acquired++;
          }
        } else if (line.startsWith('ERROR')) {
          errors++;
          const code = `ERROR ${line.split(' ')[1] ?? '?'}`;
          errorCodes[code] = (errorCodes[code] ?? 0) + 1;
        }
      }
    });
    s.on('close', () => {
      if (!stopping) closedEarly++;
      live.delete(s);
    });
  });
}

// Heartbeats start with the first session: opening them all takes longer than a lease.
const TICK_MS = 10;
const perTick = Math.ceil(count / (leaseMs / 4 / TICK_MS));
let cursor = 0;
const timer = setInterval(() => {
  for (let n = 0; n < perTick; n++) {
    const s = sockets[cursor];
    if (s !== undefined && live.has(s)) s.write('HEARTBEAT\n');
    cursor = (cursor + 1) % Math.max(1, sockets.length);
  }
}, TICK_MS);
for (let i = 0; i < count; i += 200) {
  await Promise.all(Array.from({ length: Math.min(200, count - i) }, (_, j) => open(i + j)));
}

// Every session answered: granted, or refused and closed (the daemon caps connections to fit
// its open-file limit, see the section's notes).
while (acquired + closedEarly < count) await new Promise((r) => setTimeout(r, 20));
process.stdout.write(`${JSON.stringify({ ready: acquired, refused: closedEarly })}\n`);

process.stdin.setEncoding('utf8');
process.stdin.on('data', (text: string) => {
  // "count": how many heartbeats the server has answered so far (the section measures the rate).
  if (text.includes('count')) process.stdout.write(`${JSON.stringify({ heartbeatReplies })}\n`);
  if (!text.includes('stop')) return;
  stopping = true;
  clearInterval(timer);
  process.stdout.write(`${JSON.stringify({ acquired, heartbeatReplies, errors, closedEarly, ...errorCodes })}\n`);
  for (const s of sockets) s.destroy();
  process.exit(0);
});
