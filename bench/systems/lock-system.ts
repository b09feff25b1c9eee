// One adapter per lock system, so the same load generator and the same handover driver drive
// Baton, Redis and etcd alike. A LockClient is one client of the system (its own connection or
// connections, as one worker process would have); acquire() resolves once the lock is held
// (waiting, by whatever means the system offers, when it is not free).
export interface Holding {
  release(): Promise<void>;
}

export interface LockClient {
  acquire(key: string): Promise<Holding>;
  close(): Promise<void>;
}

export interface LockSystem {
  /** The label in the tables. */
  readonly name: string;
  /** The server whose CPU is charged to this system. */
  readonly serverCpuMs: () => number;
  connect(): Promise<LockClient>;
}

/** The lease every benchmark lock is taken with (long enough never to expire during a run). */
export const LEASE_MS = 30_000;
