// The grant retry on a fake timer and a fake engine: one retry per tick, the engine's timer woken
// after each, and one log line per change of the refusal, never one per second.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TokensUnavailable } from '../../lib/tokens/token-contract.ts';
import { GRANT_RETRY_MS, GrantRetry, type RefusingEngine, type Repeat } from './grant-retry.ts';

type Refusal = ReturnType<RefusingEngine['grantRefusal']>;

function setup(initial: Refusal = null) {
  const calls: string[] = [];
  const logs: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  let refusal: Refusal = initial;
  let cause: TokensUnavailable | null = null;
  const engine: RefusingEngine = {
    grantRefusal: () => refusal,
    retryHeldGrants: () => void calls.push('retry'),
    get tokenRefusal() {
      return cause;
    },
  };
  const ticks: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
  const repeat: Repeat = (ms, fn) => {
    const t = { ms, fn, cancelled: false };
    ticks.push(t);
    return () => {
      t.cancelled = true;
    };
  };
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) });
  const retry = new GrantRetry({ engine, wake: () => void calls.push('wake'), tokenHighWater: () => 42n, logger, repeat });
  const tick = () => {
    for (const t of ticks) if (!t.cancelled) t.fn();
  };
  const refuse = (r: Refusal) => {
    refusal = r;
    cause = r === null ? null : new TokensUnavailable(r, { cause: new Error('ENOSPC') });
  };
  return { retry, calls, logs, ticks, tick, refuse };
}

describe('GrantRetry', () => {
  it('retries held grants once a second and wakes the engine timer after each retry', () => {
    const { calls, ticks, tick } = setup();
    expect(ticks.map((t) => t.ms)).toEqual([GRANT_RETRY_MS]);
    expect(GRANT_RETRY_MS).toBe(1_000);
    tick();
    tick();
    expect(calls).toEqual(['retry', 'wake', 'retry', 'wake']);
  });

  it('logs nothing while the refusal stays as it was', () => {
    const { logs, tick } = setup();
    tick();
    tick();
    expect(logs).toEqual([]);
  });

  it('logs a refusal once when it starts, and once when grants resume', () => {
    const { logs, tick, refuse } = setup();
    refuse('storage-unavailable');
    tick();
    tick();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 50,
      reason: 'storage-unavailable',
      msg: 'grants refused: the token ceiling cannot be written to the data dir (retried every second)',
    });
    expect(logs[0]?.err).toMatchObject({ message: 'ENOSPC' });
    refuse(null);
    tick();
    tick();
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatchObject({ level: 30, was: 'storage-unavailable', msg: 'grants resumed: the token ceiling can be stored again' });
  });

  it('logs tokens running out while it runs as an error of its own', () => {
    const { logs, tick, refuse } = setup();
    refuse('tokens-exhausted');
    tick();
    expect(logs).toEqual([expect.objectContaining({ level: 50, reason: 'tokens-exhausted', msg: 'fencing tokens exhausted: this node grants nothing more' })]);
  });

  it('says at start when the tokens are already exhausted, with the high water, and not again on the next tick', () => {
    const { logs, tick } = setup('tokens-exhausted');
    expect(logs).toEqual([
      expect.objectContaining({
        level: 50,
        tokenHighWater: '42',
        msg: 'fencing tokens exhausted: this node grants nothing; releases, probes and the console still work',
      }),
    ]);
    tick();
    expect(logs).toHaveLength(1);
  });

  it('stops retrying once stopped', () => {
    const { retry, calls, tick } = setup();
    retry.stop();
    tick();
    expect(calls).toEqual([]);
  });
});
