package baton

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestValidKey(t *testing.T) {
	good := []string{"jobs/nightly", "db:orders:42", "ключ", "x", strings.Repeat("k", 250), strings.Repeat("é", 125)}
	bad := []string{"", "a b", "a\tb", "a\x7f", "a\u00a0b", "a\u2028b", "\ufeffa", "a\u200bb", "a\u0890", "a\U00013439",
		strings.Repeat("k", 251), strings.Repeat("é", 126), "a\xffb", "\xed\xa0\x80"}
	for _, k := range good {
		if !ValidKey(k) {
			t.Errorf("ValidKey(%q) = false, want true", k)
		}
	}
	for _, k := range bad {
		if ValidKey(k) {
			t.Errorf("ValidKey(%q) = true, want false", k)
		}
	}
}

func TestValidIdentity(t *testing.T) {
	good := []string{"worker-7@host-3 pid 4121", "a", "ключ мой", strings.Repeat("i", 128)}
	bad := []string{"", " a", "a ", "a\tb", "a\nb", "a\u00a0b", "a\u3000b", "a\u202eb", strings.Repeat("i", 129), "a\xff"}
	for _, n := range good {
		if !ValidIdentity(n) {
			t.Errorf("ValidIdentity(%q) = false, want true", n)
		}
	}
	for _, n := range bad {
		if ValidIdentity(n) {
			t.Errorf("ValidIdentity(%q) = true, want false", n)
		}
	}
}

func TestDefaultIdentityIsValidAndCut(t *testing.T) {
	id := DefaultIdentity()
	if !ValidIdentity(id) || !strings.Contains(id, " pid ") {
		t.Fatalf("DefaultIdentity() = %q", id)
	}
	long := toIdentity(strings.Repeat("ж", 100) + "\t\u202e x ")
	if len(long) > MaxIdentityBytes || !utf8.ValidString(long) || !ValidIdentity(long) {
		t.Fatalf("toIdentity cut badly: %q (%d bytes)", long, len(long))
	}
	if got := toIdentity(" a\tb\u202ec\xff "); got != "a?b?c?" {
		t.Fatalf("toIdentity replaced badly: %q", got)
	}
}

func TestResolveIdentity(t *testing.T) {
	if _, send, _ := resolveIdentity(Options{NoIdentity: true}); send {
		t.Fatal("NoIdentity sends one")
	}
	if id, send, err := resolveIdentity(Options{Identity: "me"}); err != nil || !send || id != "me" {
		t.Fatalf("got %q %v %v", id, send, err)
	}
	if _, _, err := resolveIdentity(Options{Identity: " me"}); !isCode(err, "bad-identity") {
		t.Fatalf("bad identity accepted: %v", err)
	}
}

func TestSecondsText(t *testing.T) {
	cases := map[time.Duration]string{
		0: "0", time.Nanosecond: "0.000000001", 250 * time.Millisecond: "0.25", 30 * time.Second: "30",
		1500 * time.Millisecond: "1.5", 300 * time.Millisecond: "0.3", time.Millisecond: "0.001",
		time.Duration(1<<63 - 1): "9223372036.854775807",
	}
	for d, want := range cases {
		if got := secondsText(d); got != want {
			t.Errorf("secondsText(%v) = %q, want %q", d, got, want)
		}
	}
	if _, err := keyedLeaseText(0); !isCode(err, "bad-lease") {
		t.Errorf("lease 0 accepted: %v", err)
	}
	if _, err := keyedWaitText(-1); !isCode(err, "bad-wait") {
		t.Errorf("wait -1 accepted: %v", err)
	}
	if ms, _ := sessionMillis(time.Microsecond); ms != 1 {
		t.Errorf("sessionMillis(1µs) = %d, want 1", ms)
	}
	if ms, _ := sessionMillis(10 * time.Second); ms != 10000 {
		t.Errorf("sessionMillis(10s) = %d", ms)
	}
}

func TestParseAddress(t *testing.T) {
	type want struct {
		host string
		port int
		ok   bool
	}
	cases := map[string]want{
		"127.0.0.1:7070": {"127.0.0.1", 7070, true}, "[::1]:80": {"::1", 80, true}, "host": {"host", 7070, true},
		"::1": {"::1", 7070, true}, "h:0": {"", 0, false}, "h:65536": {"", 0, false}, ":80": {"", 0, false},
		"h:8x": {"", 0, false}, "[::1": {"", 0, false}, "[::1]x": {"", 0, false}, "h:": {"", 0, false},
	}
	for text, w := range cases {
		h, p, ok := parseAddress(text, DefaultKeyedPort)
		if h != w.host || p != w.port || ok != w.ok {
			t.Errorf("parseAddress(%q) = %q %d %v, want %v", text, h, p, ok, w)
		}
	}
	list, err := normalizeAddresses([]string{"[::1]:80", "a"}, 7071)
	if err != nil || list[0] != "[::1]:80" || list[1] != "a:7071" {
		t.Fatalf("normalizeAddresses: %v %v", list, err)
	}
	if _, err := normalizeAddresses([]string{"h:x"}, 7071); err == nil {
		t.Fatal("a bad address was accepted")
	}
}

func isCode(err error, code string) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}
