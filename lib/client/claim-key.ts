// The claim key of a resumable session: 128 random bits, hex. Only this client knows it (the
// server keeps its SHA-256), so only this client can take its claim up again after a handoff or
// a failover; the fencing token, which is public, is never enough.
import { randomBytes } from 'node:crypto';
import type { Address } from './address.ts';

export function newClaimKey(): string {
  return randomBytes(16).toString('hex');
}

export function sameAddress(a: Address, b: Address): boolean {
  return a.host === b.host && a.port === b.port;
}
