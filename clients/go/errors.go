package baton

import (
	"errors"
	"fmt"
)

// Side says whose condition an error is: ServerSide errors are retried elsewhere (reconnect, the
// next address); ClientSide ones are final for that call.
type Side int

const (
	ClientSide Side = iota
	ServerSide
)

// errorSides holds every shared error name of Baton (lib/errors.ts) that the wire protocols and
// the clients use.
var errorSides = map[string]Side{
	"server-going-away":    ServerSide,
	"protocol-error":       ClientSide,
	"lease-expired":        ClientSide,
	"force-released":       ClientSide,
	"kicked":               ClientSide,
	"too-many-connections": ServerSide,
	"io-timeout":           ClientSide,
	"unknown-op":           ClientSide,
	"bad-key":              ClientSide,
	"bad-lease":            ClientSide,
	"bad-wait":             ClientSide,
	"bad-token":            ClientSide,
	"line-too-long":        ClientSide,
	"backlog-full":         ClientSide,
	"session-claim":        ClientSide,
	"stale-token":          ClientSide,
	"tokens-exhausted":     ServerSide,
	"storage-unavailable":  ServerSide,
	"claim-unknown":        ClientSide,
	"bad-identity":         ClientSide,
	"lock-timeout":         ClientSide,
	"connection-lost":      ServerSide,
	"client-closed":        ClientSide,
	"internal":             ServerSide,
	"bad-usage":            ClientSide,
}

// sessionCodes maps the session protocol's ERROR 0x0N to the shared names.
var sessionCodes = map[int]string{
	0x01: "server-going-away",
	0x02: "protocol-error",
	0x03: "lease-expired",
	0x04: "force-released",
	0x05: "kicked",
	0x06: "too-many-connections",
	0x07: "tokens-exhausted",
	0x08: "storage-unavailable",
	0x09: "claim-unknown",
}

// Error is a failure carrying one of Baton's shared error names. Compare with errors.Is against
// the sentinels below (errors.Is(err, baton.ErrSessionClaim)), or read Code.
type Error struct {
	Code   string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "baton: " + e.Code
	}
	return "baton: " + e.Code + ": " + e.Detail
}

// Is matches any *Error with the same Code, so a sentinel matches whatever detail it carries.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// ServerSide reports whether the condition is the server's (retry elsewhere).
func (e *Error) ServerSide() bool { return errorSides[e.Code] == ServerSide }

func newError(code, detail string) *Error { return &Error{Code: code, Detail: detail} }

// Sentinels, one per shared name, for errors.Is.
var (
	// ErrTimeout: the wait ran out; nothing is held, nothing leaked.
	ErrTimeout = newError("lock-timeout", "")
	// ErrLost: ownership ended or can no longer be confirmed. Claim.Err() wraps the reason, so
	// errors.Is(err, ErrLost) and errors.Is(err, ErrForceReleased) can both hold.
	ErrLost = errors.New("baton: lock lost")

	ErrServerGoingAway    = newError("server-going-away", "")
	ErrProtocol           = newError("protocol-error", "")
	ErrLeaseExpired       = newError("lease-expired", "")
	ErrForceReleased      = newError("force-released", "")
	ErrKicked             = newError("kicked", "")
	ErrTooManyConnections = newError("too-many-connections", "")
	ErrIOTimeout          = newError("io-timeout", "")
	ErrUnknownOp          = newError("unknown-op", "")
	ErrBadKey             = newError("bad-key", "")
	ErrBadLease           = newError("bad-lease", "")
	ErrBadWait            = newError("bad-wait", "")
	ErrBadToken           = newError("bad-token", "")
	ErrLineTooLong        = newError("line-too-long", "")
	ErrBacklogFull        = newError("backlog-full", "")
	ErrSessionClaim       = newError("session-claim", "")
	// ErrStale: a release found the token no longer holding the lock (released, expired or
	// force-released); nothing was changed.
	ErrStale              = newError("stale-token", "")
	ErrTokensExhausted    = newError("tokens-exhausted", "")
	ErrStorageUnavailable = newError("storage-unavailable", "")
	ErrClaimUnknown       = newError("claim-unknown", "")
	ErrBadIdentity        = newError("bad-identity", "")
	ErrConnectionLost     = newError("connection-lost", "")
	ErrClientClosed       = newError("client-closed", "")
	// ErrBadUsage: a call or an option the client refuses before sending anything (an
	// unreadable address, say).
	ErrBadUsage = newError("bad-usage", "")
)

// lostError is what Claim.Err() returns: errors.Is matches both ErrLost and the reason.
type lostError struct{ reason *Error }

func (l *lostError) Error() string { return "baton: lock lost: " + l.reason.Error() }
func (l *lostError) Is(target error) bool {
	return target == ErrLost || l.reason.Is(target)
}
func (l *lostError) Unwrap() error { return l.reason }

func errorFromWireName(name, text string) *Error {
	if _, ok := errorSides[name]; ok {
		return newError(name, text)
	}
	// A newer server may send a name this client does not know: keep its words.
	return newError("protocol-error", name+" "+text)
}

func errorFromSessionCode(code int, text string) *Error {
	if name, ok := sessionCodes[code]; ok {
		return newError(name, text)
	}
	return newError("protocol-error", fmt.Sprintf("unknown error code %d: %s", code, text))
}
