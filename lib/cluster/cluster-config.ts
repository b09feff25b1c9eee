// The cluster file (`baton serve --config cluster.json --node <id>`): the peers in priority
// order (front = highest). Parsing and validation live here; only the types are fixed so far.

export interface PeerConfig {
  id: string;
  host: string;
  lockPort: number;
  sessionPort: number;
  peerPort: number;
  httpPort: number;
}

export interface ClusterConfig {
  /** Front of the list = highest promotion priority (priority 0). */
  peers: PeerConfig[];
}

/** What `baton serve` hands the daemon when it runs as one node of a cluster. */
export interface ClusterOptions {
  config: ClusterConfig;
  /** This node's id: one of config.peers. */
  nodeId: string;
  /** How long a silent peer still counts as alive (ms). */
  peerTimeoutMs: number;
  /**
   * Where this node listens for peer links, when not on its own entry's host:peerPort (a proxy
   * or port forward in between, as etcd's listen vs advertise URLs). Null: the entry's address.
   */
  peerListen: { host: string; port: number } | null;
}
