// The service unit and its environment file, checked without starting anything: systemd's own
// verifier, the hardening, the restart policy against docs/console.md's exit codes, the flags
// against `baton serve --help`, the descriptor limit against --max-connections and the stop
// timeout against the daemon's own stop bounds. Each check is also run on a copy broken in the
// one way it guards against, so none can pass by matching nothing.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATON_BIN } from '../../server/testing/serve-args.ts';
import {
  documentedExitCodes,
  envProblems,
  flagProblems,
  hardeningProblems,
  nofileProblems,
  restartProblems,
  restartsSafely,
  stopBoundMs,
  stopTimeoutProblems,
} from './unit-checks.ts';
import { ENV_PATH, parseEnvFile, parseUnit, UNIT_PATH } from './unit-file.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const unitText = readFileSync(UNIT_PATH, 'utf8');
const envText = readFileSync(ENV_PATH, 'utf8');
const consoleMd = readFileSync(join(ROOT, 'docs/console.md'), 'utf8');
const unit = parseUnit(unitText);
const env = parseEnvFile(envText);
let help = '';
let analyze = '';
let dir = '';

/** `text` with `from` replaced; throws when `from` is not there, so a mutation cannot silently miss. */
function broken(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`the mutation found no ${String(from)}`);
  return out;
}

beforeAll(() => {
  const found = spawnSync('sh', [join(ROOT, 'scripts/ensure-systemd-analyze.sh')], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`scripts/ensure-systemd-analyze.sh failed: ${found.stderr}`);
  analyze = found.stdout.trim().split('\n').at(-1) ?? '';
  const ran = spawnSync(process.execPath, [BATON_BIN, 'serve', '--help'], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`baton serve --help failed: ${ran.stderr}`);
  help = ran.stdout;
  dir = mkdtempSync(join(tmpdir(), 'baton-unit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** systemd-analyze verify on a copy whose ExecStart is this checkout's bin/baton; exit code and all output. */
function verify(text: string, name = 'baton.service'): { status: number | null; output: string } {
  const path = join(dir, name);
  writeFileSync(path, text.replaceAll('/opt/baton/bin/baton', BATON_BIN).replaceAll('/etc/baton/baton.env', ENV_PATH));
  const ran = spawnSync(analyze, ['verify', path], { encoding: 'utf8' });
  return { status: ran.status, output: `${ran.stdout}${ran.stderr}`.trim() };
}

describe('systemd-analyze verify', () => {
  it('passes the unit with no exit code and no word of output', () => {
    expect(verify(unitText)).toEqual({ status: 0, output: '' });
  });

  it('fails when ExecStart is not executable, and speaks up on an unknown directive', () => {
    const stub = join(dir, 'not-executable');
    writeFileSync(stub, '#!/bin/sh\n');
    chmodSync(stub, 0o644);
    expect(verify(broken(unitText, /^ExecStart=\S+/m, `ExecStart=${stub}`), 'noexec.service').status).not.toBe(0);
    expect(verify(broken(unitText, /^NoNewPrivileges=yes$/m, 'NoNewPrivileges=yes\nProtectSytem=strict'), 'typo.service').output).toMatch(/ProtectSytem/);
  });
});

describe('the unit', () => {
  it('has its own user, a state directory for the data dir, ProtectSystem=strict, no new privileges and the network sandbox', () => {
    expect(hardeningProblems(unit)).toEqual([]);
    expect(hardeningProblems(parseUnit(broken(unitText, /^ProtectSystem=strict$/m, 'ProtectSystem=full')))).toEqual([
      'Service.ProtectSystem is "full", not "strict"',
    ]);
    expect(hardeningProblems(parseUnit(broken(unitText, /^User=baton$/m, 'User=root')))).toEqual(['no user of its own']);
    expect(hardeningProblems(parseUnit(broken(unitText, '--data-dir /var/lib/baton', '--data-dir /opt/baton/data')))).toEqual([
      '--data-dir is /opt/baton/data, not the StateDirectory under /var/lib',
    ]);
    expect(hardeningProblems(parseUnit(`${unitText}\n[Service]\nMemoryDenyWriteExecute=yes\n`))).toEqual(["MemoryDenyWriteExecute=yes breaks V8's JIT"]);
  });

  it('does not restart on the exit codes docs/console.md says need a person, and does restart on the others', () => {
    const codes = documentedExitCodes(consoleMd);
    expect(codes.map((c) => c.code)).toEqual(expect.arrayContaining([2, 65, 70, 73]));
    // Exit 70 (a bug, no drain) is the one the doc says a restart handles.
    expect(codes.filter((c) => restartsSafely(c.what)).map((c) => c.code)).toEqual([70]);
    expect(restartProblems(unit, codes)).toEqual([]);
    expect(restartProblems(unit, [...codes, { code: 74, what: 'fix the disk' }])).toEqual(['exit 74 needs a person but would be restarted']);
    expect(restartProblems(parseUnit(broken(unitText, /^RestartPreventExitStatus=2 65 73$/m, 'RestartPreventExitStatus=2 65 70 73')), codes)).toEqual([
      'exit 70 restarts safely (docs/console.md) but is in RestartPreventExitStatus',
    ]);
  });

  it('passes only real baton serve flags, built from the environment file', () => {
    expect(flagProblems(unit, env, help)).toEqual([]);
    const extra = parseEnvFile(broken(envText, /^BATON_EXTRA_FLAGS=$/m, 'BATON_EXTRA_FLAGS=--no-console --max-conections 5'));
    expect(flagProblems(unit, extra, help)).toEqual(['--max-conections is not a baton serve flag']);
  });

  it('documents every variable of the environment file, and sets every one ExecStart uses', () => {
    expect(envProblems(unit, env, help)).toEqual([]);
    expect(envProblems(unit, parseEnvFile(`${envText}\nBATON_UNUSED=1\n`), help)).toEqual([
      'BATON_UNUSED has no comment saying what it is',
      'BATON_UNUSED is set but neither ExecStart nor baton reads it',
    ]);
    expect(envProblems(unit, parseEnvFile(broken(envText, /^BATON_DRAIN=.*$/m, '')), help)).toEqual([
      'ExecStart uses BATON_DRAIN, which the environment file does not set',
    ]);
  });

  it('gives enough file descriptors for --max-connections on both protocols', () => {
    expect(nofileProblems(unit, env)).toEqual([]);
    expect(nofileProblems(parseUnit(broken(unitText, /^LimitNOFILE=65536$/m, 'LimitNOFILE=32768')), env)).toEqual([
      'LimitNOFILE=32768 holds 32128 connections, not 2 x --max-connections 16384',
    ]);
    expect(nofileProblems(unit, parseEnvFile(broken(envText, 'BATON_MAX_CONNECTIONS=16384', 'BATON_MAX_CONNECTIONS=40000')))).toHaveLength(1);
  });

  it('leaves a graceful stop the time its handoff and drain may take, and sends SIGTERM to baton alone', () => {
    expect(stopBoundMs(2_000)).toBe(12_000);
    expect(stopTimeoutProblems(unit, env)).toEqual([]);
    expect(stopTimeoutProblems(parseUnit(broken(unitText, /^TimeoutStopSec=30s$/m, 'TimeoutStopSec=10s')), env)).toEqual([
      'TimeoutStopSec=10s is not above the 12000 ms a graceful stop may take',
    ]);
    expect(stopTimeoutProblems(unit, parseEnvFile(broken(envText, 'BATON_DRAIN=2s', 'BATON_DRAIN=25s')))).toHaveLength(1);
  });
});
