// Hand-written lock clients that time a handoff or failover from their side of the protocol, for
// the tests of the failover timeline's client figures: each notes when it learned of the
// transition (a `MOVED` or `M` line, or its connection breaking) and when it was served again
// (its `RESUME` answered, or its re-sent keyed request granted). Raw sockets rather than the
// client library, so the two moments are the ones the wire shows.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** One client's stall as it measured it (performance.now() of the test process). */
export interface ClientStall {
  who: string;
  noticedAt: number;
  servedAt: number;
}

export function stallMs(s: ClientStall): number {
  return s.servedAt - s.noticedAt;
}

/** A connection that hands each line to `onLine` and says when it closed. */
class Wire {
  private buffered = '';
  closed = false;

  private constructor(
    readonly socket: Socket,
    onLine: (line: string) => void,
    onClose: () => void,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      this.buffered += text;
      for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, nl).replace(/\r$/, '');
        this.buffered = this.buffered.slice(nl + 1);
        onLine(line);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      onClose();
    });
  }

  static open(address: string, onLine: (line: string) => void, onClose: () => void): Promise<Wire> {
    const [host, port] = splitAddress(address);
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new Wire(socket, onLine, onClose));
      });
      socket.once('error', reject);
    });
  }

  send(line: string): void {
    if (!this.closed) this.socket.write(`${line}\n`);
  }

  close(): void {
    this.socket.destroy();
  }
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), Number(address.slice(i + 1))];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a connection to the first of `addresses` that takes one, trying them in turn until `deadline`. */
async function openAny(addresses: readonly string[], onLine: (line: string) => void, onClose: () => void, deadline: number): Promise<Wire> {
  for (let i = 0; ; i++) {
    try {
      return await Wire.open(addresses[i % addresses.length] as string, onLine, onClose);
    } catch (err) {
      if (performance.now() > deadline) throw err;
      await sleep(20);
    }
  }
}

export interface TimedClient {
  /** Resolves once it is served again after the transition (rejects on a refusal). */
  readonly served: Promise<ClientStall>;
  close(): void;
}

/**
 * A keyed waiter: `A <name> 30 0` on `first`; when told `M <addr>` or cut off it re-sends there
 * (or to `fallback`, in turn), and once granted it releases at once, so the next waiter goes on.
 */
export async function keyedWaiter(who: string, name: string, first: string, fallback: readonly string[]): Promise<TimedClient> {
  let noticedAt: number | null = null;
  let wire: Wire | null = null;
  let done = false;
  let resolveServed: (s: ClientStall) => void = () => {};
  let rejectServed: (e: Error) => void = () => {};
  const served = new Promise<ClientStall>((resolve, reject) => {
    resolveServed = resolve;
    rejectServed = reject;
  });
  served.catch(() => undefined);
  const move = (to: readonly string[]) => {
    noticedAt ??= performance.now();
    wire?.close();
    wire = null;
    openAny(to, onLine, onClose, performance.now() + 15_000).then(
      (w) => {
        wire = w;
        w.send(`A ${name} 30 0`);
      },
      (err: Error) => rejectServed(err),
    );
  };
  const onLine = (line: string) => {
    const [op, key, token] = line.split(' ');
    if (op === 'M' && key !== undefined) move([key, ...fallback]);
    else if (op === 'A' && key === name && token !== undefined) {
      done = true;
      if (noticedAt === null) rejectServed(new Error(`${who} was granted ${name} before any transition`));
      else resolveServed({ who, noticedAt, servedAt: performance.now() });
      wire?.send(`R ${name} ${token}`);
    } else if (op === 'T' || op === 'E') rejectServed(new Error(`${who}: ${line}`));
  };
  const onClose = () => {
    if (!done) move(fallback);
  };
  wire = await Wire.open(first, onLine, onClose);
  wire.send(`A ${name} 30 0`);
  return {
    served,
    close: () => {
      done = true;
      wire?.close();
    },
  };
}

export interface SessionClaim extends TimedClient {
  /** The first answer to its ACQUIRE (`ACQUIRED <token>` or `WAITING <n>`). */
  readonly first: string;
}

/**
 * A resumable session claim (ACQUIRE with a claim key) on `first`. With `resume`, on `MOVED` it
 * resumes there, and when cut off it resumes at `fallback` (in turn, following `REDIRECT`s);
 * without, it never comes back (its claim expires). With `releaseWhenGranted`, a waiter closes
 * (releases) as soon as it gets the lock after its RESUME.
 */
export async function sessionClaim(
  who: string,
  name: string,
  leaseMs: number,
  first: string,
  options: { resume: boolean; fallback: readonly string[]; releaseWhenGranted?: boolean },
): Promise<SessionClaim> {
  const key = randomBytes(16).toString('hex');
  let noticedAt: number | null = null;
  let resumed = false;
  let ended = false;
  let wire: Wire | null = null;
  let resolveFirst: (line: string) => void = () => {};
  const firstLine = new Promise<string>((resolve) => {
    resolveFirst = resolve;
  });
  let resolveServed: (s: ClientStall) => void = () => {};
  let rejectServed: (e: Error) => void = () => {};
  const served = new Promise<ClientStall>((resolve, reject) => {
    resolveServed = resolve;
    rejectServed = reject;
  });
  served.catch(() => undefined);
  const resumeAt = (to: readonly string[]) => {
    noticedAt ??= performance.now();
    wire = null;
    if (!options.resume) return;
    openAny(to, onLine, onClose, performance.now() + 15_000).then(
      (w) => {
        wire = w;
        w.send(`RESUME ${name} ${key}`);
      },
      (err: Error) => rejectServed(err),
    );
  };
  const onLine = (line: string) => {
    const [word, arg] = line.split(' ');
    if (noticedAt === null && (word === 'ACQUIRED' || word === 'WAITING')) resolveFirst(line);
    else if (word === 'MOVED' && arg !== undefined) resumeAt([arg, ...options.fallback]);
    else if (word === 'REDIRECT' && arg !== undefined && noticedAt !== null) resumeAt([arg, ...options.fallback]);
    else if ((word === 'ACQUIRED' || word === 'WAITING') && noticedAt !== null) {
      if (!resumed) {
        resumed = true;
        resolveServed({ who, noticedAt, servedAt: performance.now() });
      }
      if (word === 'ACQUIRED' && options.releaseWhenGranted === true) {
        ended = true;
        wire?.close();
      }
    } else if (word === 'ERROR') rejectServed(new Error(`${who}: ${line}`));
  };
  const onClose = () => {
    // A MOVED or REDIRECT already moved it on (wire is null then); a break without a line is a crash.
    if (!ended && !resumed && wire?.closed === true) resumeAt(options.fallback);
  };
  wire = await Wire.open(first, onLine, onClose);
  wire.send(`ACQUIRE ${name} ${leaseMs} ${key}`);
  return {
    first: await firstLine,
    served,
    close: () => {
      ended = true;
      wire?.close();
    },
  };
}
