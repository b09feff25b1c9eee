// `baton serve`'s etcd-mode flags (--coordination, --etcd-endpoints, --etcd-prefix,
// --etcd-lease-ttl, --etcd-in-sync, --etcd-token-block, --etcd-lag-bound): what they become in the daemon's options, and each refusal, as a message and
// exit code 2 from the real command.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS } from '../daemon/daemon.ts';
import { BATON_BIN } from '../testing/serve-args.ts';
import {
  boundedWholeOption,
  etcdEndpointsOption,
  etcdInSyncOption,
  etcdLagBoundOption,
  etcdLeaseTtlOption,
  etcdPrefixOption,
  etcdTokenBlockOption,
} from './cli-options.ts';
import { type ServeFlags, serveOptions } from './serve-command.ts';

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
  coordination: 'peers',
  etcdLeaseTtl: 2,
};
const A = { id: 'a', host: '127.0.0.1', lockPort: 17070, sessionPort: 17071, peerPort: 17072, httpPort: 17073 };
const B = { id: 'b', host: '127.0.0.1', lockPort: 17170, sessionPort: 17171, peerPort: 17172, httpPort: 17173 };
const ENDPOINTS = ['http://127.0.0.1:2379', 'http://10.0.0.2:2379'];

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-etcd-flags-'));
  file = join(dir, 'cluster.json');
  await writeFile(file, JSON.stringify({ peers: [A, B] }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const run = (args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [BATON_BIN, 'serve', ...args], { timeout: 20_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });

const prepare = (given: Partial<ServeFlags>) => serveOptions({ ...FLAGS, ...given }, (key) => (key in given ? 'cli' : 'default'));

describe('the etcd mode flags', () => {
  it('hand the cluster node the etcd options: endpoints, prefix (default baton/<node ids>), lease TTL (default 2 s) and in-sync bound (default 1)', async () => {
    const cluster = { config: file, node: 'a', adminToken: TOKEN, coordination: 'etcd' as const, etcdEndpoints: ENDPOINTS };
    expect(await prepare(cluster)).toMatchObject({
      ok: true,
      options: { cluster: { nodeId: 'a', etcd: { endpoints: ENDPOINTS, prefix: 'baton/a-b', leaseTtlSeconds: 2, inSyncMembers: 1 } } },
    });
    expect(await prepare({ ...cluster, etcdPrefix: 'baton/prod', etcdLeaseTtl: 5, etcdInSync: 2 })).toMatchObject({
      ok: true,
      options: { cluster: { etcd: { endpoints: ENDPOINTS, prefix: 'baton/prod', leaseTtlSeconds: 5, inSyncMembers: 2 } } },
    });
  });

  it('hand the node the token block (default 1,000,000) and the in-sync lag bound (default 1 s), as given', async () => {
    const cluster = { config: file, node: 'a', adminToken: TOKEN, coordination: 'etcd' as const, etcdEndpoints: ENDPOINTS };
    expect(await prepare(cluster)).toMatchObject({ ok: true, options: { cluster: { etcd: { tokenBlock: 1_000_000, lagBoundMs: 1_000 } } } });
    expect(await prepare({ ...cluster, etcdTokenBlock: 5_000, etcdLagBound: 250 })).toMatchObject({
      ok: true,
      options: { cluster: { etcd: { tokenBlock: 5_000, lagBoundMs: 250 } } },
    });
  });

  it('the peers mode (the default) hands the node no etcd options', async () => {
    const prepared = await prepare({ config: file, node: 'a', adminToken: TOKEN });
    expect(prepared.ok && prepared.options.cluster !== null && 'etcd' in prepared.options.cluster).toBe(false);
  });

  it('refuses the etcd mode without a cluster file or endpoints, and the etcd flags without the etcd mode', async () => {
    expect(await prepare({ coordination: 'etcd', etcdEndpoints: ENDPOINTS })).toEqual({
      ok: false,
      message: '--coordination etcd needs --config (the cluster file): the etcd mode chooses the active among the nodes of a cluster',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, coordination: 'etcd' })).toEqual({
      ok: false,
      message: '--coordination etcd needs --etcd-endpoints http://host:port[,...]: the etcd members that hold the active role',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, etcdEndpoints: ENDPOINTS })).toEqual({
      ok: false,
      message: '--etcd-endpoints needs --coordination etcd',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, etcdLeaseTtl: 3 })).toEqual({
      ok: false,
      message: '--etcd-lease-ttl needs --coordination etcd',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, etcdInSync: 2 })).toEqual({
      ok: false,
      message: '--etcd-in-sync needs --coordination etcd',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, etcdTokenBlock: 5_000 })).toEqual({
      ok: false,
      message: '--etcd-token-block needs --coordination etcd',
    });
    expect(await prepare({ config: file, node: 'a', adminToken: TOKEN, etcdLagBound: 250 })).toEqual({
      ok: false,
      message: '--etcd-lag-bound needs --coordination etcd',
    });
  });

  it('checks each value', () => {
    expect(etcdEndpointsOption('http://127.0.0.1:2379,https://etcd-2.example:2379')).toEqual(['http://127.0.0.1:2379', 'https://etcd-2.example:2379']);
    for (const bad of ['127.0.0.1:2379', 'http://127.0.0.1', 'ftp://h:1', 'http://h:1/path', 'http://h:1,', 'http://h:1,http://h:1']) {
      expect(() => etcdEndpointsOption(bad)).toThrow();
    }
    expect(etcdPrefixOption('baton/prod-eu')).toBe('baton/prod-eu');
    for (const bad of ['', '/baton', 'baton/', 'a//b', 'a b', 'x'.repeat(129)]) expect(() => etcdPrefixOption(bad)).toThrow();
    expect(etcdLeaseTtlOption('1')).toBe(1);
    expect(etcdLeaseTtlOption('60')).toBe(60);
    for (const bad of ['0', '61', '1.5', '2s', '-1', '']) expect(() => etcdLeaseTtlOption(bad)).toThrow('expected whole seconds from 1 to 60');
    expect(etcdInSyncOption('1')).toBe(1);
    expect(etcdInSyncOption('63')).toBe(63);
    for (const bad of ['0', '64', '1.5', 'all', '-1', '']) expect(() => etcdInSyncOption(bad)).toThrow('expected a whole number of standbys from 1 to 63');
    expect(etcdTokenBlockOption('1000')).toBe(1_000);
    expect(etcdTokenBlockOption(' 3000000 ')).toBe(3_000_000);
    for (const bad of ['999', '3000001', '0', '1e6', '1_000_000', '1,000,000', '2000.5', '-5000', 'huge', '']) {
      expect(() => etcdTokenBlockOption(bad), bad).toThrow('expected a whole number of tokens from 1000 to 3000000');
    }
    expect(etcdLagBoundOption('100ms')).toBe(100);
    expect(etcdLagBoundOption('2.5s')).toBe(2_500);
    expect(etcdLagBoundOption('1m')).toBe(60_000);
    for (const bad of ['99ms', '61s', '2m', '0']) expect(() => etcdLagBoundOption(bad), bad).toThrow('must be from 100ms to 60s');
    for (const bad of ['500', 'fast', '1 s', '']) expect(() => etcdLagBoundOption(bad), bad).toThrow('expected a duration such as 250ms, 5s or 2m');
  });

  it('one whole-number check takes digits only, inside its bounds, and says what it wanted', () => {
    expect(boundedWholeOption('7', 7, 9, 'wanted 7 to 9')).toBe(7);
    expect(boundedWholeOption('9', 7, 9, 'wanted 7 to 9')).toBe(9);
    // Number() would take every one of these.
    for (const bad of ['6', '10', '0x8', '8.0', '+8', '8e0', ' ', '08 8'])
      expect(() => boundedWholeOption(bad, 7, 9, 'wanted 7 to 9'), bad).toThrow('wanted 7 to 9');
  });

  it('the real command shows the token block and the lag bound in its help, with their bounds and defaults', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    const flat = help.stdout.replace(/\s+/g, ' ');
    expect(flat).toMatch(/--etcd-token-block <n> with --coordination etcd: tokens per block .*?\(1000 to 3000000:.*?\(default: 1000000\)/);
    expect(flat).toMatch(/--etcd-lag-bound <duration> with --coordination etcd: .*?\(100ms to 60s\).*?\(default: 1s\)/);
  });

  it('the real command prints the refusal and exits 2', async () => {
    const missing = await run(['--coordination', 'etcd', '--etcd-endpoints', 'http://127.0.0.1:2379']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--coordination etcd needs --config');
    const badTtl = await run(['--config', file, '--node', 'a', '--coordination', 'etcd', '--etcd-lease-ttl', '0']);
    expect(badTtl.code).toBe(2);
    expect(badTtl.stderr).toContain('expected whole seconds from 1 to 60');
    const badInSync = await run(['--config', file, '--node', 'a', '--coordination', 'etcd', '--etcd-in-sync', '0']);
    expect(badInSync.code).toBe(2);
    expect(badInSync.stderr).toContain('expected a whole number of standbys from 1 to 63');
    const badBlock = await run(['--config', file, '--node', 'a', '--coordination', 'etcd', '--etcd-token-block', '5000000']);
    expect(badBlock.code).toBe(2);
    expect(badBlock.stderr).toContain('expected a whole number of tokens from 1000 to 3000000');
    const badLag = await run(['--config', file, '--node', 'a', '--coordination', 'etcd', '--etcd-lag-bound', '50ms']);
    expect(badLag.code).toBe(2);
    expect(badLag.stderr).toContain('must be from 100ms to 60s');
    const strayBlock = await run(['--config', file, '--node', 'a', '--admin-token', TOKEN, '--etcd-token-block', '5000']);
    expect(strayBlock.code).toBe(2);
    expect(strayBlock.stderr).toContain('--etcd-token-block needs --coordination etcd');
    const strayLag = await run(['--config', file, '--node', 'a', '--admin-token', TOKEN, '--etcd-lag-bound', '2s']);
    expect(strayLag.code).toBe(2);
    expect(strayLag.stderr).toContain('--etcd-lag-bound needs --coordination etcd');
    const badMode = await run(['--coordination', 'zookeeper']);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/--coordination.*zookeeper/);
  });
});
