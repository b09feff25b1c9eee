// DNS rebinding guard. A daemon bound to loopback answers anyone who can reach 127.0.0.1,
// including a web page whose own domain was re-pointed at 127.0.0.1: the browser then sends
// that domain in the Host header and lets the page read the (open) ops API. On a loopback
// bind only loopback names and IP literals are accepted as Host; on any other bind the
// operator's DNS names are expected and nothing is refused.
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

/**
 * Whether a bind address is loopback: 127.0.0.0/8, ::1 (bracketed or not, or IPv4-mapped) and
 * "localhost". One answer for both "are reads open" (Security) and "is the Host guard on".
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** The hostname part of a Host header ("[::1]:3000" → "::1", "example.com:80" → "example.com"). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

/** Null when the request may go on, else why it is refused. */
export function refuseHost(bindHost: string, hostHeader: string | undefined): string | null {
  if (!isLoopbackHost(bindHost)) return null;
  if (hostHeader === undefined || hostHeader === '') return 'a Host header is required';
  const name = hostnameOf(hostHeader).toLowerCase();
  if (isIP(name) !== 0 || LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return null;
  return `Host ${JSON.stringify(hostHeader.slice(0, 100))} is not this loopback-bound node's (DNS rebinding guard: use 127.0.0.1 or localhost, or bind with --host)`;
}
