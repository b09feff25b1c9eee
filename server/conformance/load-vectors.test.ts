// Loading the vectors: every shipped file is good, and a bad one is refused naming its file and
// the vector, before anything is played.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { VectorFileError, loadVectors } from './load-vectors.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const good = {
  id: 'keyed-x/one',
  doc: 'protocol.md#replies',
  about: 'one',
  client: { options: { addresses: ['n1'], identity: null }, steps: [{ call: 'acquire', id: 'a', name: 'x', lease_ms: 30000, wait_ms: 0 }] },
  server: [{ expect: 'A x 30 0' }, { send: 'A x 1' }],
  daemon: {},
};

function dirWith(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-vectors-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
  return dir;
}

function refusal(files: Record<string, unknown>): string {
  try {
    loadVectors(dirWith(files));
  } catch (error) {
    if (error instanceof VectorFileError) return error.message;
    throw error;
  }
  throw new Error('loaded');
}

describe('loadVectors', () => {
  it('loads every shipped vector, ids unique', () => {
    const vectors = loadVectors();
    expect(vectors.length).toBeGreaterThan(50);
    expect(new Set(vectors.map((vector) => vector.id)).size).toBe(vectors.length);
  });

  it('points every vector at a section of docs/protocol.md that exists', () => {
    const headings = readFileSync(fileURLToPath(new URL('../../docs/protocol.md', import.meta.url)), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('#'))
      .map((line) =>
        line
          .replace(/^#+\s*/, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      );
    const missing = loadVectors().filter((vector) => !headings.includes(vector.doc.replace(/^protocol\.md#/, '')));
    expect(missing.map((vector) => `${vector.id}: ${vector.doc}`)).toEqual([]);
  });

  it('loads a good file with its protocol and file name', () => {
    const [vector] = loadVectors(dirWith({ 'keyed-x.json': { area: 'keyed-x', protocol: 'keyed', vectors: [good] } }));
    expect(vector).toMatchObject({ id: 'keyed-x/one', protocol: 'keyed', file: 'keyed-x.json' });
  });

  it('names the file and the vector of a step it cannot read', () => {
    const bad = { ...good, server: [{ expect: 'A x 30 0', conn: 'c1', colour: 'red' }] };
    expect(refusal({ 'keyed-x.json': { area: 'keyed-x', protocol: 'keyed', vectors: [bad] } })).toMatch(/^keyed-x\.json: vector keyed-x\/one: server\.0/);
  });

  it('names a file that is not JSON', () => {
    expect(refusal({ 'keyed-x.json': '{ nope' })).toMatch(/^keyed-x\.json: /);
  });

  it('refuses an id used twice, a node that does not exist and an await of no call', () => {
    expect(refusal({ 'keyed-x.json': { area: 'keyed-x', protocol: 'keyed', vectors: [good, good] } })).toMatch(/id already used/);
    const noNode = { ...good, server: [{ send: 'M {node:n9}', conn: 'c1' }] };
    expect(refusal({ 'keyed-x.json': { area: 'keyed-x', protocol: 'keyed', vectors: [noNode] } })).toMatch(/\{node:n9\} names no node/);
    const noCall = { ...good, client: { options: { identity: null }, steps: [{ await: 'zz', outcome: { timeout: true }, within_ms: 10 }] } };
    expect(refusal({ 'keyed-x.json': { area: 'keyed-x', protocol: 'keyed', vectors: [noCall] } })).toMatch(/await of unknown call zz/);
  });

  it('refuses an id outside its file area', () => {
    expect(refusal({ 'keyed-y.json': { area: 'keyed-y', protocol: 'keyed', vectors: [good] } })).toMatch(/id must start with "keyed-y\/"/);
  });
});
