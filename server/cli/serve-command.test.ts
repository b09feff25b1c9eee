// What `baton serve`'s flags become: the daemon options, with a cluster node's host and ports
// from its config entry. Pure (no process, nothing binds); cli.test.ts covers the real command.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS } from '../daemon/daemon.ts';
import { maxParkOption, peerTimeoutOption } from './cli-options.ts';
import { type ServeFlags, serveOptions } from './serve-command.ts';

describe('serveOptions', () => {
  const TOKEN = 'cluster-admin-token-0123456789';
  const FLAGS: ServeFlags = {
    host: DEFAULT_OPTIONS.host,
    lockPort: DEFAULT_OPTIONS.lockPort,
    sessionPort: DEFAULT_OPTIONS.sessionPort,
    httpPort: DEFAULT_OPTIONS.httpPort,
    dataDir: './data',
    ioTimeout: DEFAULT_OPTIONS.ioTimeoutMs,
    drain: DEFAULT_OPTIONS.drainMs,
    maxConnections: DEFAULT_OPTIONS.maxConnections,
    maxBacklog: DEFAULT_OPTIONS.maxBacklog,
    maxPark: DEFAULT_OPTIONS.maxParkMs,
    maxParked: DEFAULT_OPTIONS.maxParked,
    console: false,
    logLevel: 'info',
    peerTimeout: 1_000,
  };
  const A = { id: 'a', host: '127.0.0.1', lockPort: 17070, sessionPort: 17071, peerPort: 17072, httpPort: 17073 };
  const B = { id: 'b', host: '10.0.0.2', lockPort: 7070, sessionPort: 7071, peerPort: 7072, httpPort: 3000 };
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-serve-options-'));
    file = join(dir, 'cluster.json');
    await writeFile(file, JSON.stringify({ peers: [A, B] }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  /** Flags as commander hands them over: `given` came from the command line, the rest are defaults. */
  const prepare = (given: Partial<ServeFlags>) => serveOptions({ ...FLAGS, ...given }, (key) => (key in given ? 'cli' : 'default'));

  it('without --config runs a single node exactly as before', async () => {
    expect(await prepare({ lockPort: 0 })).toEqual({
      ok: true,
      options: {
        host: '127.0.0.1',
        lockPort: 0,
        sessionPort: 7071,
        httpPort: 3000,
        dataDir: './data',
        ioTimeoutMs: 5_000,
        drainMs: 2_000,
        maxConnections: 16_384,
        maxBacklog: 10_000,
        maxParkMs: 60_000,
        maxParked: 16_384,
        console: 'probes',
        consoleDev: false,
        nodeId: 'local',
        cluster: null,
        adminToken: null,
        readToken: null,
      },
    });
  });

  it("with --config takes host and ports from the node's entry and hands the daemon the cluster", async () => {
    const prepared = await prepare({ config: file, node: 'b', adminToken: TOKEN, peerTimeout: 2_000, peerListen: { host: '0.0.0.0', port: 9000 } });
    expect(prepared).toMatchObject({
      ok: true,
      options: {
        host: '10.0.0.2',
        lockPort: 7070,
        sessionPort: 7071,
        httpPort: 3000,
        dataDir: './data/b',
        nodeId: 'b',
        adminToken: TOKEN,
        cluster: { config: { peers: [A, B] }, nodeId: 'b', peerTimeoutMs: 2_000, peerListen: { host: '0.0.0.0', port: 9000 } },
      },
    });
  });

  it('hands the daemon --return-hold-down when given, and leaves the default (10 peer timeouts, at least 10 s) to the node otherwise', async () => {
    const given = await prepare({ config: file, node: 'a', adminToken: TOKEN, returnHoldDown: 2_500 });
    expect(given).toMatchObject({ ok: true, options: { cluster: { returnHoldDownMs: 2_500 } } });
    const zero = await prepare({ config: file, node: 'a', adminToken: TOKEN, returnHoldDown: 0 });
    expect(zero).toMatchObject({ ok: true, options: { cluster: { returnHoldDownMs: 0 } } });
    const absent = await prepare({ config: file, node: 'a', adminToken: TOKEN });
    expect(absent.ok && absent.options.cluster !== null && 'returnHoldDownMs' in absent.options.cluster).toBe(false);
    expect(await prepare({ returnHoldDown: 2_000 })).toEqual({ ok: false, message: '--return-hold-down needs --config (the cluster file)' });
  });

  it('keeps an explicit --data-dir as given', async () => {
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, dataDir: '/var/lib/baton' })).toMatchObject({
      ok: true,
      options: { dataDir: '/var/lib/baton', cluster: { peerListen: null } },
    });
  });

  it('refuses --host and port flags with --config rather than ignoring them', async () => {
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, host: '0.0.0.0', httpPort: 8080 })).toEqual({
      ok: false,
      message: `--host, --http-port cannot be used with --config: this node's host and ports come from its entry in ${file} (edit the file instead)`,
    });
  });

  it('refuses --config without --node, and the peer flags without --config', async () => {
    expect(await prepare({ config: file, adminToken: TOKEN })).toEqual({
      ok: false,
      message: `--config needs --node <id>: which of the nodes in ${file} this process is`,
    });
    expect(await prepare({ peerTimeout: 500 })).toEqual({ ok: false, message: '--peer-timeout needs --config (the cluster file)' });
    expect(await prepare({ peerListen: { host: '0.0.0.0', port: 9000 } })).toEqual({ ok: false, message: '--peer-listen needs --config (the cluster file)' });
  });

  it('takes the admin token from the environment as well as the flag', async () => {
    const prepared = await serveOptions({ ...FLAGS, config: file, node: 'a', adminToken: TOKEN }, (key) =>
      key === 'adminToken' ? 'env' : key === 'config' || key === 'node' ? 'cli' : 'default',
    );
    expect(prepared).toMatchObject({ ok: true, options: { adminToken: TOKEN, nodeId: 'a' } });
  });

  it('hands --max-park and --max-parked to the daemon, on a cluster node as on a single one', async () => {
    expect(await prepare({ maxPark: 5_000, maxParked: 50 })).toMatchObject({ ok: true, options: { maxParkMs: 5_000, maxParked: 50 } });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, maxPark: 5_000, maxParked: 50 })).toMatchObject({
      ok: true,
      options: { maxParkMs: 5_000, maxParked: 50, nodeId: 'a' },
    });
  });

  it('needs a --max-park above zero and at most 24h', () => {
    expect(maxParkOption('250ms')).toBe(250);
    expect(maxParkOption('24h')).toBe(86_400_000);
    expect(() => maxParkOption('0')).toThrow('must be greater than zero.');
    expect(() => maxParkOption('25h')).toThrow('must be at most 24h');
    expect(() => maxParkOption('forever')).toThrow('expected a duration such as 250ms, 5s or 2m.');
  });

  it('needs a --peer-timeout of at least 100ms', () => {
    expect(peerTimeoutOption('100ms')).toBe(100);
    expect(peerTimeoutOption('2s')).toBe(2_000);
    expect(() => peerTimeoutOption('50ms')).toThrow('must be at least 100ms (peers send a heartbeat every peer-timeout/5).');
    expect(() => peerTimeoutOption('0')).toThrow('must be at least 100ms');
  });
});
