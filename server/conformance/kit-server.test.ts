// The kit server's control protocol on a real socket, played by hand the way a runner would, and
// `baton conformance-server` as a process: its first line, and exit 2 on a bad vector file.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKitServer } from './kit-server.ts';
import type { KitServer } from './kit-server.ts';
import { loadVectors } from './load-vectors.ts';
import { RawConn } from './testing/raw-conn.ts';

const BATON = fileURLToPath(new URL('../../bin/baton', import.meta.url));
let kit: KitServer;
const opened: RawConn[] = [];

beforeAll(async () => {
  kit = await startKitServer({ host: '127.0.0.1', port: 0, vectors: loadVectors() });
});
afterAll(async () => {
  for (const conn of opened) conn.destroy();
  await kit.close();
});

async function open(port: number): Promise<RawConn> {
  const conn = await RawConn.open(port);
  opened.push(conn);
  return conn;
}

async function ask(control: RawConn, line: string): Promise<string> {
  control.write(`${line}\n`);
  const answer = await control.line(5_000);
  if (answer instanceof Error) throw answer;
  return answer;
}

describe('the control protocol', () => {
  it('plays a vector: READY with its node, PASS when the client did what the script expects', async () => {
    const control = await open(kit.port);
    const ready = await ask(control, 'PLAY keyed-basics/acquire-release');
    expect(ready).toMatch(/^READY n1=127\.0\.0\.1:\d+$/);
    const client = await open(Number(ready.split(':')[1]));
    client.write('A jobs/x 30 0\n');
    expect(await client.line(5_000)).toBe('A jobs/x 1');
    client.write('R jobs/x 1\n');
    expect(await client.line(5_000)).toBe('R jobs/x OK');
    expect(await ask(control, 'DONE')).toBe('PASS');
    // The vector's listener is gone with its verdict: the next play gets fresh ones.
    expect(await ask(control, 'PLAY keyed-basics/acquire-release')).not.toBe(ready);
    expect(await ask(control, 'PLAY keyed-basics/timeout')).toMatch(/^ERR a vector is being played/);
    expect(await ask(control, 'DONE')).toMatch(/^FAIL server step 1 /);
  });

  it('answers ERR to an unknown vector, to DONE with nothing played and to any other line', async () => {
    const control = await open(kit.port);
    expect(await ask(control, 'PLAY keyed-basics/no-such')).toBe('ERR unknown vector "keyed-basics/no-such"');
    expect(await ask(control, 'DONE')).toBe('ERR no vector is being played');
    expect(await ask(control, 'HELLO')).toMatch(/^ERR unknown command "HELLO"/);
  });
});

describe('baton conformance-server', () => {
  it('prints the control address and the vector count on its first line', async () => {
    const child = spawn(process.execPath, [BATON, 'conformance-server', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.once('exit', (code) => reject(new Error(`exited ${code} before its first line`)));
      });
      expect(first).toMatch(new RegExp(`^conformance server control=127\\.0\\.0\\.1:\\d+ vectors=${loadVectors().length}$`));
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('exits 2 naming the file and the vector when a vector is bad', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-vectors-'));
    try {
      writeFileSync(join(dir, 'keyed-x.json'), JSON.stringify({ area: 'keyed-x', protocol: 'keyed', vectors: [{ id: 'keyed-x/broken' }] }));
      const child = spawn(process.execPath, [BATON, 'conformance-server', '--port', '0', '--vectors', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toMatch(/keyed-x\.json: vector keyed-x\/broken: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
