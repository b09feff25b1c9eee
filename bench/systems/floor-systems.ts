// The floor as two lock systems: Baton's own adapters (baton-systems.ts: KeyedClient and
// SessionClient, connected the same way, the same load generator) pointed at the bare line server
// instead of Baton, so the two rows differ only in the server. Only the name is new, and it does
// not start with "Baton": the tables and the targets (report.ts) pick Baton's rows by that prefix.
import { batonKeyed, batonSession } from './baton-systems.ts';
import type { LockSystem } from './lock-system.ts';

export function floorKeyed(keyedPort: number, serverCpuMs: () => number): LockSystem {
  return { ...batonKeyed(keyedPort, serverCpuMs), name: 'floor keyed (KeyedClient, bare Node line server)' };
}

export function floorSession(sessionPort: number, serverCpuMs: () => number): LockSystem {
  return { ...batonSession(sessionPort, serverCpuMs), name: 'floor session (SessionClient, bare Node line server)' };
}
