// The peer links of one node: a listener on its peer port and one connection per other node.
// The lower-priority node of each pair dials (and re-dials every 150 ms while it is down). Each
// link is TLS 1.3 with a key derived from the cluster's admin token (peer-tls.ts): nothing of
// the cluster is sent either way before the handshake has proved that both sides hold the key.
// Then each side sends a hello naming its process (its node id must be the PSK identity the
// dialler proved); everything after that goes to the node.
import type { Server, TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { PeerMessage, ReceivedPeerMessage } from '../../lib/cluster/peer-messages.ts';
import { MAX_PEER_LINE, PeerLink } from './peer-link.ts';
import { createPeerTlsServer, dialPeerTls, isKeyMismatch, listenerHandshakeFailure, peerKey } from './peer-tls.ts';

const NOT_A_NODE = 'peer link refused: not a TLS-PSK handshake from a node of this cluster';
const NOT_COMPLETED =
  'peer link refused: a handshake that could not be completed (a replayed or broken ClientHello: it was made with the right key, so the admin token is not what differs)';

const REDIAL_MS = 150;

export interface MeshPeer {
  readonly config: PeerConfig;
  readonly priority: number;
  link: PeerLink | null;
  /** Monotonic time (ms) of the last message from the peer; -Infinity when never heard. */
  lastSeen: number;
}

export interface MeshOptions {
  selfId: string;
  selfInstance: string;
  peers: readonly PeerConfig[];
  listen: { host: string; port: number };
  adminToken: string;
  /** How long a dial may wait for the peer to answer before it is tried again. */
  connectTimeoutMs: number;
  /** How long a silent peer still counts as alive. */
  peerTimeoutMs: number;
  now(): number;
  logger: Logger;
  onMessage(peer: MeshPeer, message: ReceivedPeerMessage): void;
  onLinkUp(peer: MeshPeer): void;
  onLinkDown(peer: MeshPeer, reason: string): void;
}

export class PeerMesh {
  readonly peers = new Map<string, MeshPeer>();
  private readonly server: Server;
  private readonly selfPriority: number;
  private readonly dialTimers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** The PSK of each node id. */
  private readonly keys = new Map<string, Buffer>();
  /** This node's own PSK: what it dials with. */
  private readonly selfKey: Buffer;

  constructor(private readonly o: MeshOptions) {
    this.selfPriority = o.peers.findIndex((p) => p.id === o.selfId);
    this.selfKey = peerKey(o.adminToken, o.selfId);
    o.peers.forEach((config, priority) => {
      this.keys.set(config.id, peerKey(o.adminToken, config.id));
      if (config.id !== o.selfId) this.peers.set(config.id, { config, priority, link: null, lastSeen: Number.NEGATIVE_INFINITY });
    });
    this.server = createPeerTlsServer({
      // Only the other nodes of the cluster may dial in (not this node's own id).
      keyFor: (identity) => (this.peers.has(identity) ? (this.keys.get(identity) ?? null) : null),
      handshakeTimeoutMs: o.connectTimeoutMs,
      onSecure: (socket, identity) => this.accept(socket, identity),
      onHandshakeError: (err, identity, from) => {
        const failure = identity !== null && this.peers.has(identity) ? listenerHandshakeFailure(err) : 'stranger';
        if (failure === 'other-key' && identity !== null) this.noteRefusal(identity, 'auth', 'refused', from);
        // Not a refusal of a node: a replay must neither send the operator to the tokens nor hold back a promotion.
        else if (failure === 'not-completed') this.noteStranger(from, identity, err.code ?? err.message, NOT_COMPLETED);
        else this.noteStranger(from, identity, err.code ?? err.message, NOT_A_NODE);
      },
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.o.listen.port, this.o.listen.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    for (const peer of this.peers.values()) if (peer.priority < this.selfPriority) this.dial(peer);
  }

  /**
   * Closes the link of every peer silent for longer than `silentMs`: a peer that lost power
   * leaves a half-open connection that would never be re-dialled, and the node that comes back
   * would find nobody listening for it.
   */
  closeSilent(silentMs: number, since: number): void {
    const now = this.o.now();
    for (const peer of this.peers.values()) {
      // Counted from `since` at the earliest: after this process was frozen, what the peers sent
      // meanwhile is still unread in the sockets.
      if (peer.link !== null && now - Math.max(peer.lastSeen, since) > silentMs) peer.link.close(`silent for ${silentMs} ms`);
    }
  }

  send(peer: MeshPeer, message: PeerMessage): void {
    peer.link?.send(message);
  }

  broadcast(message: PeerMessage): void {
    for (const peer of this.peers.values()) peer.link?.send(message);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.dialTimers) clearTimeout(t);
    this.dialTimers.clear();
    for (const peer of this.peers.values()) peer.link?.close('node stopping');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The last refusal either way (a peer would not have us, or we would not have it), until a
   * link comes up. A node that hears nobody but was refused (or refused someone) does not take
   * the active role: it is misconfigured, or its peers are, and serving alone would split the
   * cluster. Null once any link is up.
   */
  refusal: { peer: string; reason: 'auth' | 'duplicate'; at: number } | null = null;

  /** The refusal, if one happened within `withinMs`: a refusal nobody repeats expires. */
  recentRefusal(withinMs: number): { peer: string; reason: 'auth' | 'duplicate'; at: number } | null {
    const r = this.refusal;
    return r !== null && this.o.now() - r.at <= withinMs ? r : null;
  }
  private readonly refusalLoggedAt = new Map<string, number>();
  /**
   * Peer connections refused for authentication either way (a node of this cluster with another
   * admin token), since start: every one, where the log says it at most every 10 s
   * (baton_peer_auth_refused_total).
   */
  authRefusals = 0;

  private noteRefusal(peer: string, reason: 'auth' | 'duplicate', direction: 'refused' | 'refused by', from: string | undefined): void {
    const now = this.o.now();
    this.refusal = { peer, reason, at: now };
    if (reason === 'auth') this.authRefusals++;
    const key = `${direction} ${peer} ${reason}`;
    if (now - (this.refusalLoggedAt.get(key) ?? Number.NEGATIVE_INFINITY) < 10_000) return;
    this.refusalLoggedAt.set(key, now);
    const why =
      reason === 'auth'
        ? 'the admin token differs between the nodes (every node of a cluster needs the same one)'
        : `two processes run as node ${direction === 'refused' ? peer : this.o.selfId} (the same --node given twice)`;
    this.o.logger.error({ peer, from, reason }, `peer link ${direction} ${peer}: ${why}`);
  }

  private readonly strangerLoggedAt = new Map<string, number>();
  private strangerWindow = { start: Number.NEGATIVE_INFINITY, lines: 0 };

  /**
   * Not a node of this cluster (a port scan, an old-style plain-text hello, a replay): a warning,
   * at most every 10 s per address and 10 per 10 s in all (many addresses must not flood the log).
   */
  private noteStranger(from: string | undefined, identity: string | null, why: string, message: string): void {
    const now = this.o.now();
    const key = from ?? '?';
    if (now - (this.strangerLoggedAt.get(key) ?? Number.NEGATIVE_INFINITY) < 10_000) return;
    if (now - this.strangerWindow.start >= 10_000) {
      this.strangerWindow = { start: now, lines: 0 };
      // At most 10 entries: one per line logged in the last window.
      for (const [address, at] of this.strangerLoggedAt) if (now - at >= 10_000) this.strangerLoggedAt.delete(address);
    }
    if (++this.strangerWindow.lines > 10) return;
    this.strangerLoggedAt.set(key, now);
    this.o.logger.warn({ from, identity, why }, message);
  }

  private hello(): PeerMessage {
    return { t: 'hello', id: this.o.selfId, instance: this.o.selfInstance };
  }

  private dial(peer: MeshPeer): void {
    if (this.stopped) return;
    const socket = dialPeerTls(peer.config.host, peer.config.peerPort, this.o.selfId, this.selfKey);
    let connected = false;
    // A host that is gone (powered off, black-holed) never answers a SYN: give up and dial again
    // rather than wait for the kernel's retries (minutes), so a node that comes back is found at once.
    // The same bound covers the TLS handshake.
    socket.setTimeout(this.o.connectTimeoutMs, () => socket.destroy());
    socket.once('secureConnect', () => {
      connected = true;
      socket.setTimeout(0);
      if (this.stopped) {
        socket.destroy();
        return;
      }
      this.handshake(socket, peer.config.id, true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      // The listener would not complete the handshake with our key: it holds another admin token.
      if (!connected && isKeyMismatch(err)) this.noteRefusal(peer.config.id, 'auth', 'refused by', peer.config.host);
      socket.destroy();
    });
    // Refused or unreachable: try again. Once connected, the link's own close re-dials.
    socket.once('close', () => {
      if (!connected) this.redial(peer);
    });
  }

  private redial(peer: MeshPeer): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.dialTimers.delete(timer);
      if (peer.link === null) this.dial(peer);
    }, REDIAL_MS);
    this.dialTimers.add(timer);
  }

  private accept(socket: TLSSocket, identity: string): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    this.handshake(socket, identity, false);
  }

  /**
   * After the TLS handshake, both sides send hello at once. `expected` is the node id the other
   * side must name: the one the dialler meant to reach, or the PSK identity the dialler proved.
   */
  private handshake(socket: TLSSocket, expected: string, dialed: boolean): void {
    let accepted: MeshPeer | null = null;
    // A peer answers its hello within a round trip; one that does not (a black hole on the way)
    // is dropped and dialled again soon, so a node that comes back is found within its discovery wait.
    const timer = setTimeout(() => link.close('no hello in time'), this.o.connectTimeoutMs);
    const link: PeerLink = new PeerLink(socket, {
      onMessage: (_l, message) => {
        if (accepted === null) {
          if (message.t === 'refused') {
            // The node we dialed will not have us: a different admin token, or another process runs as this node.
            this.noteRefusal(expected, message.reason, 'refused by', socket.remoteAddress);
            link.close(`refused by the peer (${message.reason})`);
            return;
          }
          const peer = message.t === 'hello' ? this.peers.get(message.id) : undefined;
          if (message.t !== 'hello' || peer === undefined || message.id !== expected) {
            this.o.logger.warn(
              { from: socket.remoteAddress, id: message.t === 'hello' ? message.id : null },
              'peer link refused: not a hello from a node of this cluster',
            );
            link.close('bad hello');
            return;
          }
          // Another process already speaks for this node id and is alive: two processes run with
          // the same --node. The newcomer is refused (a restarted node gets in once the old link
          // is closed, at most a peer timeout later).
          if (peer.link !== null && peer.link !== link && peer.link.peerInstance !== message.instance && this.o.now() - peer.lastSeen <= this.o.peerTimeoutMs) {
            this.noteRefusal(message.id, 'duplicate', 'refused', socket.remoteAddress);
            link.send({ t: 'refused', reason: 'duplicate' });
            link.close('duplicate node id');
            return;
          }
          clearTimeout(timer);
          accepted = peer;
          link.maxLine = MAX_PEER_LINE;
          link.peerId = message.id;
          link.peerInstance = message.instance;
          // A new link replaces an old one: the peer restarted or the old connection is half dead.
          if (peer.link !== null && peer.link !== link) peer.link.close('replaced by a new link');
          peer.link = link;
          peer.lastSeen = this.o.now();
          this.o.onLinkUp(peer);
          return;
        }
        if (message.t === 'refused') {
          // We took its hello, but it would not have us (its verdict follows its hello).
          this.noteRefusal(accepted.config.id, message.reason, 'refused by', socket.remoteAddress);
          link.close(`refused by the peer (${message.reason})`);
          return;
        }
        // The peer has accepted us too: it speaks past its hello.
        this.refusal = null;
        accepted.lastSeen = this.o.now();
        this.o.onMessage(accepted, message);
        // A message that took long to handle (a large snapshot) is not silence from the peer.
        accepted.lastSeen = this.o.now();
      },
      onClose: (_l, reason) => {
        clearTimeout(timer);
        if (accepted !== null && accepted.link === link) {
          accepted.link = null;
          this.o.onLinkDown(accepted, reason);
        }
        const peer = dialed ? this.peers.get(expected) : undefined;
        if (peer !== undefined && peer.link === null) this.redial(peer);
      },
    });
    link.send(this.hello());
  }
}
