// The part of node-redlock 4.2.0's API the benchmark uses (the package ships no types).
declare module 'redlock' {
  interface RedlockLock {
    unlock(): Promise<void>;
  }
  interface RedlockOptions {
    driftFactor?: number;
    retryCount?: number;
    retryDelay?: number;
    retryJitter?: number;
  }
  class Redlock {
    constructor(clients: unknown[], options?: RedlockOptions);
    lock(resource: string, ttl: number): Promise<RedlockLock>;
  }
  export = Redlock;
}
