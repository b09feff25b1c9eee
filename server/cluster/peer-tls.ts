// The peer links' transport: TLS 1.3 with a pre-shared key (RFC 8446 external PSK, with an
// (EC)DHE exchange, so each connection has fresh keys and a recorded one cannot be decrypted
// later even by someone who learns the token). The key is derived from the cluster's admin
// token with HKDF and the dialling node's id (its PSK identity): a node proves it knows the
// token without sending it or anything derived from it that could be replayed, and the
// listener only answers with anything cluster-related after the dialler has proved it.
// Certificates are not used: every node already shares the admin token, and a second secret
// to distribute would only be another way to misconfigure a cluster.
import { hkdfSync } from 'node:crypto';
import type { Socket as NetSocket } from 'node:net';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';

/** Both suites hash with SHA-256, which external PSKs use in OpenSSL; both are AEAD. */
const CIPHERS = 'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256';
const SALT = 'baton-peer-link';
const LABEL = 'baton peer tls1.3 psk v2';

/** The PSK of node `id`: HKDF-SHA256 of the admin token, never the token itself. */
export function peerKey(adminToken: string, id: string): Buffer {
  return Buffer.from(hkdfSync('sha256', adminToken, SALT, `${LABEL}\0${id}`, 32));
}

export interface PeerTlsServerOptions {
  /** The key for a dialler claiming `identity`, or null (not a node of this cluster). */
  keyFor(identity: string): Buffer | null;
  handshakeTimeoutMs: number;
  /** A connection whose TLS handshake completed: the dialler proved the key of `identity`. */
  onSecure(socket: TLSSocket, identity: string): void;
  /** A handshake failed; `identity` is what the dialler claimed (null when it never got that far). */
  onHandshakeError(err: NodeJS.ErrnoException, identity: string | null, remote: string | undefined): void;
}

/**
 * At most this many connections to the peer port may be in their handshake at once. A cluster
 * has a handful of nodes, each dialling once per link; a stranger who opens thousands of silent
 * connections would otherwise hold that many sockets (and file descriptors, shared with the
 * lock ports) for a connect timeout each. When the bound is reached the oldest pending one is
 * closed, so a real node's fresh handshake (a few ms on a LAN) still gets through a flood of
 * slow or silent ones.
 */
export const MAX_PENDING_HANDSHAKES = 64;

export function createPeerTlsServer(o: PeerTlsServerOptions): Server {
  const claimed = new WeakMap<TLSSocket, string>();
  // In arrival order (a Set iterates in insertion order): the first is the oldest.
  const pending = new Set<NetSocket>();
  const server = createServer(
    {
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      ciphers: CIPHERS,
      handshakeTimeout: o.handshakeTimeoutMs,
      pskCallback: (socket, identity) => {
        claimed.set(socket, identity);
        return o.keyFor(identity);
      },
    },
    (socket) => {
      const identity = claimed.get(socket);
      if (identity === undefined) {
        socket.destroy(); // cannot happen: a PSK handshake always names its identity
        return;
      }
      o.onSecure(socket, identity);
    },
  );
  server.on('connection', (socket: NetSocket) => {
    if (pending.size >= MAX_PENDING_HANDSHAKES) {
      const oldest = pending.values().next().value;
      if (oldest !== undefined) {
        pending.delete(oldest);
        oldest.destroy();
      }
    }
    pending.add(socket);
    socket.once('close', () => pending.delete(socket));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    // A TLSSocket wraps the raw socket, which stays open under it: this one is done with its handshake.
    for (const raw of pending) {
      if (raw.remotePort === socket.remotePort && raw.remoteAddress === socket.remoteAddress) {
        pending.delete(raw);
        break;
      }
    }
  });
  server.on('tlsClientError', (err, socket) => {
    o.onHandshakeError(err, claimed.get(socket) ?? null, socket.remoteAddress);
    socket.destroy();
  });
  return server;
}

/** Dials `host:port` as node `selfId`; 'secureConnect' fires once the listener has proved the key too. */
export function dialPeerTls(host: string, port: number, selfId: string, key: Buffer): TLSSocket {
  return connect({
    host,
    port,
    minVersion: 'TLSv1.3',
    maxVersion: 'TLSv1.3',
    ciphers: CIPHERS,
    pskCallback: () => ({ psk: key, identity: selfId }),
    // No certificate: the PSK authenticates the listener (its Finished message needs the key).
    checkServerIdentity: () => undefined,
  });
}

/** The dialler's side: a TLS alert from the listener, which would not take our key (another admin token). */
export function isKeyMismatch(err: NodeJS.ErrnoException): boolean {
  return typeof err.code === 'string' && err.code.startsWith('ERR_SSL_');
}

/**
 * What a failed handshake says about the dialler, as the listener saw it. The listener checks
 * the ClientHello's PSK binder with the key of the node it names: a binder that does not verify
 * is a dialler with another admin token ('other-key'). A handshake that gets past the binder and
 * then fails to decrypt the dialler's Finished ('not-completed') came from a ClientHello made
 * with the right key by a sender that cannot finish the fresh key exchange: the captured bytes
 * of a real node's handshake, replayed (or a connection broken in transit), never a token
 * mismatch. Anything else is 'stranger' (not TLS, no PSK, a timeout).
 */
export function listenerHandshakeFailure(err: NodeJS.ErrnoException): 'other-key' | 'not-completed' | 'stranger' {
  if (err.code === 'ERR_SSL_BINDER_DOES_NOT_VERIFY') return 'other-key';
  if (err.code === 'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC' || err.code === 'ERR_SSL_BAD_RECORD_MAC') return 'not-completed';
  return 'stranger';
}
