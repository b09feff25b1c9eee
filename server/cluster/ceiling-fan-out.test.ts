// The clustered ceiling store with a recording disk and recording standbys: what is stored
// where, in which order, and when a reserved block may be issued from.
import { describe, expect, it } from 'vitest';
import { CeilingFanOut, type CeilingPeers } from './ceiling-fan-out.ts';

/** A promise and its resolve/reject, to settle by hand. */
function pending() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function setup() {
  const calls: string[] = [];
  const disk = { ahead: pending(), failSave: false };
  const durable = {
    load: () => 7n,
    save: (c: bigint) => {
      if (disk.failSave) throw new Error('ENOSPC');
      calls.push(`disk.save ${c}`);
    },
    saveAhead: (c: bigint) => {
      calls.push(`disk.saveAhead ${c}`);
      return disk.ahead.promise;
    },
  };
  const standbys = { acked: pending() };
  const peers: CeilingPeers = {
    broadcastCeiling: (c) => void calls.push(`standbys.broadcast ${c}`),
    awaitCeiling: (c) => {
      calls.push(`standbys.await ${c}`);
      return standbys.acked.promise;
    },
  };
  const store = new CeilingFanOut(durable);
  return { store, peers, calls, disk, standbys };
}

/** Whether `p` has settled after every queued microtask ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('CeilingFanOut', () => {
  it('loads from the disk', () => {
    expect(setup().store.load()).toBe(7n);
  });

  it('stores a ceiling on the disk first, then sends it to the standbys', () => {
    const { store, peers, calls } = setup();
    store.attach(peers);
    store.save(100n);
    expect(calls).toEqual(['disk.save 100', 'standbys.broadcast 100']);
  });

  it('sends the standbys nothing when the disk refuses the ceiling', () => {
    const { store, peers, calls, disk } = setup();
    store.attach(peers);
    disk.failSave = true;
    expect(() => store.save(100n)).toThrow('ENOSPC');
    expect(calls).toEqual([]);
  });

  it('before the node attaches its standbys, stores on the disk only', async () => {
    const { store, calls, disk } = setup();
    store.save(100n);
    const ahead = store.saveAhead(200n);
    disk.ahead.resolve();
    await ahead;
    expect(calls).toEqual(['disk.save 100', 'disk.saveAhead 200']);
  });

  it('a block reserved ahead starts on the disk and at the standbys at once, and is ready only when both have stored it', async () => {
    const { store, peers, calls, disk, standbys } = setup();
    store.attach(peers);
    const ahead = store.saveAhead(200n);
    expect(calls).toEqual(['disk.saveAhead 200', 'standbys.await 200']);
    disk.ahead.resolve();
    expect(await settled(ahead)).toBe(false);
    standbys.acked.resolve();
    expect(await settled(ahead)).toBe(true);
  });

  it('a block the disk cannot store is refused even when the standbys stored it', async () => {
    const { store, peers, disk, standbys } = setup();
    store.attach(peers);
    const ahead = store.saveAhead(200n);
    standbys.acked.resolve();
    disk.ahead.reject(new Error('EIO'));
    await expect(ahead).rejects.toThrow('EIO');
  });
});
