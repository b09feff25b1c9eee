// Which other web origins a node's console may talk to: exactly its cluster peers' consoles, as
// the cluster file names them (NodeView.httpAddress), never `*`. A page whose node is gone asks
// the peers' `GET /readyz?role=active` to find the new active (components/alive); for that its
// CSP `connect-src` lists these origins, and `/readyz` answers CORS for them alone. Pure: the
// server passes the cluster view's nodes.

export interface ConsoleAddress {
  self: boolean;
  /** "host:port" of the node's HTTP port ("[::1]:3000" for IPv6); empty when unknown. */
  httpAddress: string;
}

/** http:// and https:// origins of every other node's console, in the nodes' order. */
export function peerConsoleOrigins(nodes: readonly ConsoleAddress[]): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    if (n.self || n.httpAddress === '' || !/^[A-Za-z0-9.\-[\]:]+$/.test(n.httpAddress)) continue;
    out.push(`http://${n.httpAddress}`, `https://${n.httpAddress}`);
  }
  return out;
}

/**
 * The value of `Access-Control-Allow-Origin` for a request from `origin`: the origin itself when
 * it is one of `allowed`, else null (no CORS header: the browser keeps the answer from the page).
 * Origins compare as the browser sends them (scheme, host and port, lower-case host).
 */
export function corsOriginFor(origin: string | null, allowed: readonly string[]): string | null {
  if (origin === null) return null;
  const wanted = origin.toLowerCase();
  return allowed.some((a) => a.toLowerCase() === wanted) ? origin : null;
}
