// The PSK identity a TLS 1.3 client names in its ClientHello (the pre_shared_key extension, sent
// in the clear): Baton's peer links dial with the dialling node's id as the identity
// (server/cluster/peer-tls.ts), so a fault proxy in front of a peer port can tell which node a
// connection comes from and cut one link of a node that several peers dial.

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const PRE_SHARED_KEY = 41;

/** The first PSK identity of the ClientHello at the start of `bytes`, or null if there is none (or it does not fit). */
export function pskIdentity(bytes: Buffer): string | null {
  if (bytes.length < 9 || bytes[0] !== HANDSHAKE || bytes[5] !== CLIENT_HELLO) return null;
  // Record header (5), handshake header (4), legacy version (2), random (32).
  let at = 5 + 4 + 2 + 32;
  const skip = (lengthBytes: number): boolean => {
    if (at + lengthBytes > bytes.length) return false;
    at += lengthBytes + bytes.readUIntBE(at, lengthBytes);
    return at <= bytes.length;
  };
  // Session id, cipher suites, compression methods.
  if (!skip(1) || !skip(2) || !skip(1) || at + 2 > bytes.length) return null;
  const end = Math.min(bytes.length, at + 2 + bytes.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 2);
    at += 4;
    if (type === PRE_SHARED_KEY) {
      // identities<7..2^16-1>: the first identity's length, then its bytes.
      if (at + 4 > end) return null;
      const identityLength = bytes.readUInt16BE(at + 2);
      if (at + 4 + identityLength > end) return null;
      return bytes.subarray(at + 4, at + 4 + identityLength).toString('utf8');
    }
    at += length;
  }
  return null;
}
