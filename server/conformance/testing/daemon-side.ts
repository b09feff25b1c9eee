// The real-daemon check's player: walks a vector's server script from the client's side against
// a running `baton serve`. The script's `expect` lines are written to the daemon, its `send`
// lines are what the daemon must answer, byte for byte (codes only for E/ERROR lines unless the
// step says exact_text). Returns the first mismatch, or undefined when the daemon did it all.
import { randomBytes } from 'node:crypto';
import { RawConn } from './raw-conn.ts';
import type { LoadedVector, PlainServerStep, ServerStep } from '../vector-schema.ts';

export interface DaemonTarget {
  /** The port of the vector's protocol. */
  readonly port: number;
  readonly httpPort: number;
  readonly adminToken: string;
  /** Starts the daemon's graceful shutdown (not awaited: the script reads its goodbyes). */
  shutdown(): void;
}

/** How long a reply may take on a busy machine: generous, since a correct daemon answers in ms. */
const REPLY_MS = 5_000;
/** After the script, how long we listen for lines the script did not announce. */
const QUIET_MS = 150;

export async function playAgainstDaemon(vector: LoadedVector, target: DaemonTarget): Promise<string | undefined> {
  const conns = new Map<string, RawConn>();
  const all: RawConn[] = [];
  let current: RawConn | undefined;
  const open = async (): Promise<RawConn> => {
    const conn = await RawConn.open(target.port);
    all.push(conn);
    return conn;
  };
  /** A bound label, or an unbound one aliasing the latest live connection (else a new one). */
  const connFor = async (label: string | undefined): Promise<RawConn> => {
    const bound = label === undefined ? undefined : conns.get(label);
    if (bound !== undefined) return bound;
    const conn = current !== undefined && !current.gone ? current : await open();
    if (label !== undefined) conns.set(label, conn);
    return conn;
  };
  /** `{key:k}`: the client's claim key; the check picks one per name, as a client would. */
  const keys = new Map<string, string>();
  const withKeys = (line: string): string =>
    line.replace(/\{key:([a-z0-9]+)\}/g, (_whole, name: string) => {
      const key = keys.get(name) ?? randomBytes(16).toString('hex');
      keys.set(name, key);
      return key;
    });
  const bound = (label: string): RawConn => {
    const conn = conns.get(label);
    if (conn === undefined) throw new Error(`label ${label} used before a step bound it`);
    return conn;
  };
  try {
    for (const [index, step] of vector.server.entries()) {
      const where = `server step ${index + 1} ${JSON.stringify(step)}`;
      const problem = await runStep(step);
      if (problem !== undefined) return `${where}: ${problem}`;
    }
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    for (const [label, conn] of conns) {
      if (!conn.wasReset && conn.unread() !== '') return `after the script, the daemon sent more on ${label}: ${conn.describe()}`;
    }
    return undefined;
  } finally {
    for (const conn of all) conn.destroy();
  }

  async function runStep(step: ServerStep): Promise<string | undefined> {
    if ('daemon_only' in step) {
      // Another client's lines: they must not become the client's current connection.
      const before = current;
      current = undefined;
      try {
        for (const inner of step.daemon_only) {
          const problem = await runPlain(inner);
          if (problem !== undefined) return `${JSON.stringify(inner)}: ${problem}`;
        }
      } finally {
        current = before;
      }
      return undefined;
    }
    return runPlain(step);
  }

  async function runPlain(step: PlainServerStep): Promise<string | undefined> {
    if ('accept' in step) {
      current = await open();
      conns.set(step.accept, current);
      return undefined;
    }
    if ('expect' in step || 'expect_any_order' in step) {
      current = await connFor(step.conn);
      const lines = 'expect' in step ? [step.expect] : step.expect_any_order;
      current.write(lines.map((line) => `${withKeys(line)}\n`).join(''));
      return undefined;
    }
    if ('send' in step) {
      const conn = step.conn === undefined ? current : bound(step.conn);
      if (conn === undefined) return 'no connection to read from';
      const got = await conn.line(REPLY_MS);
      if (got instanceof Error) return `expected ${JSON.stringify(step.send)}: ${got.message}`;
      const line = got.endsWith('\r') ? got.slice(0, -1) : got;
      if (!sameReply(step.send, line, step.exact_text === true)) return `expected ${JSON.stringify(step.send)}, the daemon sent ${JSON.stringify(line)}`;
      return undefined;
    }
    if ('send_raw' in step) {
      const conn = step.conn === undefined ? current : bound(step.conn);
      if (conn === undefined) return 'no connection to read from';
      const got = await conn.chars(step.send_raw.length, REPLY_MS);
      if (got instanceof Error) return `expected ${JSON.stringify(step.send_raw)}: ${got.message}`;
      return got === step.send_raw ? undefined : `expected ${JSON.stringify(step.send_raw)}, the daemon sent ${JSON.stringify(got)}`;
    }
    if ('close' in step) {
      const conn = bound(step.close);
      conn.gone = true;
      return (await conn.closedQuietly(REPLY_MS)) ? undefined : `the daemon did not close ${step.close}: ${conn.describe()}`;
    }
    if ('reset' in step) {
      // What the daemon sees of a connection reset on the way: an RST.
      bound(step.reset).reset();
      return undefined;
    }
    if ('expect_close' in step) {
      bound(step.expect_close).end();
      return undefined;
    }
    if ('sleep_ms' in step) {
      await new Promise((resolve) => setTimeout(resolve, step.sleep_ms));
      return undefined;
    }
    if ('admin' in step) {
      if (step.admin === 'shutdown') {
        target.shutdown();
        return undefined;
      }
      return admin(step.admin, step.lock ?? '', target);
    }
    return 'this step cannot be asked of a real daemon: mark the vector "daemon": false';
  }
}

/** E and ERROR lines: the code is the contract, the text may be reworded. */
export function sameReply(expected: string, actual: string, exactText: boolean): boolean {
  if (exactText || expected === actual) return expected === actual;
  const fields = expected.startsWith('E ') ? 4 : expected.startsWith('ERROR ') ? 2 : 0;
  if (fields === 0) return false;
  const head = (line: string): string => line.split(' ').slice(0, fields).join(' ');
  return actual.split(' ').length > fields && head(expected) === head(actual);
}

async function admin(action: 'force-release' | 'kick', lock: string, target: DaemonTarget): Promise<string | undefined> {
  const base = `http://127.0.0.1:${target.httpPort}/api/v1/locks/${encodeURIComponent(lock)}`;
  const headers = { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' };
  let url = `${base}/force-release`;
  if (action === 'kick') {
    // The waiter's line was just written: poll until the daemon has queued it.
    const deadline = performance.now() + REPLY_MS;
    let id: string | undefined;
    while (id === undefined && performance.now() < deadline) {
      const detail = await fetch(base, { headers });
      if (detail.ok) id = ((await detail.json()) as { queue: { id: string }[] }).queue[0]?.id;
      if (id === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (id === undefined) return `no waiter on ${lock} to kick`;
    url = `${base}/waiters/${id}/kick`;
  }
  const answer = await fetch(url, { method: 'POST', headers, body: '{}' });
  return answer.ok ? undefined : `the ops API answered ${answer.status} to ${action} ${lock}: ${await answer.text()}`;
}
