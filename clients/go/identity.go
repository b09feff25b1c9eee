package baton

import (
	"fmt"
	"os"
	"os/user"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIdentityBytes is the longest client identity the server takes, in bytes of UTF-8.
const MaxIdentityBytes = 128

// ValidIdentity reports whether the server takes name as a client identity (keyed `I`, session
// `CLIENT`) and shows that same string: 1 to 128 bytes of well-formed UTF-8; spaces (U+0020)
// inside but not at either end; no control, format, line or paragraph separator characters and
// no whitespace but the plain space. It is isValidClientName of lib/protocol/client-name.ts.
func ValidIdentity(name string) bool {
	n := len(name)
	if n < 1 || n > MaxIdentityBytes {
		return false
	}
	if name[0] == ' ' || name[n-1] == ' ' {
		return false
	}
	ascii := true
	for i := 0; i < n; i++ {
		b := name[i]
		if b < ' ' || b == 0x7f {
			return false
		}
		if b >= 0x80 {
			ascii = false
		}
	}
	if ascii {
		return true
	}
	if !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if identityForbidden(r) {
			return false
		}
	}
	return true
}

// identityForbidden: what client-name.ts's FORBIDDEN matches, one character at a time.
func identityForbidden(r rune) bool {
	return forbiddenRune(r) || (r != ' ' && unicode.IsSpace(r))
}

// DefaultIdentity is the identity a client sends unless told otherwise: "<user>@<host> pid
// <pid>", so an operator can tell a stuck worker by more than its port. It is made valid (a
// forbidden character becomes '?') and cut to 128 bytes on a character boundary, as the
// TypeScript clients do (lib/client/default-client-name.ts). Empty only if nothing is left.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "?"
	}
	return toIdentity(fmt.Sprintf("%s@%s pid %d", userName(), host, os.Getpid()))
}

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	// No passwd entry for this uid (a container): the environment may still say.
	for _, name := range []string{"USER", "LOGNAME"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

// toIdentity makes a valid identity of any text (toClientName of client-name.ts): forbidden
// characters and bytes that are not UTF-8 become '?', the ends are trimmed, and the result is
// cut to 128 bytes on a character boundary. Empty when nothing is left.
func toIdentity(text string) string {
	var out strings.Builder
	for _, r := range strings.TrimSpace(text) {
		// range yields RuneError for a byte that is not UTF-8, as JS would a lone surrogate.
		if r == utf8.RuneError || identityForbidden(r) {
			r = '?'
		}
		if out.Len()+utf8.RuneLen(r) > MaxIdentityBytes {
			break
		}
		out.WriteRune(r)
	}
	return strings.TrimSpace(out.String())
}

// resolveIdentity is the identity a client sends: none with NoIdentity, the option when given
// (checked: a bad one is ErrBadIdentity, refused before anything is dialled), else the default.
func resolveIdentity(o Options) (identity string, send bool, err error) {
	if o.NoIdentity {
		return "", false, nil
	}
	if o.Identity == "" {
		id := DefaultIdentity()
		return id, id != "", nil
	}
	if !ValidIdentity(o.Identity) {
		return "", false, newError("bad-identity", fmt.Sprintf("%q: 1-%d bytes of UTF-8, no control characters, no spaces at the ends", o.Identity, MaxIdentityBytes))
	}
	return o.Identity, true, nil
}
