// The TypeScript client runs the conformance kit like any other client: the kit server (in
// process) plays each vector's server side on real sockets, KeyedClient or SessionClient is
// driven through the vector's client steps, and both the outcomes and the kit's PASS must hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKitServer } from './kit-server.ts';
import type { KitServer } from './kit-server.ts';
import { loadVectors } from './load-vectors.ts';
import { RawConn } from './testing/raw-conn.ts';
import { runClientSteps } from './testing/ts-client-steps.ts';

const vectors = loadVectors();
let kit: KitServer;

beforeAll(async () => {
  kit = await startKitServer({ host: '127.0.0.1', port: 0, vectors });
});
afterAll(async () => {
  await kit.close();
});

/** `READY n1=127.0.0.1:5000 n2=...` as node -> address. */
function readyAddresses(line: string): Map<string, string> {
  const [verb, ...pairs] = line.split(' ');
  if (verb !== 'READY') throw new Error(`the kit server answered ${JSON.stringify(line)}`);
  return new Map(pairs.map((pair) => pair.split('=') as [string, string]));
}

describe('the TypeScript client passes every vector of the kit', () => {
  it.each(vectors.map((vector) => [vector.id, vector] as const))('%s', async (id, vector) => {
    const control = await RawConn.open(kit.port);
    try {
      control.write(`PLAY ${id}\n`);
      const ready = await control.line(5_000);
      if (ready instanceof Error) throw ready;
      const failures = await runClientSteps(vector, readyAddresses(ready));
      control.write('DONE\n');
      const verdict = await control.line(5_000);
      expect({ failures, verdict }).toEqual({ failures: [], verdict: 'PASS' });
    } finally {
      control.destroy();
    }
  });
});
