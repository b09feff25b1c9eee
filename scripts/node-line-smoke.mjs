// One Node.js line's smoke of `baton serve`, what a new user on that line does first: start it on
// a fresh data dir with every port on 0, take a lock over the keyed protocol and one over the
// session protocol, load the console page, read /metrics, then SIGTERM it and expect a clean exit
// (code 0) without a runtime warning on stderr. Every step is checked; the first that fails ends
// the smoke with what it saw. The daemon and everything it started run on the given `node` (its
// folder is first on PATH too).
// Used by test-node-lines.mjs; needs the console build (`node scripts/ensure-console-build.mjs`).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BATON = fileURLToPath(new URL('../bin/baton', import.meta.url));
const START_MS = 60_000;
const STEP_MS = 15_000;
/** A runtime warning on stderr (`(node:123) [DEP0040] DeprecationWarning: ...`): what differs between lines. */
const RUNTIME_WARNING = /(\[\w+\] )?\b[A-Z]\w*Warning: .*/g;

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A line-protocol connection: send lines, await the next line the server sends. */
function lineConnection(port) {
  const socket = connect({ host: '127.0.0.1', port });
  const lines = [];
  const waiters = [];
  let buffered = '';
  let closed = null;
  const settle = () => {
    while (waiters.length > 0 && (lines.length > 0 || closed !== null)) {
      const w = waiters.shift();
      if (lines.length > 0) w.resolve(lines.shift());
      else w.reject(closed);
    }
  };
  socket.setEncoding('utf8');
  socket.on('data', (text) => {
    buffered += text;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      lines.push(buffered.slice(0, nl).replace(/\r$/, ''));
      buffered = buffered.slice(nl + 1);
    }
    settle();
  });
  socket.on('error', (err) => {
    closed = err;
    settle();
  });
  socket.on('close', () => {
    closed ??= new Error('connection closed');
    settle();
  });
  return {
    send: (line) => socket.write(`${line}\n`),
    next: (what) => {
      const line = new Promise((resolve, reject) => waiters.push({ resolve, reject }));
      settle();
      return withTimeout(line, STEP_MS, what);
    },
    close: () => socket.destroy(),
  };
}

function expectMatch(line, re, what) {
  const m = re.exec(line);
  if (m === null) throw new Error(`${what}: expected ${re}, got ${JSON.stringify(line)}`);
  return m;
}

function rssMiB(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 1024);
}

/**
 * Runs the smoke with `node`. Resolves (never rejects) with what it measured and, when a step
 * failed, `error`: the step and what it saw, with the daemon's stderr.
 */
export async function smokeNodeLine(node) {
  const dataDir = mkdtempSync(join(tmpdir(), 'baton-node-line-'));
  const result = { node, pid: null, version: null, ok: false, startMs: null, rssMiB: null, stopMs: null, warnings: [], error: null };
  let child;
  let exited;
  let stderr = '';
  let step = 'start';
  try {
    result.version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, NEXT_TELEMETRY_DISABLED: '1' };
    delete env.BATON_ADMIN_TOKEN;
    delete env.BATON_READ_TOKEN;
    const started = performance.now();
    child = spawn(node, [BATON, 'serve', '--lock-port', '0', '--session-port', '0', '--http-port', '0', '--data-dir', dataDir, '--log-level', 'warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      // Its own process group: a failed smoke kills whatever the daemon started along with it.
      detached: true,
    });
    result.pid = child.pid ?? null;
    child.stderr.setEncoding('utf8').on('data', (text) => (stderr += text));
    exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const serving = new Promise((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (text) => {
        out += text;
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
      exited.then(({ code, signal }) => reject(new Error(`baton serve exited with ${code ?? signal} before serving`)));
    });
    const line = await withTimeout(serving, START_MS, 'serving line');
    result.startMs = Math.round(performance.now() - started);
    const port = (name) => Number(expectMatch(line, new RegExp(`${name}=127\\.0\\.0\\.1:(\\d+)`), 'serving line')[1]);
    const ports = { lock: port('lock'), session: port('session'), http: port('http') };

    step = 'keyed lock';
    const keyed = lineConnection(ports.lock);
    keyed.send('A smoke/keyed 30 5');
    const keyedToken = BigInt(expectMatch(await keyed.next('keyed A'), /^A smoke\/keyed (\d+)$/, 'keyed grant')[1]);
    keyed.send(`R smoke/keyed ${keyedToken}`);
    expectMatch(await keyed.next('keyed R'), /^R smoke\/keyed OK$/, 'keyed release');

    step = 'session lock';
    const session = lineConnection(ports.session);
    session.send('ACQUIRE smoke/session 10000');
    const sessionToken = BigInt(expectMatch(await session.next('session ACQUIRE'), /^ACQUIRED (\d+)$/, 'session grant')[1]);
    if (sessionToken <= keyedToken) throw new Error(`session token ${sessionToken} is not above the keyed token ${keyedToken} (one token sequence)`);
    // One lock table: while the session holds, a keyed request for the same lock times out.
    keyed.send('A smoke/session 30 0.2');
    expectMatch(await keyed.next('keyed A while the session holds'), /^T smoke\/session$/, 'keyed wait behind the session');
    session.close();
    keyed.send('A smoke/session 30 5');
    expectMatch(await keyed.next('keyed A after the session closed'), /^A smoke\/session \d+$/, 'grant after the session closed');
    keyed.close();

    step = 'console page';
    const page = await withTimeout(fetch(`http://127.0.0.1:${ports.http}/`), STEP_MS, 'GET /');
    const html = await page.text();
    if (page.status !== 200 || !(page.headers.get('content-type') ?? '').startsWith('text/html') || !html.includes('<title>Baton console</title>')) {
      throw new Error(`GET / answered ${page.status} ${page.headers.get('content-type')}, not the console page: ${html.slice(0, 200)}`);
    }

    step = 'metrics';
    const metrics = await (await withTimeout(fetch(`http://127.0.0.1:${ports.http}/metrics`), STEP_MS, 'GET /metrics')).text();
    for (const protocol of ['keyed', 'session']) {
      const granted = Number(new RegExp(`^baton_grants_total\\{[^}]*protocol="${protocol}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
      if (granted < 1) throw new Error(`/metrics shows no ${protocol} grant: ${metrics.slice(0, 300)}`);
    }
    result.rssMiB = rssMiB(child.pid);

    step = 'SIGTERM';
    const stopping = performance.now();
    child.kill('SIGTERM');
    const exit = await withTimeout(exited, STEP_MS, 'exit after SIGTERM');
    result.stopMs = Math.round(performance.now() - stopping);
    if (exit.code !== 0) throw new Error(`exited with ${exit.code ?? exit.signal} after SIGTERM, not 0`);
    // A warning of the runtime is what a new line (or a new pin) changed under Baton: it fails
    // the smoke so that it is read, not scrolled past.
    step = 'runtime warnings';
    result.warnings = [...new Set(stderr.match(RUNTIME_WARNING) ?? [])];
    if (result.warnings.length > 0) throw new Error(`the runtime warned:\n${result.warnings.join('\n')}`);
    result.ok = true;
  } catch (err) {
    result.error = `${step}: ${err instanceof Error ? err.message : String(err)}${stderr ? `\ndaemon stderr:\n${stderr}` : ''}`;
  } finally {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      // Reaped before the data dir goes, so nothing of this smoke outlives it.
      await withTimeout(exited, STEP_MS, 'exit after SIGKILL').catch(() => {});
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}
