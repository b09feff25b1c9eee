// The script player without sockets: connections, lines and closes are plain calls, and what it
// writes is recorded. Each test is one rule of conformance/README.md's server script.
import { describe, expect, it } from 'vitest';
import { ScriptPlayer } from './script-player.ts';
import type { PlayerWire } from './script-player.ts';
import type { ServerStep, Vector } from './vector-schema.ts';

interface Harness {
  readonly player: ScriptPlayer;
  readonly sent: string[];
  readonly closed: string[];
  /** Fires the pending sleep, if any. */
  wake(): void;
}

function play(server: ServerStep[], extra: Partial<Vector> = {}): Harness {
  const sent: string[] = [];
  const closed: string[] = [];
  let timer: (() => void) | undefined;
  const wire: PlayerWire = {
    send: (conn, text) => sent.push(`${conn}:${text}`),
    close: (conn) => closed.push(`close ${conn}`),
    reset: (conn) => closed.push(`reset ${conn}`),
    after: (_ms, then) => {
      timer = then;
    },
  };
  const vector: Vector = { id: 'a/b', doc: 'd', about: 'a', client: { options: { identity: null }, steps: [] }, server, daemon: false, ...extra };
  const addresses = new Map([
    ['n1', '127.0.0.1:1001'],
    ['n2', '127.0.0.1:1002'],
  ]);
  const player = new ScriptPlayer(vector, addresses, wire);
  player.start();
  return {
    player,
    sent,
    closed,
    wake: () => {
      const then = timer;
      timer = undefined;
      then?.();
    },
  };
}

describe('ScriptPlayer', () => {
  it('passes when every expected line came and every send went out', () => {
    const h = play([{ expect: 'A x 30 0', conn: 'c1' }, { send: 'A x 1' }, { expect: 'R x 1' }, { send: 'R x OK' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A x 30 0');
    h.player.received(1, 'R x 1');
    expect(h.sent).toEqual(['1:A x 1\n', '1:R x OK\n']);
    expect(h.player.verdict()).toBe('PASS');
  });

  it('fails naming the step it waits on and what arrived instead', () => {
    const h = play([{ expect: 'A x 30 0' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A y 30 0');
    expect(h.player.verdict()).toBe('FAIL server step 1 {"expect":"A x 30 0"} never completed; instead: an unnamed connection to n1 sent "A y 30 0"');
  });

  it('reads one connection in order: a line behind an unexpected one is not taken', () => {
    const h = play([{ expect: 'A b 30 0' }, { expect: 'A a 30 0' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A a 30 0');
    h.player.received(1, 'A b 30 0');
    expect(h.player.settled()).toBe(false);
  });

  it('takes expect_any_order lines in any order', () => {
    const h = play([{ expect_any_order: ['A a 30 0', 'A b 30 0'], conn: 'c1' }, { send: 'A b 1' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A b 30 0');
    h.player.received(1, 'A a 30 0');
    expect(h.sent).toEqual(['1:A b 1\n']);
    expect(h.player.verdict()).toBe('PASS');
  });

  it('fails on a stray line on a named connection once the script is done', () => {
    const h = play([{ expect: 'A x 30 0', conn: 'c1' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A x 30 0');
    h.player.received(1, 'A x 30 0');
    expect(h.player.verdict()).toBe('FAIL unexpected line from the client on c1: "A x 30 0"');
  });

  it('does not count lines on a connection no step named, nor on one the script closed', () => {
    const h = play([{ expect: 'A x 30 0', conn: 'c1' }, { close: 'c1' }, { expect: 'A x 30 0', conn: 'c2' }, { send: 'A x 1' }]);
    h.player.connected(1, 'n1');
    h.player.connected(2, 'n1');
    h.player.connected(3, 'n1');
    h.player.received(3, 'I spare');
    h.player.received(1, 'A x 30 0');
    h.player.received(1, 'A x 30 0'); // sent before the client saw the close
    h.player.received(2, 'A x 30 0');
    expect(h.closed).toEqual(['close 1']);
    expect(h.sent).toEqual(['2:A x 1\n']);
    expect(h.player.verdict()).toBe('PASS');
  });

  it('lets two labels name one connection, so one vector fits pipelining and round-robin clients', () => {
    const h = play([
      { expect: 'A a 30 0', conn: 'p' },
      { expect: 'A b 30 0', conn: 'q' },
      { send: 'A b 2', conn: 'q' },
      { send: 'A a 1', conn: 'p' },
    ]);
    h.player.connected(1, 'n1');
    h.player.received(1, 'A a 30 0');
    h.player.received(1, 'A b 30 0');
    expect(h.sent).toEqual(['1:A b 2\n', '1:A a 1\n']);
  });

  it('skips ignored lines only when the step does not want them', () => {
    const h = play([{ expect: 'HEARTBEAT', conn: 'c1' }, { expect: 'ACQUIRE x 1' }], { ignore: ['HEARTBEAT'] });
    h.player.connected(1, 'n1');
    h.player.received(1, 'HEARTBEAT');
    h.player.received(1, 'HEARTBEAT');
    h.player.received(1, 'ACQUIRE x 1');
    h.player.received(1, 'HEARTBEAT');
    expect(h.player.verdict()).toBe('PASS');
  });

  it('binds a claim key at its first match and requires the same key after', () => {
    const key = 'ab'.repeat(16);
    const h = play([{ expect: 'ACQUIRE x 1 {key:k}' }, { expect: 'RESUME x {key:k}' }]);
    h.player.connected(1, 'n1');
    h.player.received(1, `ACQUIRE x 1 ${key}`);
    h.player.received(1, `RESUME x ${'cd'.repeat(16)}`);
    expect(h.player.settled()).toBe(false);
    const again = play([{ expect: 'ACQUIRE x 1 {key:k}' }, { expect: 'RESUME x {key:k}' }]);
    again.player.connected(1, 'n1');
    again.player.received(1, `ACQUIRE x 1 ${key}`);
    again.player.received(1, `RESUME x ${key}`);
    expect(again.player.verdict()).toBe('PASS');
  });

  it('replaces {node:n2} with that node address and accepts on the node named', () => {
    const h = play([{ accept: 's', node: 'n1' }, { send: 'M {node:n2}' }, { expect: 'A x 30 0', node: 'n2' }]);
    h.player.connected(1, 'n2');
    expect(h.sent).toEqual([]);
    h.player.connected(2, 'n1');
    expect(h.sent).toEqual(['2:M 127.0.0.1:1002\n']);
    h.player.received(1, 'A x 30 0');
    expect(h.player.verdict()).toBe('PASS');
  });

  it('waits out a sleep before the next step', () => {
    const h = play([{ accept: 'c1' }, { sleep_ms: 50 }, { send: 'ACQUIRED 1' }]);
    h.player.connected(1, 'n1');
    expect(h.sent).toEqual([]);
    h.wake();
    expect(h.sent).toEqual(['1:ACQUIRED 1\n']);
  });

  it('waits for the client to close, and skips steps meant for the real daemon', () => {
    const h = play([{ accept: 'c1' }, { daemon_only: [{ accept: 'o' }] }, { admin: 'kick', lock: 'x' }, { expect_close: 'c1' }]);
    h.player.connected(1, 'n1');
    expect(h.player.settled()).toBe(false);
    h.player.closed(1);
    expect(h.player.verdict()).toBe('PASS');
  });

  it('fails a send with no connection to go to', () => {
    const h = play([{ send: 'A x 1' }]);
    expect(h.player.verdict()).toBe('FAIL server step 1: a send with no connection to go to (no conn, no expect or accept before it)');
  });
});
