// The security headers of every HTTP answer, in both modes (the console's custom Next server
// and the console-less HTTP server), so the two cannot drift apart.
//
// - No other site may frame any of it (a framed "Confirm force release" could be clicked
//   through a decoy): `frame-ancestors 'none'` and, for older browsers, X-Frame-Options.
// - No answer is sniffed into something it is not (a JSON error echoing a lock name must never
//   run as a script or render as HTML): nosniff.
// - No URL with a lock name leaks in a Referer.
// - The console's pages get a strict CSP: scripts only with this answer's nonce (Next puts it on
//   every script it writes, and 'strict-dynamic' lets those load the chunks they import),
//   nothing inline or from elsewhere; the API and probes get the strictest one, since nothing
//   there is a page.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const COMMON: ReadonlyArray<readonly [string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'no-referrer'],
];

/** For answers that are not pages (JSON, metrics, the event stream): they may load and run nothing. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The console's policy for one answer. Styles: Next links its CSS files ('self') and React sets
 * style properties through the DOM, which style-src does not govern; inline `<style>` elements
 * must carry the nonce. connect-src 'self': the dashboard talks only to this server (fetch and
 * EventSource).
 */
export function consoleCsp(nonce: string, dev = false, peerOrigins: readonly string[] = []): string {
  // The cluster peers' consoles (lib/ops-api/console-origins.ts): a page whose node is gone asks
  // their /readyz to find the new active. Exactly those origins, never a wildcard.
  const peers = peerOrigins.length === 0 ? '' : ` ${peerOrigins.join(' ')}`;
  return [
    "default-src 'self'",
    // Next's dev server (--console-dev, hot reload) evaluates the modules it pushes, over a websocket.
    `script-src 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ''}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    dev ? `connect-src 'self'${peers} ws:` : `connect-src 'self'${peers}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** 128 random bits, base64 (the CSP nonce grammar, and what Next's nonce parser accepts). */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The same headers as raw HTTP header lines, for answers written straight to the socket (a request node could not parse). */
export const RAW_API_SECURITY_HEADERS = [...COMMON, ['content-security-policy', API_CSP] as const].map(([n, v]) => `${n}: ${v}\r\n`).join('');

/** The headers every answer of the console-less server carries (and the console's API answers). */
export function setApiSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of COMMON) res.setHeader(name, value);
  res.setHeader('content-security-policy', API_CSP);
}

/**
 * The console's answer to `req`: the common headers and a policy with a fresh nonce. The same
 * policy replaces the request's own CSP headers, which is where Next reads the nonce it puts on
 * the scripts of a dynamically rendered page; a client's own header must not choose it.
 */
export function setConsoleSecurityHeaders(req: IncomingMessage, res: ServerResponse, policy: string): void {
  for (const [name, value] of COMMON) res.setHeader(name, value);
  res.setHeader('content-security-policy', policy);
  req.headers['content-security-policy'] = policy;
  delete req.headers['content-security-policy-report-only'];
}
