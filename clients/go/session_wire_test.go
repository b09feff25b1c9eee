package baton

import (
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestParseSessionLinesABatonServerSends(t *testing.T) {
	cases := []struct {
		line string
		want sessionReply
	}{
		{"ACQUIRED 7", sessionReply{kind: sessionAcquired, token: 7}},
		{"ACQUIRED 9007199254740993", sessionReply{kind: sessionAcquired, token: 9007199254740993}},
		{"ACQUIRED 18446744073709551615", sessionReply{kind: sessionAcquired, token: 18446744073709551615}},
		{"ACQUIRED 00000000000000000042", sessionReply{kind: sessionAcquired, token: 42}},
		{"WAITING 1", sessionReply{kind: sessionWaiting, position: 1}},
		{"WAITING 999999999999999", sessionReply{kind: sessionWaiting, position: 999999999999999}},
		{"REDIRECT 127.0.0.1:7071", sessionReply{kind: sessionRedirect, address: "127.0.0.1:7071"}},
		{"MOVED [::1]:7171", sessionReply{kind: sessionMoved, address: "[::1]:7171"}},
	}
	for _, c := range cases {
		got, err := parseSessionLine(c.line)
		if err != nil || got != c.want {
			t.Errorf("%q: got %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}

func TestParseSessionErrorsCarryTheSharedNames(t *testing.T) {
	cases := map[string]*Error{
		"ERROR 0x01 server going away":            ErrServerGoingAway,
		"ERROR 0x02 protocol error: bad lease_ms": ErrProtocol,
		"ERROR 0x03 lease expired":                ErrLeaseExpired,
		"ERROR 0x04 force-released by an admin":   ErrForceReleased,
		"ERROR 0x05 removed from the queue":       ErrKicked,
		"ERROR 0x06 too many connections":         ErrTooManyConnections,
		"ERROR 0x07 fencing tokens exhausted":     ErrTokensExhausted,
		"ERROR 0x08 storage unavailable":          ErrStorageUnavailable,
		"ERROR 0x09 claim unknown: no such claim": ErrClaimUnknown,
		"ERROR 0x01":                     ErrServerGoingAway,
		"ERROR 0x2A from a newer server": ErrProtocol,
	}
	for line, want := range cases {
		got, err := parseSessionLine(line)
		if err != nil || got.kind != sessionErrorLine || !errors.Is(got.err, want) {
			t.Errorf("%q: got %+v, %v; want %v", line, got, err, want)
		}
	}
	got, _ := parseSessionLine("ERROR 0x04 force-released by an admin")
	if got.err.Detail != "force-released by an admin" || got.err.ServerSide() {
		t.Errorf("0x04: detail %q, server side %v", got.err.Detail, got.err.ServerSide())
	}
	got, _ = parseSessionLine("ERROR 0x01 server going away")
	if !got.err.ServerSide() {
		t.Error("0x01 is the server's condition: retried elsewhere")
	}
}

func TestUnreadableSessionLinesAreProtocolErrors(t *testing.T) {
	for _, line := range []string{
		"ACQUIRED 123456789012345678901", // 21 digits
		"ACQUIRED 18446744073709551616",  // 2^64
		"ACQUIRED -1", "ACQUIRED", "ACQUIRED 1.5", "ACQUIRED 7 ", "ACQUIRED +7",
		"WAITING 0", "WAITING", "WAITING x", "WAITING 1234567890123456",
		"ERROR", "ERROR 1 text", "ERROR 0x text", "ERROR 0xZZ text", "ERROR 0x12345 text", "ERROR 0x+1",
		"REDIRECT", "REDIRECT host", "REDIRECT host:0", "REDIRECT host:70000", "MOVED :7071", "MOVED a b:1",
		"OK", "A x 1", "acquired 7", " ACQUIRED 7", "HELLO",
	} {
		_, err := parseSessionLine(line)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v, want a protocol error", line, err)
		}
	}
}

func TestEncodeSessionRequests(t *testing.T) {
	if got := encodeAcquire("jobs/nightly", 10000, ""); got != "ACQUIRE jobs/nightly 10000\n" {
		t.Errorf("acquire: %q", got)
	}
	key := strings.Repeat("ab", 16)
	if got := encodeAcquire("x", 1, key); got != "ACQUIRE x 1 "+key+"\n" {
		t.Errorf("acquire with key: %q", got)
	}
	if got := encodeResume("x", key); got != "RESUME x "+key+"\n" {
		t.Errorf("resume: %q", got)
	}
	if got := encodeClient("w@h pid 1"); got != "CLIENT w@h pid 1\n" {
		t.Errorf("client: %q", got)
	}
	if encodeClient("") != "" {
		t.Error("no identity must send no line")
	}
	if heartbeatLine != "HEARTBEAT\n" {
		t.Error("heartbeat line")
	}
	k := newClaimKey()
	if len(k) != 32 || strings.Trim(k, "0123456789abcdef") != "" || k == newClaimKey() {
		t.Errorf("claim key %q: want 32 random hex characters", k)
	}
}

func readAll(t *testing.T, input string) ([]string, error) {
	t.Helper()
	r := newLineReader(strings.NewReader(input))
	var lines []string
	for {
		line, err := r.Next()
		if err != nil {
			return lines, err
		}
		lines = append(lines, line)
	}
}

func TestLineReaderSplitsLinesAndRefusesBadBytes(t *testing.T) {
	lines, err := readAll(t, "ACQUIRED 1\r\nWAITING 2\n\nACQUIRED 3\n")
	if err != io.EOF || strings.Join(lines, "|") != "ACQUIRED 1|WAITING 2|ACQUIRED 3" {
		t.Fatalf("lines %q, %v", lines, err)
	}
	if _, err := readAll(t, "ACQUIRED 1\nACQ"); err != io.ErrUnexpectedEOF {
		t.Fatalf("half line then EOF: %v", err)
	}
	if _, err := readAll(t, "ACQUIRED \xff\n"); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad UTF-8: %v", err)
	}
	if _, err := readAll(t, strings.Repeat("x", 70*1024)+"\n"); !errors.Is(err, ErrProtocol) {
		t.Fatalf("overlong line: %v", err)
	}
}

// endless is a 10 MB line without its end, produced lazily: the reader must stop long before.
type endless struct{ served int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.served += len(p)
	return len(p), nil
}

func TestLineReaderNeverBuffersAHugeLine(t *testing.T) {
	src := &endless{}
	_, err := newLineReader(src).Next()
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("endless line: %v", err)
	}
	if src.served > 2*maxServerLine {
		t.Fatalf("read %d bytes before refusing the line", src.served)
	}
}

// parseNeverPanics is what the fuzz target and the random test check for one input.
func parseNeverPanics(t *testing.T, data []byte) {
	reply, err := parseSessionLine(string(data))
	if err != nil {
		if !errors.Is(err, ErrProtocol) {
			t.Fatalf("%q: error %v is not a protocol error", data, err)
		}
		return
	}
	if reply.kind < sessionAcquired || reply.kind > sessionMoved {
		t.Fatalf("%q: no kind", data)
	}
	if reply.kind == sessionErrorLine && reply.err == nil {
		t.Fatalf("%q: ERROR without an error", data)
	}
	// The same bytes through the line reader: lines or a clear error, never a hang.
	r := newLineReader(strings.NewReader(string(data) + "\n"))
	for i := 0; i < len(data)+2; i++ {
		if _, err := r.Next(); err != nil {
			return
		}
	}
	t.Fatalf("%q: the line reader did not finish", data)
}

func FuzzSessionLine(f *testing.F) {
	for _, seed := range []string{
		"ACQUIRED 7", "ACQUIRED 18446744073709551615", "ACQUIRED 123456789012345678901", "WAITING 1",
		"ERROR 0x01 server going away", "ERROR 0x09 claim unknown", "REDIRECT 127.0.0.1:7071",
		"MOVED [::1]:1", "MOVED", "ERROR 0x", "ACQUIRED \xff", "\x00\x00", "WAITING 99999999999999999999",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { parseNeverPanics(t, data) })
}

func TestRandomHostileSessionBytes(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	words := []string{"ACQUIRED ", "WAITING ", "ERROR 0x0", "REDIRECT ", "MOVED ", "1", "99999999999999999999999", " ", "\r", "\xff", ":", "[", "]"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.Intn(6); n >= 0; n-- {
			if rng.Intn(2) == 0 {
				b.WriteString(words[rng.Intn(len(words))])
			} else {
				b.WriteByte(byte(rng.Intn(256)))
			}
		}
		data := []byte(b.String())
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("seed %d: %q panicked: %v", seed, data, p)
				}
			}()
			parseNeverPanics(t, data)
		}()
	}
}

func TestHugeLeasesDoNotOverflowDurations(t *testing.T) {
	if got := leaseDuration(999_999_999_999_999); got != longestLease {
		t.Fatalf("15-digit lease timed as %v", got)
	}
	if got := leaseDuration(1500); got != 1500*time.Millisecond {
		t.Fatalf("1500 ms timed as %v", got)
	}
}
