// Connection floods past --max-connections on both ports: every refused connection gets the
// protocol's "too many connections" line (keyed `E - - too-many-connections`, session
// `ERROR 0x06`) and is closed, while clients already connected on both protocols are served
// during and after the flood. Then the same with the default limit in a real `baton serve`
// whose open-file limit is lower than the connections it was told to take.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemon, open, runTeardown, teardown, waitIdle } from '../testing/fuzz-harness.ts';
import { connectionGauge, eventually, type RawConnection } from '../testing/fuzz-helpers.ts';
import { BATON_BIN, serveArgs } from '../testing/serve-args.ts';

afterEach(runTeardown);

const KEYED_REFUSAL = 'E - - too-many-connections too many connections';
const SESSION_REFUSAL = 'ERROR 0x06 too many connections';

/** Opens `count` connections at once; each sends `hello(i)` and waits for its first line or a close. */
async function flood(port: number, count: number, hello: (i: number) => string): Promise<RawConnection[]> {
  const conns = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const c = await open(port);
      c.write(hello(i));
      return c;
    }),
  );
  await Promise.all(conns.map((c) => c.until(() => c.replies().lines.length > 0 || c.closed, 10_000, 'a first line')));
  return conns;
}

/**
 * Each connection was either served (its first line is a grant) or refused with the line and
 * closed; with `dropped`, a refused connection past the goodbyes in flight may also have been
 * closed without a word (counted apart).
 */
async function sortOut(
  conns: RawConnection[],
  granted: RegExp,
  refusal: string,
  dropped = false,
): Promise<{ served: number; refused: number; dropped?: number }> {
  let served = 0;
  let refused = 0;
  let silent = 0;
  for (const c of conns) {
    const first = c.replies().lines[0];
    if (first !== undefined && granted.test(first)) served++;
    else if (first === undefined && dropped && c.closed) silent++;
    else {
      expect(first, 'a refused connection is told why').toBe(refusal);
      await c.until(() => c.closed, 5_000, 'the refused connection to close');
      expect(c.replies().lines).toEqual([refusal]);
      refused++;
    }
  }
  return dropped ? { served, refused, dropped: silent } : { served, refused };
}

/** Keyed and session clients connected before the flood, kept busy with handovers through it. */
async function regulars(lockPort: number, sessionPort: number) {
  const keyed = await open(lockPort);
  const holder = await open(sessionPort);
  const waiter = await open(sessionPort);
  holder.write('ACQUIRE regular 60000\n');
  await holder.until(() => holder.replies().lines.length === 1, 3_000, 'the session grant');
  waiter.write('ACQUIRE regular 60000\n');
  await waiter.until(() => waiter.replies().lines[0] === 'WAITING 1', 3_000, 'the session to queue');
  let rounds = 0;
  let stop = false;
  // Acquire and release on one keyed connection, one request at a time, until told to stop.
  const loop = (async () => {
    while (!stop) {
      const seen = keyed.replies().lines.length;
      keyed.write('A regular/k 60 5\n');
      await keyed.until(() => keyed.replies().lines.length > seen, 5_000, 'a keyed grant during the flood');
      const token = (keyed.replies().lines[seen] as string).split(' ')[2];
      keyed.write(`R regular/k ${token}\n`);
      await keyed.until(() => keyed.replies().lines[seen + 1] === 'R regular/k OK', 5_000, 'a keyed release during the flood');
      rounds++;
    }
  })();
  return {
    rounds: () => rounds,
    /** The session holder heartbeats and is answered, hangs up, and the waiter is handed the lock. */
    async handOver(): Promise<void> {
      holder.write('HEARTBEAT\n');
      await holder.until(() => holder.replies().lines.length === 2, 5_000, 'a heartbeat answer during the flood');
      expect(holder.replies().lines[1]).toBe(holder.replies().lines[0]);
      holder.destroy();
      await waiter.until(() => waiter.replies().lines.length === 2, 5_000, 'the pushed grant during the flood');
      expect(waiter.replies().lines[1]).toMatch(/^ACQUIRED \d+$/);
    },
    async stop(): Promise<void> {
      stop = true;
      await loop;
      keyed.destroy();
      waiter.destroy();
    },
  };
}

/** `baton serve --no-console` under `ulimit -n fds`, on free ports; resolves once it serves. */
async function serveUnderLimit(fds: number): Promise<{ lock: number; session: number; stderr: () => string; stop: () => Promise<number | null> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-flood-'));
  const bin = BATON_BIN;
  const child = spawn(
    'sh',
    [
      '-c',
      `ulimit -n ${fds} && exec "$@"`,
      'sh',
      process.execPath,
      bin,
      ...serveArgs(dataDir),
      '--no-console',

      '--io-timeout',
      '1s',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (): Promise<number | null> => {
    child.kill('SIGTERM');
    const code = await exited;
    await rm(dataDir, { recursive: true, force: true });
    return code;
  };
  teardown.push(async () => void (child.exitCode === null ? await stop() : await rm(dataDir, { recursive: true, force: true })));
  await eventually(() => /lock=127\.0\.0\.1:\d+ session=127\.0\.0\.1:\d+/.test(stdout) || child.exitCode !== null, 15_000, 'baton serve to start');
  const m = /lock=127\.0\.0\.1:(\d+) session=127\.0\.0\.1:(\d+)/.exec(stdout);
  if (m === null) throw new Error(`baton serve did not start: ${stderr}`);
  return { lock: Number(m[1]), session: Number(m[2]), stderr: () => stderr, stop };
}

describe('a connection flood past --max-connections', () => {
  it('refuses the excess on both ports with the protocol error and closes them, serving existing clients throughout', async () => {
    const max = 40;
    // The test process's own limit would size the refusals in flight (112 under a hard limit
    // of 1024, fewer than this flood's 160 a port); pinned, the test means the same everywhere.
    const d = await daemon({ maxConnections: max, openFileLimit: 65_536 });
    const busy = await regulars(d.lockAddress.port, d.sessionAddress.port);
    const before = busy.rounds();
    // 200 a port at once (under the 256 refusals the listener says goodbye to at a time).
    const [keyed, sessions] = await Promise.all([
      flood(d.lockAddress.port, 200, (i) => `A flood/${i} 0.5 0\n`),
      flood(d.sessionAddress.port, 200, (i) => `ACQUIRE session-flood/${i} 60000\n`),
    ]);
    await busy.handOver();
    const k = await sortOut(keyed, /^A flood\/\d+ \d+$/, KEYED_REFUSAL);
    const s = await sortOut(sessions, /^ACQUIRED \d+$/, SESSION_REFUSAL);
    // The regulars hold one keyed and two session slots.
    expect(k).toEqual({ served: max - 1, refused: 200 - (max - 1) });
    expect(s).toEqual({ served: max - 2, refused: 200 - (max - 2) });
    await eventually(() => busy.rounds() > before + 3, 5_000, 'the keyed regular to keep acquiring');
    // Slots free again once the flood leaves, and the refusals left nothing behind.
    for (const c of [...keyed, ...sessions]) c.destroy();
    const after = busy.rounds();
    await eventually(() => busy.rounds() > after, 5_000, 'the keyed regular to go on after the flood');
    await busy.stop();
    await eventually(
      async () => {
        const gauge = await connectionGauge(d.httpAddress.port);
        return gauge.keyed === 0 && gauge.session === 0;
      },
      5_000,
      'baton_connections to fall back to 0',
    );
    await waitIdle(d);
    const again = await flood(d.sessionAddress.port, max, (i) => `ACQUIRE again/${i} 60000\n`);
    expect(await sortOut(again, /^ACQUIRED \d+$/, SESSION_REFUSAL)).toEqual({ served: max, refused: 0 });
  });
});

describe('a connection flood past the open-file limit', () => {
  it('holds both protocols together to what ulimit -n allows, so refused clients are told why and existing clients are served', async () => {
    // 256 descriptors: 128 reserved, 16 a listener for refusals in flight, 96 connections for both protocols.
    const server = await serveUnderLimit(256);
    expect(server.stderr()).toContain('"maxTotal":96');
    const busy = await regulars(server.lock, server.session);
    const [keyed, sessions] = await Promise.all([
      flood(server.lock, 150, (i) => `A flood/${i} 0.5 0\n`),
      flood(server.session, 150, (i) => `ACQUIRE session-flood/${i} 60000\n`),
    ]);
    await busy.handOver();
    const k = await sortOut(keyed, /^A flood\/\d+ \d+$/, KEYED_REFUSAL, true);
    const s = await sortOut(sessions, /^ACQUIRED \d+$/, SESSION_REFUSAL, true);
    // The regulars hold three of the 96. Without the shared cap, accepts run into EMFILE and the
    // kernel drops clients unanswered.
    expect(k.served + s.served).toBe(96 - 3);
    expect(k.refused + s.refused, 'refusals told why').toBeGreaterThanOrEqual(32);
    for (const c of [...keyed, ...sessions]) c.destroy();
    const after = busy.rounds();
    await eventually(() => busy.rounds() > after + 3, 5_000, 'the keyed regular to go on after the flood');
    await busy.stop();
    expect(await server.stop(), 'a clean drain and exit').toBe(0);
  });
});
