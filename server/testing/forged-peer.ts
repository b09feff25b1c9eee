// A process that holds the admin token and so passes the peer handshake as node `id`: what the
// cluster tests use to send a node what no well-behaved peer would (a hostile peer with a
// stolen token, or one whose cluster.json differs). It dials `port`, says its hello, and hands
// back a function that sends peer messages; the socket is closed at the test's teardown.
import { encodePeerMessage, type PeerMessage } from '../../lib/cluster/peer-messages.ts';
import { dialPeerTls, peerKey } from '../cluster/peer-tls.ts';
import { CLUSTER_ADMIN_TOKEN } from './cluster-harness.ts';

export type PeerSend = (...messages: PeerMessage[]) => void;

export async function dialAsPeer(port: number, id: string, instance: string, defer: (fn: () => unknown) => void): Promise<PeerSend> {
  const socket = dialPeerTls('127.0.0.1', port, id, peerKey(CLUSTER_ADMIN_TOKEN, id));
  defer(() => socket.destroy());
  socket.on('error', () => {});
  socket.resume();
  await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
  const send: PeerSend = (...messages) => socket.write(messages.map(encodePeerMessage).join(''));
  send({ t: 'hello', id, instance });
  return send;
}
