// Where a Baton server listens. Callers may give "host:port" strings (what people type and
// what `M`/`REDIRECT` lines carry) or objects; everything past this file sees `Address`.
import { BatonError } from '../errors.ts';
import { parseDigits } from './decimal.ts';

export interface Address {
  readonly host: string;
  readonly port: number;
}

export type AddressInput = Address | string;

export const DEFAULT_KEYED_PORT = 7070;
export const DEFAULT_SESSION_PORT = 7071;

/**
 * Parses "host:port", "[v6]:port" or a bare host (which takes `defaultPort`).
 * Returns undefined rather than throwing, so the reply parser can call it on server text.
 */
export function parseAddress(text: string, defaultPort?: number): Address | undefined {
  let host: string;
  let portText: string | undefined;
  if (text.charCodeAt(0) === 91 /* [ */) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (rest.charCodeAt(0) !== 58 /* : */) return undefined;
      portText = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(':');
    // More than one colon without brackets is a bare IPv6 address, not host:port.
    if (colon >= 0 && text.indexOf(':') === colon) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    } else {
      host = text;
    }
  }
  if (host === '') return undefined;
  if (portText === undefined) return defaultPort === undefined ? undefined : { host, port: defaultPort };
  const port = parsePort(portText);
  return port === undefined ? undefined : { host, port };
}

function parsePort(text: string): number | undefined {
  const port = parseDigits(text, 5);
  return port !== undefined && port >= 1 && port <= 65535 ? port : undefined;
}

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

export function formatAddress(address: Address): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
