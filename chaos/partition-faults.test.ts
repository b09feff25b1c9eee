import { describe, expect, it } from 'vitest';
import type { NodeProcess } from '../server/testing/cluster-harness.ts';
import type { Cut } from '../server/testing/tcp-fault-proxy.ts';
import { cutLink } from './partition-faults.ts';

/** Nodes a, b, c (priority 0, 1, 2) whose proxies record the cuts made on them. */
function nodes(): { cuts: Record<string, Cut[]>; a: NodeProcess; b: NodeProcess; c: NodeProcess } {
  const cuts: Record<string, Cut[]> = { a: [], b: [], c: [] };
  const node = (id: string, priority: number) => ({ id, priority, proxy: { cut: (c: Cut) => cuts[id]?.push(c) } }) as unknown as NodeProcess;
  return { cuts, a: node('a', 0), b: node('b', 1), c: node('c', 2) };
}

describe('cutLink (a peer link runs through the proxy of its higher-priority node, dialled by the other)', () => {
  it("cuts a-c at a's proxy, for c's connections only", () => {
    const { cuts, a, c } = nodes();
    cutLink(a, c, 'both');
    cutLink(c, a, 'both');
    expect(cuts).toEqual({
      a: [
        { direction: 'both', from: 'c' },
        { direction: 'both', from: 'c' },
      ],
      b: [],
      c: [],
    });
  });

  it("holds a's messages to b (from the target, a) or b's to a (to the target), whichever side is named first", () => {
    const { cuts, a, b } = nodes();
    cutLink(a, b, 'x-to-y');
    cutLink(b, a, 'y-to-x');
    cutLink(a, b, 'y-to-x');
    cutLink(b, a, 'x-to-y');
    expect(cuts.a).toEqual([
      { direction: 'from-target', from: 'b' },
      { direction: 'from-target', from: 'b' },
      { direction: 'to-target', from: 'b' },
      { direction: 'to-target', from: 'b' },
    ]);
  });

  it("cuts b-c at b's proxy, for c's connections", () => {
    const { cuts, b, c } = nodes();
    cutLink(c, b, 'x-to-y');
    expect(cuts).toEqual({ a: [], b: [{ direction: 'to-target', from: 'c' }], c: [] });
  });
});
