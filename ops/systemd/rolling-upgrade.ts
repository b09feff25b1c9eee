// A rolling upgrade of a real three-node cluster, as docs/operations.md ("Upgrading one node at a
// time") tells an operator to do it, while clients hold claims: the standbys first, each stopped
// with SIGTERM (what `systemctl restart baton` sends) and started again, waiting until it is an
// in-sync standby; then the active, handed off by the API to an upgraded standby, stopped and
// started again, after which the role returns to it by priority. Meanwhile keyed grants and
// resumable session claims are held and a keyed and a session client take and release a lock
// in a loop, recording every token. Used by rolling-upgrade.test.ts (one build) and by
// rolling-upgrade-two-builds.ts (an older build upgraded to this one, run by hand).
import { KeyedClient, SessionClient, type KeyedGrant, type SessionLease } from '../../lib/client/index.ts';
import { activeOf, type Cluster, holderOn, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import type { NodeProcess } from '../../server/testing/node-process.ts';

export const HELD = 8;
const LEASE_MS = 60_000;
const SESSION_LEASE_MS = 5_000;

export interface HeldClaims {
  keyed: KeyedGrant[];
  sessions: SessionLease[];
}

/** HELD keyed grants (long leases) and HELD resumable session claims, on every node's address. */
export async function holdClaims(cluster: Cluster): Promise<HeldClaims> {
  const keyedClient = cluster.keyedClient([]);
  const sessionClient = cluster.sessionClient([]);
  const keyed: KeyedGrant[] = [];
  const sessions: SessionLease[] = [];
  for (let i = 0; i < HELD; i++) keyed.push(await keyedClient.acquire(`upgrade-keyed-${i}`, { lease: LEASE_MS, wait: 5_000 }));
  for (let i = 0; i < HELD; i++) sessions.push(await sessionClient.open(`upgrade-session-${i}`, { lease: SESSION_LEASE_MS, wait: 5_000 }));
  for (const s of sessions) cluster.defer(() => s.close());
  return { keyed, sessions };
}

/** Where each held claim stands on `node`: the names whose holder there does not have the original token. */
export async function claimsMissing(node: NodeProcess, held: HeldClaims): Promise<string[]> {
  const missing: string[] = [];
  const check = async (name: string, token: bigint) => {
    const holder = await holderOn(node, name);
    if (holder?.token !== token.toString()) missing.push(`${name} (token ${token}, now ${holder?.token ?? 'free'})`);
  };
  for (const [i, g] of held.keyed.entries()) await check(`upgrade-keyed-${i}`, g.token);
  for (const [i, s] of held.sessions.entries()) await check(`upgrade-session-${i}`, s.token);
  return missing;
}

export interface Churn {
  /** Every token granted, in the order granted, per protocol. */
  keyedTokens: bigint[];
  sessionTokens: bigint[];
  /** Attempts that failed (a client between nodes); they are retried, not counted as grants. */
  errors: string[];
  stop(): Promise<void>;
}

/** A keyed and a session client taking and releasing one lock each, back to back, until stopped. */
export function churn(cluster: Cluster): Churn {
  const keyedClient = new KeyedClient({ reconnectInterval: 250, addresses: cluster.lockAddresses() });
  const sessionClient = new SessionClient({ addresses: cluster.sessionAddresses() });
  const result: Churn = { keyedTokens: [], sessionTokens: [], errors: [], stop: async () => undefined };
  let stopped = false;
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  const keyedLoop = (async () => {
    while (!stopped) {
      try {
        const grant = await keyedClient.acquire('upgrade-churn-keyed', { lease: 5_000, wait: 10_000 });
        result.keyedTokens.push(grant.token);
        await keyedClient.release('upgrade-churn-keyed', grant.token);
      } catch (error) {
        result.errors.push(`keyed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await pause();
    }
  })();
  const sessionLoop = (async () => {
    while (!stopped) {
      try {
        const lease = await sessionClient.open('upgrade-churn-session', { lease: SESSION_LEASE_MS, wait: 10_000 });
        result.sessionTokens.push(lease.token);
        await lease.close();
      } catch (error) {
        result.errors.push(`session: ${error instanceof Error ? error.message : String(error)}`);
      }
      await pause();
    }
  })();
  result.stop = async () => {
    stopped = true;
    await Promise.all([keyedLoop, sessionLoop]);
    await Promise.all([keyedClient.close(), sessionClient.close()]);
  };
  cluster.defer(() => result.stop());
  return result;
}

/** Indexes where a token is not above the one before it: empty when the sequence only increases. */
export function notIncreasing(tokens: bigint[]): number[] {
  return tokens.flatMap((t, i) => (i > 0 && t <= (tokens[i - 1] as bigint) ? [i] : []));
}

async function theActive(cluster: Cluster): Promise<string> {
  return waitFor(
    async () => {
      const ids = await activeOf(cluster);
      return ids.length === 1 ? ids[0] : undefined;
    },
    { timeoutMs: 10_000, what: 'exactly one active node' },
  );
}

export interface UpgradeStep {
  node: string;
  wasActive: boolean;
  /** What the step did, for the report. */
  log: string;
  /** Held claims not found with their token on the active after the step. */
  missing: string[];
}

/**
 * Upgrades `order`'s nodes one at a time. `beforeStart` runs between the stop and the start (put
 * the new build in place); a node that is active is first handed off to the next node of
 * `order` that is not itself. Each step ends once the cluster has settled with the node back as
 * an in-sync standby (or, for the highest-priority node, active again).
 */
export async function rollingUpgrade(cluster: Cluster, held: HeldClaims, order: string[], beforeStart: (node: NodeProcess) => void): Promise<UpgradeStep[]> {
  const steps: UpgradeStep[] = [];
  for (const id of order) {
    const node = cluster.node(id);
    const active = await theActive(cluster);
    const wasActive = active === id;
    const parts: string[] = [];
    let serving = active;
    if (wasActive) {
      const target = order.find((other) => other !== id) as string;
      const reply = await node.post('/api/v1/cluster/handoff', { target });
      if (reply.status !== 200) throw new Error(`handoff ${id} -> ${target} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
      await waitFor(async () => (await theActive(cluster)) === target, { timeoutMs: 10_000, what: `${target} active after the handoff` });
      parts.push(`handed off to ${target}`);
      serving = target;
    }
    const code = await node.sigterm();
    if (code !== 0) throw new Error(`node ${id} exited ${code} on SIGTERM`);
    parts.push('stopped (exit 0)');
    beforeStart(node);
    await node.restart();
    parts.push('started');
    // The highest-priority node takes the role back after the return hold-down.
    const settledOn = node.priority === 0 ? id : serving;
    await waitSettled(cluster, settledOn, 30_000);
    parts.push(`settled with ${settledOn} active`);
    steps.push({ node: id, wasActive, log: parts.join(', '), missing: await claimsMissing(cluster.node(settledOn), held) });
  }
  return steps;
}
