package baton

// The conformance runner (conformance/README.md): starts the kit server
// (`node bin/baton conformance-server --port 0`), and for every vector of
// conformance/vectors/*.json runs one subtest: `PLAY <id>`, the client steps against the
// addresses of `READY`, the client closed, `DONE`, and the kit server's verdict must be `PASS`
// with every step reaching its outcome.
//
// Keyed vectors are played here. Session vectors are played by a hook that the session client's
// tests set in an init() of conformance_session_test.go:
//
//	sessionConformanceStep = func(t *testing.T, step map[string]any, ctx *conformanceContext) error
//
// The contract of the hook:
//   - The runner plays `sleep_ms` and `await` itself and hands the hook every other step
//     (`call` hold and release, `await_lost`, `not_lost`, `close_client`), in order, and after
//     the last step once more `{"close_client": true}` (closing twice must be harmless).
//   - The hook builds its client on first use from ctx.Options (the vector's client.options as
//     decoded JSON) and ctx.Addresses (the READY addresses of the option's nodes, in order),
//     and keeps it in ctx.State.
//   - A `call` step registers ctx.Calls[id] = newConformanceCall() and returns at once; the
//     call's goroutine ends it with call.finish(result, outcome), outcome being the vector
//     shape: {"granted": "<token>"}, {"timeout": true}, {"released": true}, {"error": "<name>"}
//     (outcomeOfError maps an error to the last two). result is what a later step needs (the
//     claim, for a release or an await_lost).
//   - await_lost, not_lost and close_client are played in full before returning.
//   - A non-nil error fails the step (the runner goes on with the next, like the TS runner).
// With no hook set, session vectors fail with "session steps not implemented".

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-locks/baton/clients/go/internal/batontest"
)

// sessionConformanceStep plays a session vector's step (see the contract above); nil until the
// session client's tests set it.
var sessionConformanceStep func(t *testing.T, step map[string]any, ctx *conformanceContext) error

// conformanceContext is one vector being played.
type conformanceContext struct {
	Vector    map[string]any // the whole vector, as decoded JSON
	Options   map[string]any // client.options
	Addresses []string       // the READY addresses of options.addresses, in order
	Calls     map[string]*conformanceCall
	State     any // the client under test (the hook's to set and use)
}

// conformanceCall is one client call started by a step.
type conformanceCall struct {
	done    chan struct{}
	once    sync.Once
	Result  any            // set before done closes: what a later step needs (*Grant, a claim)
	Outcome map[string]any // set before done closes: the vector's outcome shape
}

func newConformanceCall() *conformanceCall { return &conformanceCall{done: make(chan struct{})} }

// finish records the call's result and outcome; only the first call counts.
func (c *conformanceCall) finish(result any, outcome map[string]any) {
	c.once.Do(func() {
		c.Result, c.Outcome = result, outcome
		close(c.done)
	})
}

// Done is closed when the call has finished.
func (c *conformanceCall) Done() <-chan struct{} { return c.done }

// outcomeOfError is the vector's outcome for a failed call: {"timeout": true} for ErrTimeout,
// {"error": "<shared name>"} for any other *Error.
func outcomeOfError(err error) map[string]any {
	var e *Error
	switch {
	case errors.Is(err, ErrTimeout):
		return map[string]any{"timeout": true}
	case errors.As(err, &e):
		return map[string]any{"error": e.Code}
	}
	return map[string]any{"error": "not a baton error: " + err.Error()}
}

type vectorFile struct {
	Protocol string           `json:"protocol"`
	Vectors  []map[string]any `json:"vectors"`
}

func TestConformance(t *testing.T) {
	root := batontest.RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "conformance", "vectors", "*.json"))
	if len(files) == 0 {
		t.Fatal("no vector files in conformance/vectors")
	}
	sort.Strings(files)
	_, line := batontest.StartProcess(t, "conformance-server", nil, 30*time.Second,
		func(line string) bool { return strings.HasPrefix(line, "conformance server control=") },
		"conformance-server", "--port", "0")
	control := strings.Fields(strings.TrimPrefix(line, "conformance server control="))[0]
	for _, file := range files {
		var vf vectorFile
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(text, &vf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, vector := range vf.Vectors {
			vector["protocol"] = vf.Protocol
			id, _ := vector["id"].(string)
			t.Run(id, func(t *testing.T) { playVector(t, control, vector) })
		}
	}
}

// playVector plays one vector against the kit server at control.
func playVector(t *testing.T, control string, vector map[string]any) {
	conn, err := net.DialTimeout("tcp", control, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lines := bufio.NewReader(conn)
	ask := func(text string) string {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(text + "\n")); err != nil {
			t.Fatalf("control: %v", err)
		}
		answer, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("control: no answer to %s: %v", text, err)
		}
		return strings.TrimRight(answer, "\r\n")
	}
	ready := ask("PLAY " + vector["id"].(string))
	fields := strings.Fields(ready)
	if len(fields) == 0 || fields[0] != "READY" {
		t.Fatalf("PLAY answered %q", ready)
	}
	nodes := map[string]string{}
	for _, pair := range fields[1:] {
		if i := strings.IndexByte(pair, '='); i > 0 {
			nodes[pair[:i]] = pair[i+1:]
		}
	}
	client, _ := vector["client"].(map[string]any)
	ctx := &conformanceContext{Vector: vector, Calls: map[string]*conformanceCall{}}
	ctx.Options, _ = client["options"].(map[string]any)
	if ctx.Options == nil {
		ctx.Options = map[string]any{}
	}
	names, _ := ctx.Options["addresses"].([]any)
	if len(names) == 0 {
		names = []any{"n1"}
	}
	for _, n := range names {
		name, _ := n.(string)
		if addr, ok := nodes[name]; ok {
			ctx.Addresses = append(ctx.Addresses, addr)
		} else {
			ctx.Addresses = append(ctx.Addresses, name)
		}
	}
	steps, _ := client["steps"].([]any)
	failures := runConformanceSteps(t, vector["protocol"] == "keyed", steps, ctx)
	verdict := ask("DONE")
	if verdict != "PASS" {
		failures = append(failures, "kit server: "+verdict)
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// runConformanceSteps plays every step and closes the client; it returns one line per step
// that did not reach its outcome.
func runConformanceSteps(t *testing.T, keyed bool, steps []any, ctx *conformanceContext) []string {
	var failures []string
	play := func(step map[string]any) error {
		if keyed {
			return keyedConformanceStep(t, step, ctx)
		}
		if sessionConformanceStep == nil {
			return errors.New("session steps not implemented")
		}
		return sessionConformanceStep(t, step, ctx)
	}
	for i, s := range steps {
		step, _ := s.(map[string]any)
		var err error
		switch {
		case step["sleep_ms"] != nil:
			time.Sleep(millis(step["sleep_ms"]))
		case step["await"] != nil:
			err = awaitStep(step, ctx)
		default:
			err = play(step)
		}
		if err != nil {
			shown, _ := json.Marshal(step)
			failures = append(failures, fmt.Sprintf("client step %d %s: %v", i+1, shown, err))
		}
	}
	if err := play(map[string]any{"close_client": true}); err != nil {
		failures = append(failures, "closing the client: "+err.Error())
	}
	// Every call ends once the client is closed.
	for id, call := range ctx.Calls {
		select {
		case <-call.Done():
		case <-time.After(5 * time.Second):
			failures = append(failures, fmt.Sprintf("call %s still running 5 s after the client was closed", id))
		}
	}
	return failures
}

// awaitStep waits up to within_ms for a call and compares its outcome.
func awaitStep(step map[string]any, ctx *conformanceContext) error {
	id, _ := step["await"].(string)
	call := ctx.Calls[id]
	if call == nil {
		return fmt.Errorf("no call %q", id)
	}
	select {
	case <-call.Done():
	case <-time.After(millis(step["within_ms"])):
		return fmt.Errorf("not finished within %v", millis(step["within_ms"]))
	}
	wanted, _ := step["outcome_any"].([]any)
	if o, ok := step["outcome"]; ok {
		wanted = append(wanted, o)
	}
	for _, w := range wanted {
		if reflect.DeepEqual(w, call.Outcome) {
			return nil
		}
	}
	got, _ := json.Marshal(call.Outcome)
	return fmt.Errorf("got %s", got)
}

// millis reads a JSON number of milliseconds; absent is 0 (the option's default).
func millis(v any) time.Duration {
	f, _ := v.(float64)
	return time.Duration(f * float64(time.Millisecond))
}
