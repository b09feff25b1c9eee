package baton

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxKeyBytes is the longest key (lock name) the server takes, in bytes of UTF-8.
const MaxKeyBytes = 250

// ValidKey reports whether the server takes name as a key and holds it under that same name:
// 1 to 250 bytes of well-formed UTF-8 without whitespace (NBSP, U+2028 included), control or
// format characters (U+FEFF included). It is the rule of lib/protocol/key-rules.ts (the server's
// parseKey): a name the server refused would be answered with a key in the server's spelling,
// which no client could match to its request, so names are checked before they are sent.
func ValidKey(name string) bool {
	if len(name) < 1 || len(name) > MaxKeyBytes {
		return false
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		b := name[i]
		if b <= 0x20 || b == 0x7f {
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
		if unicode.IsSpace(r) || forbiddenRune(r) {
			return false
		}
	}
	return true
}

// checkKey returns ErrBadKey (with the name quoted) unless ValidKey(name).
func checkKey(name string) error {
	if ValidKey(name) {
		return nil
	}
	return newError("bad-key", fmt.Sprintf("bad key %q: 1-%d bytes of UTF-8 without whitespace or control characters", name, MaxKeyBytes))
}
