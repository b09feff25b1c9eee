// `host:port` as both protocols write it (keyed `M <host:port>`, session `REDIRECT` and `MOVED`)
// and as people type it. lib/client/address.ts adds what callers give (lists, default ports).
import { parseDigits } from './decimal-text.ts';

export interface Address {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses "host:port", "[v6]:port" or a bare host (which takes `defaultPort`).
 * Returns undefined rather than throwing, so the reply parsers can call it on server text.
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

export function formatAddress(address: Address): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
