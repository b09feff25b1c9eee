// The real-daemon check: every vector marked `daemon` is played from the client's side against a
// fresh in-process `baton serve --no-console` (tokens count from 1, or from --token-floor), and
// the daemon's bytes must be the script's sends. A vector that says something the daemon does
// not do fails here, so the vectors cannot drift from Baton.
import { afterEach, describe, expect, it } from 'vitest';
import { countOption, maxParkOption, positiveDurationOption, tokenFloorOption } from '../cli/cli-options.ts';
import { startDaemon } from '../daemon/daemon.ts';
import type { Daemon, DaemonOptions } from '../daemon/daemon.ts';
import { loadVectors } from './load-vectors.ts';
import { playAgainstDaemon, sameReply } from './testing/daemon-side.ts';
import { nodesOf } from './vector-schema.ts';

const teardown: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step();
});

/** The `baton serve` flags a vector may pass, read by the CLI's own parsers. */
const FLAGS: Record<string, (text: string) => Partial<DaemonOptions>> = {
  '--token-floor': (text) => ({ tokenFloor: tokenFloorOption(text) }),
  '--max-backlog': (text) => ({ maxBacklog: countOption(text) }),
  '--max-connections': (text) => ({ maxConnections: countOption(text) }),
  '--io-timeout': (text) => ({ ioTimeoutMs: positiveDurationOption(text) }),
  '--max-park': (text) => ({ maxParkMs: maxParkOption(text) }),
};

function daemonOptions(args: readonly string[]): Partial<DaemonOptions> {
  let options: Partial<DaemonOptions> = {};
  for (let at = 0; at < args.length; at += 2) {
    const flag = args[at] ?? '';
    const parse = FLAGS[flag];
    const value = args[at + 1];
    if (parse === undefined || value === undefined) throw new Error(`daemon.args: ${flag} is not a flag the check knows (${Object.keys(FLAGS).join(', ')})`);
    options = { ...options, ...parse(value) };
  }
  return options;
}

async function daemon(args: readonly string[]): Promise<Daemon> {
  const d = await startDaemon({
    host: '127.0.0.1',
    lockPort: 0,
    sessionPort: 0,
    httpPort: 0,
    dataDir: null,
    drainMs: 0,
    console: 'probes',
    ...daemonOptions(args),
  });
  teardown.push(() => d.shutdown());
  return d;
}

const vectors = loadVectors();
const checked = vectors.filter((vector) => vector.daemon !== false);

describe('the real daemon does what every daemon-checked vector says', () => {
  it('checks a good share of the vectors', () => {
    expect(checked.length).toBeGreaterThan(vectors.length / 3);
  });

  it.each(checked.map((vector) => [vector.id, vector] as const))('%s', async (_id, vector) => {
    expect(nodesOf(vector), 'a daemon-checked vector has one node').toHaveLength(1);
    const setup = vector.daemon === false ? {} : vector.daemon;
    const d = await daemon(setup.args ?? []);
    const port = vector.protocol === 'keyed' ? d.lockAddress.port : d.sessionAddress.port;
    const problem = await playAgainstDaemon(vector, { port, httpPort: d.httpAddress.port, adminToken: d.adminToken, shutdown: () => void d.shutdown() });
    expect(problem).toBeUndefined();
  });
});

describe('the check compares what it must', () => {
  it('compares only the code of an E line unless the step asks for the text', () => {
    expect(sameReply('E A x bad-lease any words', 'E A x bad-lease bad lease: a decimal', false)).toBe(true);
    expect(sameReply('E A x bad-lease any words', 'E A x bad-wait bad lease', false)).toBe(false);
    expect(sameReply('E A x bad-lease any words', 'E A x bad-lease bad lease', true)).toBe(false);
    expect(sameReply('ERROR 0x03 lease expired', 'ERROR 0x03 silent too long', false)).toBe(true);
    expect(sameReply('ERROR 0x03 lease expired', 'ERROR 0x04 lease expired', false)).toBe(false);
  });

  it('compares every other line byte for byte', () => {
    expect(sameReply('A x 1', 'A x 1', false)).toBe(true);
    expect(sameReply('A x 1', 'A x 2', false)).toBe(false);
    expect(sameReply('R x OK', 'R x OK ', false)).toBe(false);
  });

  it('refuses a daemon flag it does not know', () => {
    expect(() => daemonOptions(['--no-such-flag', '1'])).toThrow(/not a flag the check knows/);
  });
});
