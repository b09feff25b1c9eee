// The `baton` command as an operator runs it: real processes started through bin/baton, real
// ports, real signals. Spawns are kept few (each costs a Node start); one shared server serves
// the `baton run` tests, and the tests about the server's own life start their own.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LineClient, eventually } from '../testing/line-client.ts';
import { BATON_BIN, serveArgs } from '../testing/serve-args.ts';

const BATON = BATON_BIN;
const SERVING = /^baton serving lock=127\.0\.0\.1:(\d+) session=127\.0\.0\.1:(\d+) http=127\.0\.0\.1:(\d+) /;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned `baton`: its output so far and its exit. */
class Baton {
  stdout = '';
  stderr = '';
  exit: Exit | undefined;
  readonly exited: Promise<Exit>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (this.stdout += text));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve((this.exit = { code, signal })));
    });
  }

  /** Resolves once the process has exited; fails after `ms`. */
  async done(ms = 5_000): Promise<Exit> {
    await eventually(() => this.exit !== undefined, ms, `baton ${this.child.spawnargs.slice(2).join(' ')} to exit; stderr: ${this.stderr}`);
    return this.exit as Exit;
  }

  /** Kills the process and whatever it started and left behind (it leads its own process group). */
  killAll(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the whole group is gone already.
    }
  }
}

interface Server {
  baton: Baton;
  lockPort: number;
  sessionPort: number;
  httpPort: number;
  instanceId: string;
}

const spawned: Baton[] = [];
const dirs: string[] = [];

function baton(...args: string[]): Baton {
  const child = spawn(process.execPath, [BATON, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, BATON_ADMIN_TOKEN: undefined, BATON_READ_TOKEN: undefined },
  });
  const started = new Baton(child);
  spawned.push(started);
  return started;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-cli-'));
  dirs.push(dir);
  return dir;
}

async function serve(dataDir: string, drain = '200ms'): Promise<Server> {
  const started = baton(
    ...serveArgs(dataDir),

    '--drain',
    drain,
    '--log-level',
    'warn',
    '--no-console',
  );
  await eventually(() => started.stdout.includes('\n') || started.exit !== undefined, 10_000, 'the serving line');
  const line = started.stdout.split('\n')[0] as string;
  const ports = SERVING.exec(line);
  if (!ports) throw new Error(`unexpected first line ${JSON.stringify(line)}; stderr: ${started.stderr}`);
  const instanceId = /instance=(\S+)/.exec(line)?.[1] ?? '';
  return { baton: started, lockPort: Number(ports[1]), sessionPort: Number(ports[2]), httpPort: Number(ports[3]), instanceId };
}

async function healthz(server: Server): Promise<{ status: string; instanceId: string }> {
  const response = await fetch(`http://127.0.0.1:${server.httpPort}/healthz`);
  return (await response.json()) as { status: string; instanceId: string };
}

async function waitForMetric(server: Server, pattern: RegExp): Promise<void> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    const text = await (await fetch(`http://127.0.0.1:${server.httpPort}/metrics`)).text();
    if (pattern.test(text)) return;
    if (performance.now() > deadline) throw new Error(`no ${pattern} in /metrics:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Holds `name` over a raw session connection and returns the client and its token. */
async function holdRaw(server: Server, name: string): Promise<{ session: LineClient; token: bigint }> {
  const session = await LineClient.open(server.sessionPort);
  sessions.push(session);
  session.send(`ACQUIRE ${name} 5000`);
  const reply = await session.next();
  expect(reply).toMatch(/^ACQUIRED \d+$/);
  return { session, token: BigInt(reply.split(' ')[1] as string) };
}
const sessions: LineClient[] = [];

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

afterEach(async () => {
  for (const session of sessions.splice(0)) session.close();
  for (const started of spawned.splice(0)) started.killAll();
});

afterAll(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('baton serve', () => {
  it('prints its chosen ports on one line, and /healthz answers with its instance id', async () => {
    const server = await serve(await tempDir());
    expect(server.baton.stdout.split('\n')[0]).toMatch(/ data-dir=\S+ instance=[0-9a-f-]{36}$/);
    const health = await healthz(server);
    expect(health).toMatchObject({ status: 'ok', instanceId: server.instanceId });
  });

  it('prints a generated admin token once, on stdout after the serving line, and never logs it', async () => {
    const server = await serve(await tempDir());
    await eventually(() => server.baton.stdout.split('\n').length >= 3, 3_000, 'the admin token line');
    const [, tokenLine] = server.baton.stdout.split('\n');
    const token = /^admin token \(generated; set --admin-token or BATON_ADMIN_TOKEN to choose one\): (\S{32})$/.exec(tokenLine ?? '')?.[1];
    expect(token).toBeDefined();
    expect(server.baton.stdout.split(token as string)).toHaveLength(2);
    expect(server.baton.stderr).not.toContain(token as string);
  });

  it('on SIGTERM ends sessions with ERROR 0x01, keeps /healthz up as draining, then exits 0', async () => {
    const server = await serve(await tempDir(), '1500ms');
    const { session } = await holdRaw(server, 'shutdown-test');
    server.baton.child.kill('SIGTERM');
    expect(await session.next()).toMatch(/^ERROR 0x01 /);
    await session.waitClosed();
    expect(await refusesConnections(server.sessionPort)).toBe(true);
    expect(await refusesConnections(server.lockPort)).toBe(true);
    expect(await healthz(server)).toMatchObject({ status: 'draining', instanceId: server.instanceId });
    expect(await server.baton.done()).toEqual({ code: 0, signal: null });
  });

  it('issues larger tokens after a restart from the same data directory', async () => {
    const dataDir = await tempDir();
    const first = await serve(dataDir);
    const before = await holdRaw(first, 'restart-test');
    first.baton.child.kill('SIGTERM');
    expect(await first.baton.done()).toEqual({ code: 0, signal: null });
    const second = await serve(dataDir);
    const after = await holdRaw(second, 'restart-test');
    expect(after.token).toBeGreaterThan(before.token);
  });

  it('says in its help what --no-console serves: the probes, /metrics and the JSON ops API, no dashboard', async () => {
    const help = baton('serve', '--help');
    expect((await help.done()).code).toBe(0);
    const line = help.stdout.replace(/\s+/g, ' ');
    expect(line).toContain('--no-console no dashboard: the HTTP port serves only the probes (/healthz, /readyz), /metrics and the JSON ops API');
    expect(line).not.toMatch(/no ops API/);
  });

  it('serves with --no-console exactly what its help names, and says the dashboard is off on the page', async () => {
    const help = baton('serve', '--help');
    expect((await help.done()).code).toBe(0);
    // The option's own words: up to the next option.
    const said = /--no-console (.*?) --[a-z]/.exec(help.stdout.replace(/\s+/g, ' '))?.[1] ?? '';
    // Every path the help names answers; the JSON ops API by two of its reads.
    const paths = [...said.matchAll(/\(?(\/[a-z0-9/]+)/g)].map((m) => m[1] ?? '');
    expect(paths).toEqual(['/healthz', '/readyz', '/metrics', '/api/v1']);
    const server = await serve(await tempDir());
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/v1/locks', '/api/v1/stats']) {
      expect((await fetch(`http://127.0.0.1:${server.httpPort}${path}`)).status, path).toBe(200);
    }
    expect(said).toContain('the dashboard page answers a JSON 404');
    const page = await fetch(`http://127.0.0.1:${server.httpPort}/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([404, 'application/json']);
    expect(await page.json()).toEqual({
      error: {
        code: 'not-found',
        message:
          'not found: /: the dashboard is off on this node (started with --no-console); this port serves the probes (/healthz, /readyz), /metrics and the JSON ops API (/api/v1)',
      },
    });
    server.baton.child.kill('SIGTERM');
    expect(await server.baton.done()).toEqual({ code: 0, signal: null });
  });

  it('refuses a bad flag with a message and exit code 2', async () => {
    const started = baton('serve', '--lock-port', '99999');
    expect(await started.done()).toEqual({ code: 2, signal: null });
    expect(started.stderr).toMatch(/--lock-port.*'99999' is invalid/);
  });

  it.each([
    ['--max-park', '0', /--max-park <duration>' argument '0' is invalid\. must be greater than zero\./],
    ['--max-park', '31700y', /--max-park <duration>' argument '31700y' is invalid\. expected a duration/],
    ['--max-park', '48h', /--max-park <duration>' argument '48h' is invalid\. must be at most 24h/],
    ['--max-parked', '0', /--max-parked <n>' argument '0' is invalid\. expected a whole number >= 1\./],
    ['--max-parked', 'lots', /--max-parked <n>' argument 'lots' is invalid/],
  ])('refuses %s %s with a message and exit code 2', async (flag, value, message) => {
    const started = baton('serve', '--no-console', flag, value);
    expect(await started.done()).toEqual({ code: 2, signal: null });
    expect(started.stderr).toMatch(message);
    expect(started.stdout).toBe('');
  });

  it('refuses a short admin token with exit code 2 without printing the token', async () => {
    const started = baton('serve', '--no-console', '--admin-token', 'short-secret');
    expect(await started.done()).toEqual({ code: 2, signal: null });
    expect(started.stderr).toContain('--admin-token (or BATON_ADMIN_TOKEN) is not a valid token (12 characters)');
    expect(started.stderr).not.toContain('short-secret');
  });
});

describe('baton run', () => {
  let server: Server;
  let addr: string;
  beforeAll(async () => {
    server = await serve(await tempDir());
    spawned.splice(spawned.indexOf(server.baton), 1); // outlives each test; afterAll stops it
    addr = `127.0.0.1:${server.sessionPort}`;
  });
  afterAll(async () => {
    server.baton.child.kill('SIGTERM');
    await server.baton.done().finally(() => server.baton.killAll());
  });

  it('gives the command its token in BATON_TOKEN and exits with its exit code', async () => {
    const out = join(await tempDir(), 'token');
    const run = baton('run', 'run/token', '--addr', addr, '--', 'sh', '-c', `echo "$BATON_TOKEN $BATON_LOCK" > ${out}; exit 7`);
    expect(await run.done()).toEqual({ code: 7, signal: null });
    expect(await readFile(out, 'utf8')).toMatch(/^\d+ run\/token\n$/);
  });

  it('makes a second run on the same lock wait until the first one finishes', async () => {
    const dir = await tempDir();
    const log = join(dir, 'log');
    const go = join(dir, 'go');
    // The first command holds until the test sees the second run queued behind it.
    const firstScript = `echo "first $BATON_TOKEN" >> ${log}; echo holding; while [ ! -e ${go} ]; do sleep 0.05; done; echo first-end >> ${log}`;
    const first = baton('run', 'run/queue', '--addr', addr, '--', 'sh', '-c', firstScript);
    await eventually(() => first.stdout.includes('holding') || first.exit !== undefined, 5_000, 'the first command to start');
    const second = baton('run', 'run/queue', '--addr', addr, '--', 'sh', '-c', `echo "second $BATON_TOKEN" >> ${log}`);
    await waitForMetric(server, /^baton_waiters\{protocol="session"\} 1$/m);
    await writeFile(go, '');
    expect(await first.done()).toEqual({ code: 0, signal: null });
    expect(await second.done()).toEqual({ code: 0, signal: null });
    const [firstLine, end, secondLine] = (await readFile(log, 'utf8')).trimEnd().split('\n');
    expect([firstLine?.split(' ')[0], end, secondLine?.split(' ')[0]]).toEqual(['first', 'first-end', 'second']);
    expect(BigInt(secondLine?.split(' ')[1] ?? '')).toBeGreaterThan(BigInt(firstLine?.split(' ')[1] ?? ''));
  });

  it('passes SIGTERM on to the command, exits 128+15, and releases the lock', async () => {
    const run = baton('run', 'run/signal', '--addr', addr, '--', 'sh', '-c', 'echo holding; exec sleep 30');
    await eventually(() => run.stdout.includes('holding') || run.exit !== undefined, 5_000, 'the command to start');
    run.child.kill('SIGTERM');
    expect(await run.done()).toEqual({ code: 143, signal: null });
    expect(run.stderr).toBe('');
    await holdRaw(server, 'run/signal');
  });

  it('exits 75 with a message when the lock stays held for the whole --wait', async () => {
    await holdRaw(server, 'run/busy');
    const marker = join(await tempDir(), 'ran');
    const run = baton('run', 'run/busy', '--addr', addr, '--wait', '300ms', '--', 'touch', marker);
    expect(await run.done()).toEqual({ code: 75, signal: null });
    expect(run.stderr).toBe('baton: timed out after 300ms waiting for lock run/busy\n');
    await expect(readFile(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('exits 69 with a message when no server can be reached', async () => {
    const run = baton('run', 'run/nowhere', '--addr', `127.0.0.1:${await closedPort()}`, '--wait', '1s', '--', 'true');
    expect(await run.done()).toEqual({ code: 69, signal: null });
    expect(run.stderr).toMatch(/^baton: cannot reach a Baton server at 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

  it('tries the --addr list in order and follows a REDIRECT to the serving node', async () => {
    // The first address refuses connections; the second is a standby that redirects, as a cluster's would.
    const standby = createServer((socket) => {
      socket.once('data', () => socket.end(`REDIRECT 127.0.0.1:${server.sessionPort}\n`));
    });
    await new Promise<void>((resolve) => standby.listen(0, '127.0.0.1', resolve));
    try {
      const standbyAddr = `127.0.0.1:${(standby.address() as { port: number }).port}`;
      const run = baton('run', 'run/list', '--addr', `127.0.0.1:${await closedPort()},${standbyAddr}`, '--', 'sh', '-c', 'echo "token $BATON_TOKEN"');
      expect(await run.done()).toEqual({ code: 0, signal: null });
      expect(run.stdout).toMatch(/^token \d+\n$/);
    } finally {
      standby.close();
    }
  });

  it('names its session baton run <command> @<host> pid <pid> by default, or --client-name, in the lock detail', async () => {
    const holder = async (lock: string): Promise<{ clientName: string | null } | null> => {
      const response = await fetch(`http://127.0.0.1:${server.httpPort}/api/v1/locks/${encodeURIComponent(lock)}`);
      return response.ok ? ((await response.json()) as { holder: { clientName: string | null } | null }).holder : null;
    };
    const byDefault = baton('run', 'run/named', '--addr', addr, '--', 'sh', '-c', 'echo holding; exec sleep 30');
    const named = baton('run', 'run/named2', '--addr', addr, '--client-name', 'nightly report @ops-3', '--', 'sh', '-c', 'echo holding; exec sleep 30');
    await eventually(() => byDefault.stdout.includes('holding') && named.stdout.includes('holding'), 5_000, 'both commands to start');
    expect((await holder('run/named'))?.clientName).toMatch(
      new RegExp(`^baton run sh -c 'echo holding; exec sleep 30' @${hostname().replace(/\./g, '\\.')} pid \\d+$`),
    );
    expect((await holder('run/named2'))?.clientName).toBe('nightly report @ops-3');
    byDefault.child.kill('SIGTERM');
    named.child.kill('SIGTERM');
    expect((await Promise.all([byDefault.done(), named.done()])).map((exit) => exit.code)).toEqual([143, 143]);
  });

  it('quotes the command in its identity as a shell would, so two different commands never read the same', async () => {
    const holderName = async (lock: string): Promise<string | null | undefined> => {
      const response = await fetch(`http://127.0.0.1:${server.httpPort}/api/v1/locks/${encodeURIComponent(lock)}`);
      return response.ok ? ((await response.json()) as { holder: { clientName: string | null } | null }).holder?.clientName : undefined;
    };
    // Two commands that joined with spaces read the same (the script's $0 is "x y", or "x" and $1 "y").
    const script = 'echo holding; exec sleep 30';
    const tricky = ['', "it's", 'two\nlines'];
    const one = baton('run', 'run/quoted1', '--addr', addr, '--', 'sh', '-c', script, 'x y', ...tricky);
    const split = baton('run', 'run/quoted2', '--addr', addr, '--', 'sh', '-c', script, 'x', 'y', ...tricky);
    await eventually(() => one.stdout.includes('holding') && split.stdout.includes('holding'), 5_000, 'both commands to start');
    const quoted = `'' "it's" $'two\\nlines'`;
    expect(await holderName('run/quoted1')).toBe(`baton run sh -c '${script}' 'x y' ${quoted} @${hostname()} pid ${one.child.pid}`);
    expect(await holderName('run/quoted2')).toBe(`baton run sh -c '${script}' x y ${quoted} @${hostname()} pid ${split.child.pid}`);
    one.child.kill('SIGTERM');
    split.child.kill('SIGTERM');
    expect((await Promise.all([one.done(), split.done()])).map((exit) => exit.code)).toEqual([143, 143]);
  });

  it('refuses a bad --client-name with a message and exit code 2', async () => {
    const bad = baton('run', 'run/flags', '--addr', addr, '--client-name', ' leading space', '--', 'true');
    expect(await bad.done()).toEqual({ code: 2, signal: null });
    expect(bad.stderr).toMatch(/--client-name.*is invalid.*128 bytes/);
  });

  it('refuses bad flags and a missing command with a message and exit code 2', async () => {
    const badLease = baton('run', 'run/flags', '--lease', 'abc', '--', 'true');
    const noCommand = baton('run', 'run/flags', '--addr', addr);
    const badAddr = baton('run', 'run/flags', '--addr', 'nowhere', '--', 'true');
    const badPark = baton('run', 'run/flags', '--max-park', '0', '--', 'true');
    const exits = await Promise.all([badLease.done(), noCommand.done(), badAddr.done(), badPark.done()]);
    expect(exits.map((exit) => exit.code)).toEqual([2, 2, 2, 2]);
    expect(badPark.stderr).toMatch(/--max-park.*'0' is invalid\. must be greater than zero/);
    expect(badLease.stderr).toMatch(/--lease.*'abc' is invalid/);
    expect(noCommand.stderr).toMatch(/missing required argument 'command'/);
    expect(badAddr.stderr).toMatch(/--addr.*'nowhere' is invalid/);
  });
});

describe('baton run losing its lock', () => {
  it('sends the command SIGTERM and exits 143 when the server dies under it', async () => {
    const server = await serve(await tempDir());
    const run = baton('run', 'run/lost', '--addr', `127.0.0.1:${server.sessionPort}`, '--lease', '1s', '--', 'sh', '-c', 'echo holding; exec sleep 30');
    await eventually(() => run.stdout.includes('holding') || run.exit !== undefined, 5_000, 'the command to start');
    server.baton.child.kill('SIGKILL');
    expect(await run.done(5_000)).toEqual({ code: 143, signal: null });
    expect(run.stderr).toMatch(/^baton: lost lock run\/lost: /);
  });

  it('with --max-park stops the command by 0.8 x --max-park, not 0.8 x a long lease, when the server dies under it', async () => {
    const server = await serve(await tempDir());
    const run = baton(
      'run',
      'run/parked',
      '--addr',
      `127.0.0.1:${server.sessionPort}`,
      '--lease',
      '20s',
      '--max-park',
      '1s',
      '--',
      'sh',
      '-c',
      'echo holding; exec sleep 30',
    );
    await eventually(() => run.stdout.includes('holding') || run.exit !== undefined, 5_000, 'the command to start');
    server.baton.child.kill('SIGKILL');
    // Within 5 s: by the lease alone it would run on for 16 s (0.8 x 20 s) with no server keeping its claim.
    expect(await run.done(5_000)).toEqual({ code: 143, signal: null });
    expect(run.stderr).toMatch(/^baton: lost lock run\/parked: .*--max-park/);
  });

  it('never reports success after the lock was lost, even when the command exits 0 on SIGTERM', async () => {
    const server = await serve(await tempDir());
    const script = "trap 'echo cleaned; exit 0' TERM; echo holding; while :; do sleep 0.05; done";
    const run = baton('run', 'run/lost0', '--addr', `127.0.0.1:${server.sessionPort}`, '--lease', '1s', '--', 'sh', '-c', script);
    await eventually(() => run.stdout.includes('holding') || run.exit !== undefined, 5_000, 'the command to start');
    server.baton.child.kill('SIGKILL');
    expect(await run.done(5_000)).toEqual({ code: 1, signal: null });
    expect(run.stdout).toContain('cleaned');
    expect(run.stderr).toMatch(/lock was lost while the command ran/);
  });
});

describe('baton serve --config refusals', () => {
  const TOKEN = 'cluster-admin-token-0123456789';
  const peer = (id: string, base: number) => ({ id, host: '127.0.0.1', lockPort: base, sessionPort: base + 1, peerPort: base + 2, httpPort: base + 3 });
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir();
    await writeFile(join(dir, 'good.json'), JSON.stringify({ peers: [peer('a', 17070), peer('b', 17170), peer('c', 17270)] }));
    await writeFile(join(dir, 'dup-id.json'), JSON.stringify({ peers: [peer('a', 17070), peer('a', 17170)] }));
    await writeFile(join(dir, 'dup-port.json'), JSON.stringify({ peers: [peer('a', 17070), { ...peer('b', 17170), httpPort: 17072 }] }));
    await writeFile(join(dir, 'bad.json'), '{"peers": [\n  {"id": "a"\n]}');
  });

  // Each refusal exits 2 before anything binds, with its message on stderr and nothing on stdout.
  it.each([
    [
      'a duplicate id',
      ['--config', 'dup-id.json', '--node', 'a', '--admin-token', TOKEN],
      /^baton: \S+dup-id\.json: peers\[1\] \("a"\): id "a" is already used by peers\[0\]\n$/,
    ],
    [
      'a duplicate port',
      ['--config', 'dup-port.json', '--node', 'a', '--admin-token', TOKEN],
      /^baton: \S+dup-port\.json: peers\[1\] \("b"\): httpPort 17072 on host 127\.0\.0\.1 is also the peerPort of peers\[0\] \("a"\)\n$/,
    ],
    [
      'an unknown --node',
      ['--config', 'good.json', '--node', 'd', '--admin-token', TOKEN],
      /^baton: --node: \S+good\.json has no node "d"; its nodes are: a, b, c\n$/,
    ],
    ['--node without --config', ['--node', 'a'], /^baton: --node needs --config \(the cluster file\)\n$/],
    [
      '--config without the admin token',
      ['--config', 'good.json', '--node', 'a'],
      /^baton: --config needs the shared admin token \(--admin-token or BATON_ADMIN_TOKEN\): every node of a cluster uses the same one\n$/,
    ],
    [
      'a missing file',
      ['--config', 'missing.json', '--node', 'a', '--admin-token', TOKEN],
      /^baton: cannot read the cluster config \S+missing\.json: no such file\n$/,
    ],
    [
      'bad JSON',
      ['--config', 'bad.json', '--node', 'a', '--admin-token', TOKEN],
      /^baton: \S+bad\.json: not valid JSON at line 3, column 1: Expected ',' or '}' after property value\n$/,
    ],
  ])('refuses %s with a message and exit code 2', async (_, args, message) => {
    const started = baton('serve', '--no-console', ...args.map((arg) => (arg.endsWith('.json') ? join(dir, arg) : arg)));
    expect(await started.done()).toEqual({ code: 2, signal: null });
    expect(started.stderr).toMatch(message);
    expect(started.stdout).toBe('');
  });
});
