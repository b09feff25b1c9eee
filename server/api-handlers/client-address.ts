// The address of the client behind a request, for limits per client (event streams). Route
// handlers take Web Requests, which carry no socket, so both HTTP servers (http-server.ts and
// console-server.ts) write the socket's peer address into this header before a handler runs,
// replacing whatever a client sent under that name: a client cannot choose its own address.
export const CLIENT_ADDRESS_HEADER = 'x-baton-client-address';

/** "local" for a handler called without a server (tests). */
export function clientAddress(req: Request): string {
  return req.headers.get(CLIENT_ADDRESS_HEADER) ?? 'local';
}
