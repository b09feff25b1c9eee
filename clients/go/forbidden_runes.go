package baton

import "unicode"

// forbiddenRune is the server's rule for a character outside ASCII in a key or an identity:
// control (Cc), format (Cf), line or paragraph separator (Zl, Zp). Whitespace is decided by the
// callers, since an identity allows the plain space and a key does not.
//
// Go 1.19 knows Unicode 13; the server (Node 20) knows a later version, where a few more code
// points are format characters. They are listed here so that this client refuses exactly what
// the server refuses (a newer Go already has them in unicode.Cf; listing them twice is harmless).
func forbiddenRune(r rune) bool {
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
		return true
	}
	switch {
	case r == 0x0890 || r == 0x0891: // ARABIC POUND/PIASTRE MARK ABOVE (Unicode 14)
		return true
	case r >= 0x13439 && r <= 0x1343F: // Egyptian hieroglyph format controls (Unicode 15)
		return true
	}
	return false
}
