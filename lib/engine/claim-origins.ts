// Where compact holders come from (compact-holders.ts): the owner, client address and client
// name of a claim, one entry per connection and name it gave, shared by every lock that
// connection holds. A compact holder keeps the entry's number (4 bytes) instead of three
// references (24 bytes, and three slots the garbage collector marks at every full collection).
//
// An entry is found again by its owner (the last entry made for it, if the address and name
// still match), so a connection that holds a million locks has one entry. Entries no lock uses
// any more are not dropped one by one (a connection that takes and gives back one lock at a time
// would drop and remake its entry per pair): they are swept once they outnumber the used ones,
// amortized O(1), and a closed connection is then let go.
import type { ClaimOwner } from './claim.ts';

/** Unused entries kept past the used ones before a sweep. */
const SLACK = 64;

export class ClaimOrigins {
  owners: (ClaimOwner | null)[] = [];
  clients: (string | null)[] = [];
  clientNames: (string | null)[] = [];
  /** Locks that use each entry. */
  private refs = new Int32Array(16);
  private readonly byOwner = new Map<ClaimOwner, number>();
  private free: number[] = [];
  private inUse = 0;
  private live = 0;
  /** The last entry taken: a connection's pipelined requests come in a row (one socket read). */
  private lastOwner: ClaimOwner | null = null;
  private lastId = -1;

  /** The entry for this owner, address and name (made if none), counted as used once more. */
  take(owner: ClaimOwner, client: string, clientName: string | null): number {
    let id = owner === this.lastOwner ? this.lastId : this.byOwner.get(owner);
    if (id === undefined || this.clients[id] !== client || this.clientNames[id] !== clientName) id = this.add(owner, client, clientName);
    this.lastOwner = owner;
    this.lastId = id;
    const refs = this.refs;
    if ((refs[id] as number) === 0) this.live++;
    refs[id] = (refs[id] as number) + 1;
    return id;
  }

  /** A lock no longer uses entry `id`. */
  drop(id: number): void {
    const left = (this.refs[id] as number) - 1;
    this.refs[id] = left;
    if (left === 0) this.live--;
  }

  /** Forgets every entry (a reset). */
  clear(): void {
    this.owners = [];
    this.clients = [];
    this.clientNames = [];
    this.refs = new Int32Array(16);
    this.byOwner.clear();
    this.lastOwner = null;
    this.lastId = -1;
    this.free = [];
    this.inUse = 0;
    this.live = 0;
  }

  /** Entries in use (for tests). */
  get size(): number {
    return this.inUse;
  }

  private add(owner: ClaimOwner, client: string, clientName: string | null): number {
    if (this.inUse >= 2 * this.live + SLACK) this.sweep();
    const id = this.free.length > 0 ? (this.free.pop() as number) : this.owners.length;
    if (id >= this.refs.length) {
      const grown = new Int32Array(2 * this.refs.length);
      grown.set(this.refs);
      this.refs = grown;
    }
    this.owners[id] = owner;
    this.clients[id] = client;
    this.clientNames[id] = clientName;
    this.refs[id] = 0;
    this.byOwner.set(owner, id);
    this.inUse++;
    return id;
  }

  /** Frees every entry no lock uses. */
  private sweep(): void {
    for (let id = 0; id < this.owners.length; id++) {
      const owner = this.owners[id];
      if (owner === null || owner === undefined || this.refs[id] !== 0) continue;
      if (this.byOwner.get(owner) === id) this.byOwner.delete(owner);
      if (this.lastId === id) this.lastOwner = null;
      this.owners[id] = null;
      this.clients[id] = null;
      this.clientNames[id] = null;
      this.free.push(id);
      this.inUse--;
    }
  }
}
