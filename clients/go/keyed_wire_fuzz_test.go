package baton

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

var replySeeds = []string{
	"A x 1", "A jobs/nightly 18446744073709551615", "A x 18446744073709551616", "A x 123456789012345678901",
	"A x 00000000000000000001", "A x -1", "A x", "A  1", "T x", "T x y", "R x OK", "R x STALE", "R x MAYBE",
	"R OK", "E A x bad-key bad key", "E - - server-going-away going away", "E - -", "E A", "E I ? bad-identity no",
	"I OK", "I NO", "M 127.0.0.1:7070", "M [::1]:7070", "M host", "M :1", "M host:99999", "HELLO x 1", "",
	"A ключ 5", "A x\xff 1", "T \xed\xa0\x80", "A x 1 2", "\x00\x00\x00", "E - - x " + strings.Repeat("y", 5000),
}

// checkReply is what every line must give: a tagged reply that holds together, or a
// protocol-error; never a panic.
func checkReply(t *testing.T, line []byte) {
	reply, err := parseKeyedReply(line)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Code != "protocol-error" {
			t.Fatalf("%q: error %v is not a protocol-error", line, err)
		}
		return
	}
	switch reply.kind {
	case replyGranted:
		text := string(line)
		written, err := strconv.ParseUint(text[strings.LastIndexByte(text, ' ')+1:], 10, 64)
		if !ValidKey(reply.key) || reply.slot != "A "+reply.key || err != nil || written != reply.token {
			t.Fatalf("%q: grant %+v does not hold together", line, reply)
		}
	case replyTimeout, replyReleased, replyStale:
		if !ValidKey(reply.key) {
			t.Fatalf("%q: key %q is not a key", line, reply.key)
		}
	case replyRequestError, replyConnError:
		if reply.code == "" {
			t.Fatalf("%q: error without a code", line)
		}
	case replyRedirect:
		if _, _, ok := parseAddress(reply.address, 0); !ok {
			t.Fatalf("%q: redirect to %q", line, reply.address)
		}
	case replyIdentityOK:
	default:
		t.Fatalf("%q: no kind", line)
	}
}

// FuzzKeyedReply: `go test -fuzz FuzzKeyedReply` explores; plain `go test` runs the seeds.
func FuzzKeyedReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkReply(t, line)
		// And through the line reader: never more than one bounded line at a time.
		r := bufio.NewReaderSize(bytes.NewReader(append(line, '\n')), maxReplyLine)
		for {
			if _, err := readReplyLine(r); err != nil {
				break
			}
		}
	})
}

func TestTokensAreU64Exactly(t *testing.T) {
	good := map[string]uint64{"1": 1, "9007199254740993": 9007199254740993, "18446744073709551615": 1<<64 - 1}
	for text, want := range good {
		if got, ok := parseToken(text); !ok || got != want {
			t.Errorf("parseToken(%q) = %d %v", text, got, ok)
		}
	}
	for _, text := range []string{"", "18446744073709551616", "123456789012345678901", "+1", "-1", "1_0", " 1", "0x1"} {
		if _, ok := parseToken(text); ok {
			t.Errorf("parseToken(%q) accepted", text)
		}
	}
}

// TestHostileReplyBytes feeds thousands of random and mangled lines to the parser and the line
// reader: each gives a reply or a protocol-error, none panics, and the whole run ends.
func TestHostileReplyBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(28))
	alphabet := []byte("ARTEIMOKSTALE -?0123456789x:.[]\r\n\t\x00\xff\xc3\xa9")
	for i := 0; i < 20000; i++ {
		var line []byte
		switch i % 4 {
		case 0: // random bytes
			line = make([]byte, rng.Intn(64))
			rng.Read(line)
		case 1: // protocol-ish characters
			line = make([]byte, rng.Intn(40))
			for j := range line {
				line[j] = alphabet[rng.Intn(len(alphabet))]
			}
		case 2: // a seed with one byte changed, inserted or cut
			line = []byte(replySeeds[rng.Intn(len(replySeeds))])
			if len(line) > 0 {
				j := rng.Intn(len(line))
				switch rng.Intn(3) {
				case 0:
					line[j] = byte(rng.Intn(256))
				case 1:
					line = append(line[:j:j], append([]byte{alphabet[rng.Intn(len(alphabet))]}, line[j:]...)...)
				default:
					line = line[:j]
				}
			}
		default: // grants with long or huge tokens
			line = []byte("A x " + strings.Repeat(strconv.Itoa(rng.Intn(10)), 1+rng.Intn(25)))
		}
		checkReply(t, line)
	}
}

// A 10 MB line without its end: the reader refuses it after one buffer, and what it read stays
// bounded (it never holds the line).
func TestLineReaderRefusesAnOverlongLine(t *testing.T) {
	src := &countingReader{r: io.LimitReader(repeatReader('A'), 10<<20)}
	r := bufio.NewReaderSize(src, maxReplyLine)
	_, err := readReplyLine(r)
	var e *Error
	if !errors.As(err, &e) || e.Code != "protocol-error" {
		t.Fatalf("overlong line: %v, want protocol-error", err)
	}
	if src.n > 2*maxReplyLine {
		t.Fatalf("read %d bytes of an overlong line, want at most %d", src.n, 2*maxReplyLine)
	}
	ok := bufio.NewReaderSize(strings.NewReader("A x 1\r\nT y\n"), maxReplyLine)
	for _, want := range []string{"A x 1", "T y"} {
		if line, err := readReplyLine(ok); err != nil || string(line) != want {
			t.Fatalf("got %q %v, want %q", line, err, want)
		}
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
