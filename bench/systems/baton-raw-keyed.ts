// Baton's keyed protocol through a minimal hand-written client: one connection per client
// (KeyedClient keeps two per address, and spreads requests over both), requests written once
// per tick, replies matched per (op, key) in order as docs/protocol.md says. It shows the
// server's cost with the same connection count and the same writes per batch as the Redis
// client, apart from the library's choice of two connections.
import { connect, type Socket } from 'node:net';
import { LEASE_MS, type LockClient, type LockSystem } from './lock-system.ts';

type Waiter = (reply: string) => void;

class RawKeyedConnection {
  private readonly socket: Socket;
  private readonly pending = new Map<string, Waiter[]>();
  private inbox = '';
  private outbox = '';
  readonly ready: Promise<void>;

  constructor(port: number) {
    this.socket = connect({ host: '127.0.0.1', port });
    this.socket.setNoDelay(true);
    this.socket.setEncoding('latin1');
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (text: string) => this.receive(text));
  }

  /** Sends `line` and resolves with the reply to it (matched on its op and key). */
  request(op: 'A' | 'R', key: string, line: string): Promise<string> {
    return new Promise((resolve) => {
      const slot = `${op} ${key}`;
      const queue = this.pending.get(slot);
      if (queue === undefined) this.pending.set(slot, [resolve]);
      else queue.push(resolve);
      if (this.outbox === '') setImmediate(this.flush);
      this.outbox += line;
    });
  }

  close(): void {
    this.socket.end();
  }

  private readonly flush = (): void => {
    const out = this.outbox;
    this.outbox = '';
    this.socket.write(out);
  };

  private receive(text: string): void {
    const all = this.inbox + text;
    let start = 0;
    for (let nl = all.indexOf('\n'); nl >= 0; nl = all.indexOf('\n', start)) {
      const line = all.slice(start, nl);
      start = nl + 1;
      // `A key token`, `R key OK|STALE`, `T key`, `E op key ...`: the slot is the op and the key.
      const parts = line.split(' ');
      const slot = parts[0] === 'E' ? `${parts[1]} ${parts[2]}` : parts[0] === 'T' ? `A ${parts[1]}` : `${parts[0]} ${parts[1]}`;
      const queue = this.pending.get(slot);
      const waiter = queue?.shift();
      if (queue !== undefined && queue.length === 0) this.pending.delete(slot);
      waiter?.(line);
    }
    this.inbox = all.slice(start);
  }
}

export function batonRawKeyed(lockPort: number, serverCpuMs: () => number): LockSystem {
  const leaseS = LEASE_MS / 1000;
  return {
    name: 'Baton keyed (minimal client, 1 connection)',
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const conn = new RawKeyedConnection(lockPort);
      await conn.ready;
      return {
        acquire: async (key) => {
          const reply = await conn.request('A', key, `A ${key} ${leaseS} 0\n`);
          if (!reply.startsWith('A ')) throw new Error(`acquire ${key}: ${reply}`);
          const token = reply.slice(reply.lastIndexOf(' ') + 1);
          return {
            release: async () => {
              const r = await conn.request('R', key, `R ${key} ${token}\n`);
              if (!r.endsWith(' OK')) throw new Error(`release ${key}: ${r}`);
            },
          };
        },
        close: async () => conn.close(),
      };
    },
  };
}
