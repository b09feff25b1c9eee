// The floor: the least a Node server can do and still be a lock service to Baton's own clients,
// so `npm run bench` can say how much of Baton's CPU per pair is Baton and how much is just Node
// reading and writing lines. No queues, no leases, no timers, no durability, no limits, no
// validation: a Map of held keys per protocol and a counter for tokens. Run as its own process
// (`node --import tsx bench/servers/floor-line-server.ts`); it prints
// `keyed=<port> session=<port>` on stdout once both listen on 127.0.0.1.
//
// The sockets read latin1 so a chunk never splits a character (one byte, one char), and write
// latin1 so a key's bytes go back exactly as they came (UTF-8 keys included).
import { createServer, type Socket } from 'node:net';
import { answerLines, floorKeyedAnswer, floorTokens } from './floor-answers.ts';

const answerKeyed = floorKeyedAnswer();

/**
 * Answers every complete line of a chunk (without `\n` or `\r\n`) with `answer`'s text, and
 * writes all of a chunk's answers in one write, as Baton batches its replies per turn.
 */
function serveLines(socket: Socket, answer: (line: string) => string): void {
  socket.setEncoding('latin1');
  let inbox = '';
  socket.on('data', (chunk: string) => {
    const text = inbox + chunk;
    const out = answerLines(text, answer);
    inbox = text.slice(text.lastIndexOf('\n') + 1);
    if (out !== '') socket.write(out, 'latin1');
  });
  // A reset, or the peer gone without reading: nothing to tell anyone, and no stack on stderr.
  socket.on('error', () => socket.destroy());
}

// Keyed: the answers are floor-answers.ts's (bench/floor-budget.ts times the same function
// without sockets), all replies to one chunk in one write.
const keyed = createServer({ noDelay: true }, (socket) => serveLines(socket, answerKeyed));

// Session: an optional `CLIENT <identity>` (no answer), then `ACQUIRE <name> <lease_ms> [<claim key>]` → `ACQUIRED <token>`; each `HEARTBEAT` →
// the same `ACQUIRED <token>` (Baton's answer while holding: SessionClient gives the lease up
// when heartbeats go unanswered, though a benchmark pair ends long before its first heartbeat).
// The name is forgotten at the client's FIN (`end`: before our own FIN goes out, so the client's
// next ACQUIRE of it, sent once its close() resolves, finds it free) or at a reset (`close`);
// Node's default allowHalfOpen: false then closes our side. A held name is not queued for:
// `ERROR 0x02` (SessionClient fails that open). The uncontended pairs never meet one.
const heldNames = new Map<string, Socket>();
const session = createServer({ noDelay: true }, (socket) => {
  let name: string | undefined;
  let granted = '';
  const forget = () => {
    if (name !== undefined && heldNames.get(name) === socket) heldNames.delete(name);
  };
  socket.once('end', forget);
  socket.once('close', forget);
  serveLines(socket, (line) => {
    if (name !== undefined) return granted; // a HEARTBEAT (the floor reads nothing else after ACQUIRE)
    if (line.startsWith('CLIENT ')) return ''; // the client's identity, before its ACQUIRE: no answer
    if (!line.startsWith('ACQUIRE ')) return 'ERROR 0x02 protocol error: the first line must be ACQUIRE\n';
    const wanted = line.slice(8, line.indexOf(' ', 8));
    if (heldNames.has(wanted)) return `ERROR 0x02 the floor does not queue: ${wanted} is held\n`;
    name = wanted;
    heldNames.set(name, socket);
    granted = `ACQUIRED ${floorTokens.next()}\n`;
    return granted;
  });
});

keyed.listen(0, '127.0.0.1', () => {
  session.listen(0, '127.0.0.1', () => {
    process.stdout.write(`keyed=${portOf(keyed.address())} session=${portOf(session.address())}\n`);
  });
});

function portOf(address: ReturnType<typeof keyed.address>): number {
  if (address === null || typeof address === 'string') throw new Error(`not a TCP address: ${address}`);
  return address.port;
}
