// The TypeScript runner's half of a vector: drives KeyedClient or SessionClient through the
// vector's client steps and says which steps did not reach their outcome. The same loop a runner
// in any language has (conformance/CLIENT-AUTHORS.md).
import { isDeepStrictEqual } from 'node:util';
import { BatonError, KeyedClient, KeyedGrant, LockTimeoutError, SessionClient } from '../../../lib/client/index.ts';
import type { SessionLease } from '../../../lib/client/index.ts';
import type { ClientStep, LoadedVector, Outcome } from '../vector-schema.ts';

type Settled = { kind: 'pending' } | { kind: 'ok'; value: unknown } | { kind: 'failed'; error: unknown };

interface Call {
  readonly promise: Promise<void>;
  settled: Settled;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs every step; returns one line per step that failed (empty: the client did it all). */
export async function runClientSteps(vector: LoadedVector, addresses: ReadonlyMap<string, string>): Promise<string[]> {
  const options = vector.client.options;
  const resolved = (options.addresses ?? ['n1']).map((node) => addresses.get(node) ?? node);
  const named = { clientName: options.identity };
  const connectTimeout = options.connect_timeout_ms;
  const keyed =
    vector.protocol === 'keyed'
      ? new KeyedClient({
          addresses: resolved,
          ...named,
          ...(options.reconnect_interval_ms === undefined ? {} : { reconnectInterval: options.reconnect_interval_ms }),
          ...(options.release_retry_for_ms === undefined ? {} : { releaseRetryFor: options.release_retry_for_ms }),
          ...(options.release_retry_interval_ms === undefined ? {} : { releaseRetryInterval: options.release_retry_interval_ms }),
          ...(connectTimeout === undefined ? {} : { connectTimeout }),
        })
      : undefined;
  const session =
    vector.protocol === 'session'
      ? new SessionClient({
          addresses: resolved,
          ...named,
          resumable: options.resumable ?? false,
          ...(options.min_heartbeat_interval_ms === undefined ? {} : { minHeartbeatInterval: options.min_heartbeat_interval_ms }),
          ...(options.max_park_ms === undefined ? {} : { maxPark: options.max_park_ms }),
          ...(connectTimeout === undefined ? {} : { connectTimeout }),
        })
      : undefined;
  const calls = new Map<string, Call>();
  const failures: string[] = [];
  const track = (id: string, promise: Promise<unknown>): void => {
    const call: Call = {
      settled: { kind: 'pending' },
      promise: promise.then(
        (value) => {
          call.settled = { kind: 'ok', value };
        },
        (error: unknown) => {
          call.settled = { kind: 'failed', error };
        },
      ),
    };
    calls.set(id, call);
  };
  const resultOf = (id: string): unknown => {
    const settled = calls.get(id)?.settled;
    return settled?.kind === 'ok' ? settled.value : undefined;
  };

  const run = async (step: ClientStep): Promise<string | undefined> => {
    if ('call' in step) {
      if (step.call === 'acquire' || step.call === 'try_acquire') {
        if (keyed === undefined) return 'acquire on a session vector';
        const wait = step.call === 'try_acquire' ? 1 : step.wait_ms === 0 ? undefined : step.wait_ms;
        track(step.id, keyed.acquire(step.name, { lease: step.lease_ms, ...(wait === undefined ? {} : { wait }) }));
      } else if (step.call === 'hold') {
        if (session === undefined) return 'hold on a keyed vector';
        track(step.id, session.open(step.name, { lease: step.lease_ms, ...(step.wait_ms === 0 ? {} : { wait: step.wait_ms }) }));
      } else {
        const of = resultOf(step.of);
        if (of instanceof KeyedGrant) track(step.id, of.release());
        else if (isLease(of))
          track(
            step.id,
            of.close().then(() => true),
          );
        else return `release of ${step.of}, which holds nothing`;
      }
      return undefined;
    }
    if ('await' in step) {
      const call = calls.get(step.await);
      if (call === undefined) return 'no such call';
      await Promise.race([call.promise, sleep(step.within_ms)]);
      const got = outcomeOf(call.settled);
      if (got === undefined) return `not finished within ${step.within_ms} ms`;
      const wanted = step.outcome_any ?? (step.outcome === undefined ? [] : [step.outcome]);
      return wanted.some((outcome) => isDeepStrictEqual(outcome, got)) ? undefined : `got ${JSON.stringify(got)}`;
    }
    if ('await_lost' in step) {
      const lease = resultOf(step.await_lost);
      if (!isLease(lease)) return 'holds nothing';
      await Promise.race([new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true })), sleep(step.within_ms)]);
      if (!lease.signal.aborted) return `not lost within ${step.within_ms} ms`;
      const reason: unknown = lease.signal.reason;
      const code = reason instanceof BatonError ? reason.code : String(reason);
      return step.code === null || step.code === code ? undefined : `lost with ${code}`;
    }
    if ('not_lost' in step) {
      const lease = resultOf(step.not_lost);
      if (!isLease(lease)) return 'holds nothing';
      await sleep(step.for_ms);
      return lease.signal.aborted ? `lost: ${String(lease.signal.reason)}` : undefined;
    }
    if ('sleep_ms' in step) {
      await sleep(step.sleep_ms);
      return undefined;
    }
    await keyed?.close();
    await session?.close();
    return undefined;
  };

  try {
    for (const [index, step] of vector.client.steps.entries()) {
      const problem = await run(step);
      if (problem !== undefined) failures.push(`client step ${index + 1} ${JSON.stringify(step)}: ${problem}`);
    }
  } finally {
    await keyed?.close();
    await session?.close();
    await Promise.all([...calls.values()].map((call) => call.promise));
  }
  return failures;
}

function isLease(value: unknown): value is SessionLease {
  return typeof value === 'object' && value !== null && 'signal' in value && 'close' in value;
}

function outcomeOf(settled: Settled): Outcome | undefined {
  if (settled.kind === 'pending') return undefined;
  if (settled.kind === 'failed') {
    const error = settled.error;
    if (error instanceof LockTimeoutError) return { timeout: true };
    if (error instanceof BatonError) return { error: error.code };
    return { error: `not a BatonError: ${String(error)}` };
  }
  const value = settled.value;
  if (value instanceof KeyedGrant) return { granted: value.token.toString() };
  if (isLease(value)) return { granted: value.token.toString() };
  if (typeof value === 'boolean') return { released: value };
  return { error: `unexpected result ${String(value)}` };
}
