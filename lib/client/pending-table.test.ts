import { describe, it, expect } from 'vitest';
import { PendingTable } from './pending-table.ts';

describe('PendingTable', () => {
  it('hands out each slot oldest first and keeps slots apart', () => {
    const table = new PendingTable<number>();
    table.push('A k', 1);
    table.push('A j', 2);
    table.push('A k', 3);
    expect(table.size).toBe(3);
    expect(table.shift('A k')).toBe(1);
    expect(table.shift('A k')).toBe(3);
    expect(table.shift('A k')).toBeUndefined();
    expect(table.shift('R j')).toBeUndefined();
    expect(table.size).toBe(1);
  });

  it('drains everything, each slot in send order', () => {
    const table = new PendingTable<number>();
    table.push('A k', 1);
    table.push('R k', 2);
    table.push('A k', 3);
    expect(table.drain()).toEqual([1, 3, 2]);
    expect(table.size).toBe(0);
    expect(table.shift('A k')).toBeUndefined();
  });

  it('removes one entry from the middle of its slot and leaves the order of the rest', () => {
    const table = new PendingTable<number>();
    table.push('A k', 1);
    table.push('A k', 2);
    table.push('A k', 3);
    expect(table.remove('A k', 2)).toBe(true);
    expect(table.remove('A k', 2)).toBe(false);
    expect(table.remove('A j', 1)).toBe(false);
    expect(table.size).toBe(2);
    expect(table.drain()).toEqual([1, 3]);
  });

  it('shows the oldest entry of a slot and whether an entry is pending, without taking anything', () => {
    const table = new PendingTable<number>();
    expect(table.oldest('A k')).toBeUndefined();
    table.push('A k', 1);
    table.push('A k', 2);
    expect(table.oldest('A k')).toBe(1);
    expect(table.has('A k', 2)).toBe(true);
    expect(table.has('A j', 2)).toBe(false);
    expect(table.size).toBe(2);
    table.shift('A k');
    expect(table.oldest('A k')).toBe(2);
    expect(table.has('A k', 1)).toBe(false);
  });
});
