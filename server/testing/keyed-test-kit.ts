// What the keyed-server test files share: a keyed protocol stack on port 0, raw line clients,
// and the teardown that closes them after each test (each file registers runKeyedTeardown).
import { expect } from 'vitest';
import { KEYED_REFUSAL, KeyedConnection } from '../lines/keyed-connection.ts';
import { LineClient } from './line-client.ts';
import { startProtocolStack, type ProtocolStack, type ProtocolStackOptions } from './protocol-stack.ts';

export const teardown: Array<() => Promise<void> | void> = [];

export async function runKeyedTeardown(): Promise<void> {
  for (const fn of teardown.splice(0).reverse()) await fn();
}

export async function startKeyed(opts: ProtocolStackOptions & { maxBacklog?: number } = {}): Promise<ProtocolStack<KeyedConnection>> {
  const stack = await startProtocolStack(
    (transport, ctx, engine) => new KeyedConnection(transport, ctx, engine, { maxBacklog: opts.maxBacklog ?? 1_000 }),
    KEYED_REFUSAL,
    opts,
  );
  teardown.push(stack.stop);
  return stack;
}

export async function client(port: number): Promise<LineClient> {
  const c = await LineClient.open(port);
  teardown.push(() => c.close());
  return c;
}

/** The token of an `A <key> <token>` grant line. */
export function tokenOf(line: string): bigint {
  const parts = line.split(' ');
  expect(parts[0]).toBe('A');
  return BigInt(parts[2] as string);
}
