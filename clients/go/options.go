package baton

import "time"

// Options configure a KeyedClient or a SessionClient. The zero value of every field means its
// default.
type Options struct {
	// Addresses of the nodes of one Baton cluster, "host:port". Default "127.0.0.1:7070" for a
	// KeyedClient, "127.0.0.1:7071" for a SessionClient.
	Addresses []string
	// Identity shown to operators (keyed `I`, session `CLIENT`). Empty: "<user>@<host> pid <pid>".
	Identity string
	// NoIdentity sends no identity at all (the seed protocol's bytes).
	NoIdentity bool
	// DialTimeout bounds one connect (default 3 s).
	DialTimeout time.Duration

	// Keyed: how often a dropped connection is redialled (default 3 s).
	ReconnectInterval time.Duration
	// Keyed: how long a release is retried when its connection drops (default 5 s).
	ReleaseRetryFor time.Duration
	// Keyed: the pause between release retries (default 200 ms).
	ReleaseRetryInterval time.Duration
	// Keyed: how long one release attempt waits for its answer (default 1 s).
	ReleaseAttemptTimeout time.Duration

	// Session: claims RESUME across a handoff or failover of the active node (opt-in).
	Resumable bool
	// Session: the servers' --max-park (default 60 s): between connections a resumable claim is
	// given up by 0.8 x min(lease, MaxPark) after the last confirmation.
	MaxPark time.Duration
	// Session: the floor of the heartbeat interval (default 50 ms).
	MinHeartbeatInterval time.Duration
	// Session: how long to keep reconnecting while no server answers at all (default 5 s).
	ReconnectFor time.Duration
}
