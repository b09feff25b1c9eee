// Where a Baton server listens. Callers may give "host:port" strings (what people type and
// what `M`/`REDIRECT` lines carry) or objects; everything past this file sees `Address`. The
// text form itself is the protocols' (lib/protocol/address-text.ts).
import { BatonError } from '../errors.ts';
import { type Address, parseAddress } from '../protocol/address-text.ts';

export type { Address } from '../protocol/address-text.ts';

export type AddressInput = Address | string;

export const DEFAULT_KEYED_PORT = 7070;
export const DEFAULT_SESSION_PORT = 7071;

/** Turns the caller's list into addresses, refusing an empty list or unreadable entries up front. */
export function normalizeAddresses(inputs: readonly AddressInput[], defaultPort: number): Address[] {
  if (inputs.length === 0) throw new BatonError('bad-usage', 'at least one server address is needed');
  return inputs.map((input) => {
    if (typeof input !== 'string') {
      if (!Number.isInteger(input.port) || input.port < 1 || input.port > 65535 || input.host === '') {
        throw new BatonError('bad-usage', `not a server address: ${JSON.stringify(input)}`);
      }
      return { host: input.host, port: input.port };
    }
    const address = parseAddress(input, defaultPort);
    if (!address) throw new BatonError('bad-usage', `not a server address: ${JSON.stringify(input)}`);
    return address;
  });
}
