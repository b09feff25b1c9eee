// The public face of `baton/client`. Everything else in lib/client is internal.
export { KeyedClient } from './keyed-client.ts';
export type { AcquireOptions, KeyedClientOptions } from './keyed-client.ts';
export { KeyedGrant } from './keyed-grant.ts';
export { SessionClient } from './session-client.ts';
export type { HoldContext, SessionClientOptions, SessionOptions } from './session-client.ts';
export type { SessionLease, SessionStats, SessionHooks } from './session-client-connection.ts';
export { LockTimeoutError } from './lock-timeout-error.ts';
export type { Address, AddressInput } from './address.ts';
export { DEFAULT_KEYED_PORT, DEFAULT_SESSION_PORT } from './address.ts';
export { BatonError } from '../errors.ts';
export type { ErrorName } from '../errors.ts';
