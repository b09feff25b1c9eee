package baton

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The keyed protocol's bytes (docs/protocol.md, "Keyed protocol"), apart from any socket:
// request lines out, reply lines in. Parsing is pure so that it can be fuzzed on its own.

// maxReplyLine bounds one reply line. The server's own lines are far shorter (a key is at most
// 250 bytes, a line at most 4096); anything longer is a broken server, refused before it can
// make the client buffer megabytes.
const maxReplyLine = 64 << 10

type replyKind int

const (
	replyGranted      replyKind = iota + 1 // A <key> <token>
	replyTimeout                           // T <key>
	replyReleased                          // R <key> OK
	replyStale                             // R <key> STALE
	replyRequestError                      // E <op> <key> <code> <text>
	replyConnError                         // E - - <code> <text>: the server closes after it
	replyRedirect                          // M <host:port>
	replyIdentityOK                        // I OK
)

// keyedReply is one server line, tagged. slot is "<op> <key>": the pending table's key.
type keyedReply struct {
	kind    replyKind
	slot    string
	key     string
	token   uint64
	code    string // request and connection errors: the shared error name
	text    string // request and connection errors: the human text
	address string // redirect: dialable host:port
}

// parseKeyedReply reads one line (without its line ending). Anything a client cannot read is
// an *Error with code protocol-error: matching replies to requests is only sound while every
// line is understood.
func parseKeyedReply(line []byte) (keyedReply, error) {
	if !utf8.Valid(line) {
		return keyedReply{}, unreadable(line, "not UTF-8")
	}
	if len(line) < 3 || line[1] != ' ' {
		return keyedReply{}, unreadable(line, "no op")
	}
	rest := string(line[2:])
	switch line[0] {
	case 'A':
		space := lastSpace(rest)
		if space <= 0 {
			return keyedReply{}, unreadable(line, "grant without key or token")
		}
		key := rest[:space]
		if !ValidKey(key) {
			return keyedReply{}, unreadable(line, "grant of a key no request can have")
		}
		token, ok := parseToken(rest[space+1:])
		if !ok {
			return keyedReply{}, unreadable(line, "grant with a token that is not a u64")
		}
		return keyedReply{kind: replyGranted, slot: "A " + key, key: key, token: token}, nil
	case 'T':
		if !ValidKey(rest) {
			return keyedReply{}, unreadable(line, "timeout of a key no request can have")
		}
		return keyedReply{kind: replyTimeout, slot: "A " + rest, key: rest}, nil
	case 'R':
		space := lastSpace(rest)
		if space <= 0 || !ValidKey(rest[:space]) {
			return keyedReply{}, unreadable(line, "release reply without a key")
		}
		key := rest[:space]
		switch rest[space+1:] {
		case "OK":
			return keyedReply{kind: replyReleased, slot: "R " + key, key: key}, nil
		case "STALE":
			return keyedReply{kind: replyStale, slot: "R " + key, key: key}, nil
		}
		return keyedReply{}, unreadable(line, "release reply neither OK nor STALE")
	case 'E':
		return parseKeyedError(line, rest)
	case 'I':
		if rest == "OK" {
			return keyedReply{kind: replyIdentityOK}, nil
		}
		return keyedReply{}, unreadable(line, "identity reply other than I OK")
	case 'M':
		host, port, ok := parseAddress(rest, 0)
		if !ok {
			return keyedReply{}, unreadable(line, "redirect to an unreadable address")
		}
		return keyedReply{kind: replyRedirect, address: joinAddress(host, port)}, nil
	}
	return keyedReply{}, unreadable(line, "unknown reply op")
}

// parseKeyedError reads `E <op> <key> <code> <text>`; op and key `-` are about the connection.
func parseKeyedError(line []byte, rest string) (keyedReply, error) {
	fields := splitN(rest, 4)
	if len(fields) < 3 || fields[0] == "" || fields[1] == "" || fields[2] == "" {
		return keyedReply{}, unreadable(line, "error without op, key or code")
	}
	op, key, code := fields[0], fields[1], fields[2]
	text := ""
	if len(fields) == 4 {
		text = fields[3]
	}
	if op == "-" && key == "-" {
		return keyedReply{kind: replyConnError, code: code, text: text}, nil
	}
	return keyedReply{kind: replyRequestError, slot: op + " " + key, key: key, code: code, text: text}, nil
}

// parseToken reads a fencing token: a u64 in decimal, 1 to 20 digits, at most 2^64-1.
func parseToken(text string) (uint64, bool) {
	if len(text) < 1 || len(text) > 20 {
		return 0, false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return 0, false
		}
	}
	token, err := strconv.ParseUint(text, 10, 64)
	return token, err == nil
}

func lastSpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return i
		}
	}
	return -1
}

// splitN splits on single spaces into at most n fields, the last keeping the rest.
func splitN(s string, n int) []string {
	var out []string
	for len(out) < n-1 {
		i := indexSpace(s)
		if i < 0 {
			break
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
	return append(out, s)
}

func indexSpace(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return i
		}
	}
	return -1
}

// unreadable is the protocol-error for a line, quoting at most 200 bytes of it.
func unreadable(line []byte, why string) *Error {
	shown := line
	if len(shown) > 200 {
		shown = shown[:200]
	}
	return newError("protocol-error", fmt.Sprintf("unreadable reply (%s): %q", why, shown))
}

// readReplyLine reads one line from r (a bufio.Reader of at least maxReplyLine bytes) without
// its "\n" or "\r\n". A line longer than maxReplyLine is a protocol-error at once, whatever
// follows it: nothing past the bound is buffered. The returned slice is valid until the next
// read.
func readReplyLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || (err == nil && len(line) > maxReplyLine+2) {
		return nil, newError("protocol-error", fmt.Sprintf("a reply line longer than %d bytes", maxReplyLine))
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

// Request lines. Keys are checked (ValidKey) and durations converted before these are called.

func acquireLine(key, lease, wait string) string { return "A " + key + " " + lease + " " + wait + "\n" }

func releaseLine(key string, token uint64) string {
	return "R " + key + " " + strconv.FormatUint(token, 10) + "\n"
}

func identityLine(identity string) string { return "I " + identity + "\n" }
