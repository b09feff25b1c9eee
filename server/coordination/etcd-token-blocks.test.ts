// Token blocks from etcd (issue 32, rule 5) against a real three-member etcd on loopback, each
// node a real lock engine with the etcd mode's token source and its own role lease: tokens are
// unique and rising across actives that take turns (one halted mid-block, as a crash leaves it),
// through a swap whose answer was lost, and past a ceiling key deleted by hand.
import type { Etcd3 } from 'etcd3';
import pino from 'pino';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { SuppliedTokenSource } from '../../lib/tokens/supplied-token-source.ts';
import { MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { EtcdRoleHolder } from './etcd-role-holder.ts';
import { NotRoleHolder } from './etcd-block-reserver.ts';
import { EtcdTokenBlocks, tokenBlocksOf } from './etcd-token-blocks.ts';

const PREFIX = 'baton/token-blocks-test';
const CEILING = `${PREFIX}/token-ceiling`;
const WAIT = { timeout: 20_000, interval: 5 };

interface TokenNode {
  id: string;
  holder: EtcdRoleHolder;
  blocks: EtcdTokenBlocks;
  tokens: SuppliedTokenSource;
  engine: LockEngine;
  /** How often the blocks said this node does not hold the role. */
  notHolder: number;
  /** What the blocks logged at error level. */
  errors: string[];
}

/** One node: a role holder, its engine's grant window from the holder, and tokens only from etcd blocks of 10. */
function tokenNode(cluster: EtcdCluster, id: string, blocksClient: Etcd3 = cluster.client()): TokenNode {
  const now = () => performance.now();
  const errors: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
  const node = { id, notHolder: 0, errors } as TokenNode;
  node.holder = new EtcdRoleHolder({
    client: cluster.client(),
    key: `${PREFIX}/active`,
    nodeId: id,
    ttlSeconds: 2,
    now,
    onEvent: (e) => {
      // The grant window is the holder's permission (rule 1); a window that opens hands on what waited.
      if (e.kind === 'until') node.engine.setGrantWindow(e.until);
      if (e.kind === 'released') node.engine.setGrantWindow(Number.NEGATIVE_INFINITY);
      node.engine.retryHeldGrants();
    },
  });
  onTestFinished(() => node.holder.halt());
  node.blocks = new EtcdTokenBlocks({
    client: blocksClient,
    prefix: PREFIX,
    lease: () => node.holder.leaseId,
    logger,
    size: 10n,
    onNotHolder: () => node.notHolder++,
    callTimeoutMs: 500,
  });
  onTestFinished(() => node.blocks.stop());
  node.tokens = new SuppliedTokenSource({
    supplier: node.blocks,
    store: new MemoryCeilingStore(),
    onStarved: () => node.engine.awaitTokens(),
    onSupplied: () => node.engine.tokensArrived(),
    onError: () => {},
  });
  node.engine = new LockEngine({ now }, node.tokens);
  node.engine.setGrantWindow(Number.NEGATIVE_INFINITY);
  node.engine.awaitTokens();
  return node;
}

/** A grant of a fresh lock on `node`, waited for if it queues; released at once. Its token. */
async function grant(node: TokenNode, name: string): Promise<bigint> {
  const claim = node.engine.acquire({ name, owner: new Owner(), protocol: 'keyed', client: 'k', leaseMs: 60_000, waitMs: 0, sliding: false });
  await vi.waitFor(() => expect(claim.state).toBe('holding'), WAIT);
  expect(node.engine.release(name, claim.token)).toBe('ok');
  return claim.token;
}

/** The node as the active: holds the role key, then takes a fresh block before its first grant. */
async function promote(node: TokenNode): Promise<void> {
  await vi.waitFor(() => expect(node.holder.mayGrant()).toBe(true), WAIT);
  await node.tokens.reserveAhead();
}

const rising = (t: bigint[]) => t.every((x, i) => i === 0 || x > (t[i - 1] as bigint));

// Each test waits out lease expiries and etcd call deadlines on a shared 2-core machine.
describe('token blocks from etcd', { timeout: 60_000 }, () => {
  it('two actives taking turns by their role leases, one halted mid-block: every token is unique and rising across them', async () => {
    const cluster = await EtcdCluster.start();
    const nodes = [tokenNode(cluster, 'a'), tokenNode(cluster, 'b')];
    for (const n of nodes) n.holder.start();
    const issued: bigint[] = [];
    const terms: string[] = [];
    await vi.waitFor(() => expect(nodes.some((n) => n.holder.holding)).toBe(true), WAIT);
    for (let term = 0; term < 6; term++) {
      const active = nodes.find((n) => n.holder.holding) as TokenNode;
      const other = nodes.find((n) => n !== active) as TokenNode;
      terms.push(active.id);
      await promote(active);
      // 25 grants from blocks of 10: refills cross block ends; the term ends mid-block.
      for (let i = 0; i < 25; i++) issued.push(await grant(active, `lock-${term}-${i}`));
      // A handoff (its lease revoked), or a crash (halted: the key stays until its lease expires).
      if (term % 2 === 0) await active.holder.resign();
      else active.holder.halt();
      await vi.waitFor(() => expect(other.holder.holding).toBe(true), WAIT);
      active.holder.start();
    }
    expect(terms.every((t, i) => i === 0 || t !== terms[i - 1])).toBe(true);
    expect(issued).toHaveLength(150);
    expect(new Set(issued).size).toBe(150);
    expect(rising(issued)).toBe(true);
    expect(BigInt((await cluster.client().get(CEILING).string()) ?? '0')).toBeGreaterThanOrEqual(issued.at(-1) as bigint);
  });

  it('a swap whose answer was lost is never issued from: the next block is above it, and the grant that waited meanwhile gets it', async () => {
    const cluster = await EtcdCluster.start();
    const proxies = await cluster.proxies();
    // One endpoint: its connection is open before the cut (a new one could not be set up without answers).
    const a = tokenNode(cluster, 'a', cluster.client([proxies.endpoints[0] as string]));
    a.holder.start();
    await promote(a);
    const issued: bigint[] = [];
    for (let i = 0; i < 4; i++) issued.push(await grant(a, `before-${i}`));
    // etcd's answers stop coming back to the reserver (its requests still arrive); the holder's link is not cut.
    for (const p of proxies.proxies) p.cut({ direction: 'from-target' });
    issued.push(await grant(a, 'half')); // the 5th token: the refill's swap is sent now
    const direct = cluster.client();
    await vi.waitFor(async () => expect(await direct.get(CEILING).string()).toBe('20'), WAIT); // applied: 11..20 is taken
    for (let i = 0; i < 5; i++) issued.push(await grant(a, `rest-${i}`));
    const claim = a.engine.acquire({ name: 'late', owner: new Owner(), protocol: 'keyed', client: 'k', leaseMs: 60_000, waitMs: 0, sliding: false });
    expect(claim.state).toBe('waiting'); // the block is spent: the request waits, it does not fail
    // The reserver gave up on the swap (a whole round of tries failed) before the link heals.
    await vi.waitFor(() => expect(a.errors.join('')).toContain('no token block reserved in etcd yet'), WAIT);
    for (const p of proxies.proxies) p.heal();
    await vi.waitFor(() => expect(claim.state).toBe('holding'), WAIT);
    issued.push(claim.token);
    expect(issued).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n, 21n]);
    expect(await direct.get(CEILING).string()).toBe('30');
  });

  it('a ceiling key deleted by hand: the active’s tokens go on rising, and so do the next active’s, from its floor', async () => {
    const cluster = await EtcdCluster.start();
    const [a, b] = [tokenNode(cluster, 'a'), tokenNode(cluster, 'b')];
    a.holder.start();
    await promote(a);
    const direct = cluster.client();
    const issued: bigint[] = [];
    for (let i = 0; i < 12; i++) issued.push(await grant(a, `a-${i}`));
    await direct.delete().key(CEILING);
    for (let i = 0; i < 20; i++) issued.push(await grant(a, `a-after-${i}`));
    expect(rising(issued)).toBe(true);
    // Deleted again, then a failover: the successor's floor is the highest token its stream carried.
    await direct.delete().key(CEILING);
    await a.holder.resign();
    b.holder.start();
    b.tokens.raiseFloor(issued.at(-1) as bigint);
    await promote(b);
    for (let i = 0; i < 12; i++) issued.push(await grant(b, `b-${i}`));
    expect(issued).toHaveLength(44);
    expect(rising(issued)).toBe(true);
  });

  it('a node whose lease is not on the role key gets no block and says so (the core steps it out)', async () => {
    const cluster = await EtcdCluster.start();
    const [a, b] = [tokenNode(cluster, 'a'), tokenNode(cluster, 'b')];
    a.holder.start();
    await promote(a);
    b.holder.start();
    await vi.waitFor(() => expect(b.holder.leaseId).not.toBeNull(), WAIT);
    await expect(b.tokens.reserveAhead()).rejects.toThrow(/not the holder/);
    expect(b.notHolder).toBe(1);
    expect(b.tokens.supplied).toBe(false);
    expect(await cluster.client().get(CEILING).string()).toBe('10');
  });

  it('a node’s blocks ask etcd nothing while it does not hold the role, and a refusal resigns its lease so it steps out and campaigns again', async () => {
    const cluster = await EtcdCluster.start();
    const released: string[] = [];
    // A long TTL: the holder's own keep-alive (every 2 s) does not find the key gone before the reservation does.
    const holder = new EtcdRoleHolder({
      client: cluster.client(),
      key: `${PREFIX}/active`,
      nodeId: 'a',
      ttlSeconds: 6,
      now: () => performance.now(),
      onEvent: (e) => {
        if (e.kind === 'released') released.push(e.why);
      },
    });
    onTestFinished(() => holder.halt());
    const blocks = tokenBlocksOf({ client: cluster.client(), holder, resign: () => holder.resign() }, PREFIX, pino({ level: 'silent' }), 10n);
    onTestFinished(() => blocks.stop());
    // Someone else holds the role: the node has a lease (it campaigns) but asks etcd for no block.
    const direct = cluster.client();
    await direct.put(`${PREFIX}/active`).value('someone-else');
    holder.start();
    await vi.waitFor(() => expect(holder.leaseId).not.toBeNull(), WAIT);
    await expect(blocks.reserve(0n)).rejects.toBeInstanceOf(NotRoleHolder);
    expect(blocks.tries).toBe(0);
    await direct.delete().key(`${PREFIX}/active`);
    await vi.waitFor(() => expect(holder.mayGrant()).toBe(true), WAIT);
    expect(await blocks.reserve(0n)).toEqual({ first: 1n, last: 10n });
    const lease = holder.leaseId;
    // The role key is put under no lease by hand: the node no longer holds it, though its holder has not looked yet.
    await direct.put(`${PREFIX}/active`).value('someone-else');
    await expect(blocks.reserve(10n)).rejects.toBeInstanceOf(NotRoleHolder);
    await vi.waitFor(() => expect(released).toEqual(['resigned']), WAIT);
    // Campaigning again, with a new lease.
    await vi.waitFor(() => expect([null, lease]).not.toContain(holder.leaseId), WAIT);
    expect(await direct.get(CEILING).string()).toBe('10');
  });
});
