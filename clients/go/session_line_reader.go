package baton

// Splits what a session server sends into lines. Server lines are short: a run of more than
// maxServerLine bytes without a newline means the peer is not a Baton server, and is an error
// at once rather than 10 MB buffered. Lines must be valid UTF-8 (the protocol's rule).

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// maxServerLine bounds one server line, as the TypeScript client's socket connector does.
const maxServerLine = 64 * 1024

type lineReader struct {
	r       io.Reader
	buf     []byte // bytes read, not yet returned as lines
	scratch []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, scratch: make([]byte, 4096)}
}

// Next returns the next non-empty line without its "\n" or "\r\n". Errors: the reader's own
// (io.EOF when the server closed), or an *Error "protocol-error" for an overlong line or bytes
// that are not UTF-8. A half line before EOF is io.ErrUnexpectedEOF.
func (l *lineReader) Next() (string, error) {
	for {
		if i := bytes.IndexByte(l.buf, '\n'); i >= 0 {
			raw := l.buf[:i]
			l.buf = l.buf[i+1:]
			if n := len(raw); n > 0 && raw[n-1] == '\r' {
				raw = raw[:n-1]
			}
			if len(raw) == 0 {
				continue
			}
			if len(raw) > maxServerLine {
				return "", newError("protocol-error", "a server line longer than 64 KiB")
			}
			if !utf8.Valid(raw) {
				return "", unreadableSessionLine(string(raw), "a server line that is not UTF-8")
			}
			return string(raw), nil
		}
		if len(l.buf) > maxServerLine {
			return "", newError("protocol-error", "a server line longer than 64 KiB")
		}
		n, err := l.r.Read(l.scratch)
		if n > 0 {
			// Copy out of scratch: compact what is left so the buffer does not grow without end.
			rest := make([]byte, len(l.buf), len(l.buf)+n)
			copy(rest, l.buf)
			l.buf = append(rest, l.scratch[:n]...)
		}
		if err != nil {
			if n > 0 {
				continue // hand out complete lines first
			}
			if err == io.EOF && len(l.buf) > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}
