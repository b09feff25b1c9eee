// A throwaway single-member etcd on free loopback ports. Its data dir is on /dev/shm (tmpfs)
// when there is one: etcd fsyncs its WAL on every write, Redis here persists nothing and
// Baton fsyncs once per 100,000 tokens, so a disk-backed etcd would be measured on the disk.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../server/testing/free-ports.ts';
import { awaitListening, cpuOf, type ServerProcess, stopChild, track } from './server-process.ts';

export interface EtcdServer extends ServerProcess {
  readonly endpoint: string;
  readonly dataDirOnTmpfs: boolean;
}

export async function startEtcd(): Promise<EtcdServer> {
  const [clientPort, peerPort] = await freePorts(2);
  const onTmpfs = existsSync('/dev/shm');
  const dir = mkdtempSync(join(onTmpfs ? '/dev/shm' : tmpdir(), 'bench-etcd-'));
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    'etcd',
    [
      '--name',
      'bench',
      '--data-dir',
      dir,
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
      '--initial-cluster-state',
      'new',
      '--log-level',
      'error',
      '--logger',
      'zap',
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: '' } },
  );
  track(child);
  await awaitListening(child, clientPort as number, dir, 'etcd');
  return {
    name: 'etcd',
    endpoint: client,
    dataDirOnTmpfs: onTmpfs,
    pid: child.pid as number,
    cpuMs: cpuOf(child.pid as number),
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
