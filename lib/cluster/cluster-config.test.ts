// The cluster file's rules, one per test, each with the message an operator reads.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ClusterConfig, type PeerConfig, findPeer, parseClusterConfig, readClusterConfig } from './cluster-config.ts';

const A: PeerConfig = { id: 'a', host: '127.0.0.1', lockPort: 7070, sessionPort: 7071, peerPort: 7072, httpPort: 3000 };
const B: PeerConfig = { id: 'b', host: '127.0.0.1', lockPort: 7170, sessionPort: 7171, peerPort: 7172, httpPort: 3100 };
const C: PeerConfig = { id: 'c', host: '127.0.0.1', lockPort: 7270, sessionPort: 7271, peerPort: 7272, httpPort: 3200 };
const GOOD: ClusterConfig = { peers: [A, B, C] };

function refusal(json: unknown): string {
  const result = parseClusterConfig(typeof json === 'string' ? json : JSON.stringify(json), 'cluster.json');
  if (result.ok) throw new Error('expected the config to be refused');
  return result.message;
}

describe('parseClusterConfig', () => {
  it('accepts a good config and returns it unchanged, peers in priority order', () => {
    expect(parseClusterConfig(JSON.stringify(GOOD, null, 2), 'cluster.json')).toEqual({ ok: true, config: GOOD });
  });

  it('allows the same ports on different hosts', () => {
    const config = { peers: [A, { ...A, id: 'b', host: '10.0.0.2' }] };
    expect(parseClusterConfig(JSON.stringify(config), 'cluster.json')).toEqual({ ok: true, config });
  });

  it('reports a JSON syntax error with its line and column', () => {
    expect(refusal('{\n  "peers": [\n    {"id": "a",}\n  ]\n}')).toBe(
      'cluster.json: not valid JSON at line 3, column 16: Expected double-quoted property name',
    );
    expect(refusal('{"peers": }')).toBe("cluster.json: not valid JSON at line 1, column 11: Unexpected token '}'");
    expect(refusal('{"peers": [')).toBe('cluster.json: not valid JSON at line 1, column 12: the file ends in the middle of a value');
  });

  it('needs an object with a non-empty peers list', () => {
    expect(refusal([A])).toBe('cluster.json: expected a JSON object with a "peers" list');
    expect(refusal({})).toBe('cluster.json: peers is missing');
    expect(refusal({ peers: [] })).toBe('cluster.json: peers must list at least one node');
    expect(refusal({ peers: 'a,b' })).toBe('cluster.json: peers must be a list of nodes');
    expect(refusal({ peers: ['a'] })).toBe('cluster.json: peers[0] must be an object with id, host, lockPort, sessionPort, peerPort and httpPort');
  });

  it('refuses an unknown field, naming it and the field it probably meant', () => {
    const { lockPort, ...rest } = B;
    expect(refusal({ peers: [A, { ...rest, lockport: lockPort }] })).toBe(
      'cluster.json: peers[1] ("b"): unknown field "lockport" (did you mean "lockPort"?); known fields: id, host, lockPort, sessionPort, peerPort, httpPort',
    );
    expect(refusal({ peers: [A], peerTimeout: 1000 })).toBe('cluster.json: unknown field "peerTimeout"; known fields: peers');
  });

  it('refuses a missing field', () => {
    const { httpPort: _, ...rest } = B;
    expect(refusal({ peers: [A, rest] })).toBe('cluster.json: peers[1] ("b"): httpPort is missing');
  });

  it.each([
    ['', ''],
    ['has space', '"has space"'],
    ['x'.repeat(65), `"${'x'.repeat(65)}"`],
  ])('refuses the id %j', (id, shown) => {
    expect(refusal({ peers: [{ ...A, id }] })).toBe(
      `cluster.json: peers[0]${shown === '' ? '' : ` (${shown})`}: id must be 1 to 64 characters from A-Z a-z 0-9 _ . -`,
    );
  });

  it('accepts 64 nodes and refuses a 65th: one fencing-token slot per node', () => {
    const nodes = (n: number) => ({ peers: Array.from({ length: n }, (_, i) => ({ ...A, id: `n${i}`, host: `10.0.${Math.floor(i / 200)}.${i % 200}` })) });
    expect(parseClusterConfig(JSON.stringify(nodes(64)), 'cluster.json').ok).toBe(true);
    expect(refusal(nodes(65))).toBe('cluster.json: peers must list at most 64 nodes (one fencing-token slot each)');
  });

  it('accepts ids of 64 characters from the allowed set', () => {
    const id = 'Node_1.a-'.padEnd(64, 'z');
    expect(parseClusterConfig(JSON.stringify({ peers: [{ ...A, id }] }), 'cluster.json').ok).toBe(true);
  });

  it('refuses an empty host', () => {
    expect(refusal({ peers: [A, { ...B, host: '' }] })).toBe('cluster.json: peers[1] ("b"): host must not be empty');
  });

  it.each([0, 65_536, 70.5, -1, '7070', null])('refuses the port %j', (port) => {
    expect(refusal({ peers: [A, { ...B, peerPort: port }] })).toBe('cluster.json: peers[1] ("b"): peerPort must be a whole number from 1 to 65535');
  });

  it('refuses two peers with the same id', () => {
    expect(refusal({ peers: [A, B, { ...C, id: 'a' }] })).toBe('cluster.json: peers[2] ("a"): id "a" is already used by peers[0]');
  });

  it('refuses a port that another peer on the same host already uses', () => {
    expect(refusal({ peers: [A, { ...B, httpPort: A.sessionPort }] })).toBe(
      'cluster.json: peers[1] ("b"): httpPort 7071 on host 127.0.0.1 is also the sessionPort of peers[0] ("a")',
    );
  });

  it('refuses one peer using the same port twice', () => {
    expect(refusal({ peers: [{ ...A, peerPort: A.lockPort }] })).toBe('cluster.json: peers[0] ("a"): peerPort 7070 on host 127.0.0.1 is also its lockPort');
  });
});

describe('findPeer', () => {
  it("finds this node's entry", () => {
    expect(findPeer(GOOD, 'b')).toEqual({ ok: true, peer: B });
  });

  it('lists the known ids for an unknown one', () => {
    expect(findPeer(GOOD, 'd', 'cluster.json')).toEqual({ ok: false, message: 'cluster.json has no node "d"; its nodes are: a, b, c' });
  });
});

describe('readClusterConfig', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('reads and checks a file, naming it in messages', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-cluster-config-'));
    dirs.push(dir);
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    await writeFile(good, JSON.stringify(GOOD));
    await writeFile(bad, JSON.stringify({ peers: [A, A] }));
    expect(await readClusterConfig(good)).toEqual({ ok: true, config: GOOD });
    expect(await readClusterConfig(bad)).toEqual({ ok: false, message: `${bad}: peers[1] ("a"): id "a" is already used by peers[0]` });
  });

  it('says so when the file is missing', async () => {
    expect(await readClusterConfig('/nonexistent/cluster.json')).toEqual({
      ok: false,
      message: 'cannot read the cluster config /nonexistent/cluster.json: no such file',
    });
  });
});
