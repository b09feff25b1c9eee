package baton

// The client's half of the session protocol as pure functions: one server line into a
// sessionReply, and the request lines the client writes. The wire truth is docs/protocol.md
// ("Session protocol", "Resumable sessions"); the TypeScript twin is
// lib/protocol/session-reply-parser.ts and session-codec.ts.
//
//	ACQUIRE <name> <lease_ms> [<claim_key>]  ->  ACQUIRED <token> | WAITING <position>
//	RESUME <name> <claim_key>                ->  ACQUIRED <token> | WAITING <position> | ERROR 0x09
//	HEARTBEAT                                ->  ACQUIRED <token> | WAITING <position>
//	CLIENT <identity>                        ->  (no answer), in the same write as ACQUIRE/RESUME
//	(pushed)                                     ACQUIRED <token> when the lock reaches us
//	(last line)                                  ERROR 0xNN <text>, REDIRECT or MOVED <host:port>

import (
	"strconv"
	"strings"
)

type sessionReplyKind int

const (
	sessionAcquired sessionReplyKind = iota + 1
	sessionWaiting
	sessionErrorLine
	// sessionRedirect: this node is not the active one; the claim (if any) ended.
	sessionRedirect
	// sessionMoved: only to a resumable session; the claim moved with a handoff, RESUME it there.
	sessionMoved
)

// sessionReply is one server line, read.
type sessionReply struct {
	kind     sessionReplyKind
	token    uint64 // sessionAcquired
	position int64  // sessionWaiting, 1 = next
	err      *Error // sessionErrorLine, already carrying the shared name
	address  string // sessionRedirect, sessionMoved: "host:port" as the server wrote it
}

// maxPositionDigits bounds WAITING's number as the server writes it (15 digits).
const maxPositionDigits = 15

// parseSessionLine reads one server line (without its line ending). Anything a Baton server
// does not send is an *Error "protocol-error" naming what was wrong: never a panic.
func parseSessionLine(line string) (sessionReply, error) {
	word, rest := line, ""
	if i := strings.IndexByte(line, ' '); i >= 0 {
		word, rest = line[:i], line[i+1:]
	}
	switch word {
	case "ACQUIRED":
		token, ok := parseU64(rest)
		if !ok {
			return sessionReply{}, unreadableSessionLine(line, "ACQUIRED with a bad token")
		}
		return sessionReply{kind: sessionAcquired, token: token}, nil
	case "WAITING":
		if !allDigits(rest, maxPositionDigits) {
			return sessionReply{}, unreadableSessionLine(line, "WAITING with a bad position")
		}
		position, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || position <= 0 {
			return sessionReply{}, unreadableSessionLine(line, "WAITING with a bad position")
		}
		return sessionReply{kind: sessionWaiting, position: position}, nil
	case "ERROR":
		codeText, text := rest, ""
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			codeText, text = rest[:i], rest[i+1:]
		}
		code, ok := parseHexCode(codeText)
		if !ok {
			return sessionReply{}, unreadableSessionLine(line, "ERROR with a bad code")
		}
		return sessionReply{kind: sessionErrorLine, err: errorFromSessionCode(code, text)}, nil
	case "REDIRECT", "MOVED":
		if !isHostPort(rest) {
			return sessionReply{}, unreadableSessionLine(line, word+" to an unreadable address")
		}
		kind := sessionRedirect
		if word == "MOVED" {
			kind = sessionMoved
		}
		return sessionReply{kind: kind, address: rest}, nil
	}
	return sessionReply{}, unreadableSessionLine(line, "unknown reply")
}

// unreadableSessionLine is the protocol error for a line a client cannot read; the line is quoted short,
// since a hostile server may send a long one.
func unreadableSessionLine(line, why string) *Error {
	const show = 80
	if len(line) > show {
		line = line[:show] + "..."
	}
	return newError("protocol-error", why+": "+strconv.Quote(line))
}

// parseU64 is the one rule for a fencing token: 1 to 20 decimal digits, at most 2^64-1, leading
// zeros allowed. Never a float: tokens pass 2^53.
func parseU64(text string) (uint64, bool) {
	if !allDigits(text, 20) {
		return 0, false
	}
	value, err := strconv.ParseUint(text, 10, 64)
	return value, err == nil
}

func allDigits(text string, maxDigits int) bool {
	if len(text) == 0 || len(text) > maxDigits {
		return false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return false
		}
	}
	return true
}

// parseHexCode reads "0x01" style codes, as the server writes them (0x and 1 to 4 hex digits).
func parseHexCode(text string) (int, bool) {
	if len(text) < 3 || len(text) > 6 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') {
		return 0, false
	}
	value, err := strconv.ParseUint(text[2:], 16, 16)
	if err != nil || strings.ContainsAny(text[2:], "+-_") {
		return 0, false
	}
	return int(value), true
}

// isHostPort accepts "host:port" and "[v6]:port" with a port from 1 to 65535 (no bare host:
// a server always names the port).
func isHostPort(text string) bool {
	if strings.ContainsAny(text, " \t") {
		return false // one field: a server never writes a space into an address
	}
	_, _, ok := parseAddress(text, 0)
	return ok
}

// The request lines, each with its "\n".

// heartbeatLine is the sign of life; it takes no fields.
const heartbeatLine = "HEARTBEAT\n"

// encodeAcquire writes `ACQUIRE <name> <lease_ms>`, with the claim key as a third field when
// the claim is resumable (claimKey non-empty).
func encodeAcquire(name string, leaseMs int64, claimKey string) string {
	line := "ACQUIRE " + name + " " + strconv.FormatInt(leaseMs, 10)
	if claimKey != "" {
		line += " " + claimKey
	}
	return line + "\n"
}

// encodeResume writes `RESUME <name> <claim_key>`: takes a kept claim up on a new connection.
func encodeResume(name, claimKey string) string {
	return "RESUME " + name + " " + claimKey + "\n"
}

// encodeClient writes `CLIENT <identity>`, or nothing for no identity; it goes in the same
// write as the ACQUIRE or RESUME after it.
func encodeClient(identity string) string {
	if identity == "" {
		return ""
	}
	return "CLIENT " + identity + "\n"
}
