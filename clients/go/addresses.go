package baton

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The ports `baton serve` listens on by default.
const (
	DefaultKeyedPort   = 7070
	DefaultSessionPort = 7071
)

// parseAddress reads "host:port", "[v6]:port" or a bare host (which takes defaultPort; a
// defaultPort of 0 refuses it), as lib/protocol/address-text.ts does for what people type and
// what `M`, `REDIRECT` and `MOVED` lines carry. ok is false for anything else.
func parseAddress(text string, defaultPort int) (host string, port int, ok bool) {
	var portText string
	hasPort := false
	if strings.HasPrefix(text, "[") {
		end := strings.IndexByte(text, ']')
		if end < 0 {
			return "", 0, false
		}
		host = text[1:end]
		rest := text[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", 0, false
			}
			portText, hasPort = rest[1:], true
		}
	} else {
		colon := strings.LastIndexByte(text, ':')
		// More than one colon without brackets is a bare IPv6 address, not host:port.
		if colon >= 0 && strings.IndexByte(text, ':') == colon {
			host, portText, hasPort = text[:colon], text[colon+1:], true
		} else {
			host = text
		}
	}
	if host == "" {
		return "", 0, false
	}
	if !hasPort {
		if defaultPort == 0 {
			return "", 0, false
		}
		return host, defaultPort, true
	}
	if len(portText) < 1 || len(portText) > 5 {
		return "", 0, false
	}
	for i := 0; i < len(portText); i++ {
		if portText[i] < '0' || portText[i] > '9' {
			return "", 0, false
		}
	}
	port, _ = strconv.Atoi(portText)
	if port < 1 || port > 65535 {
		return "", 0, false
	}
	return host, port, true
}

// joinAddress is the dialable form: "host:port", "[v6]:port".
func joinAddress(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// normalizeAddresses turns the caller's list into dialable addresses; an empty list is the
// default address, an unreadable entry is ErrBadUsage (refused before anything is dialled).
func normalizeAddresses(list []string, defaultPort int) ([]string, error) {
	if len(list) == 0 {
		return []string{joinAddress("127.0.0.1", defaultPort)}, nil
	}
	out := make([]string, 0, len(list))
	for _, text := range list {
		host, port, ok := parseAddress(text, defaultPort)
		if !ok {
			return nil, newError("bad-usage", fmt.Sprintf("not a server address: %q (host:port)", text))
		}
		out = append(out, joinAddress(host, port))
	}
	return out, nil
}
