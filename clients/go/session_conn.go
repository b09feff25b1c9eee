package baton

// One TCP connection of a claim: dialled and read by its own goroutine, which turns everything
// into events for the claim's run loop (session_run.go). A claim's run loop is the only one
// that writes, so the connection needs no lock. Events carry the connection's generation: the
// run loop ignores whatever a connection it has left still says.

import (
	"errors"
	"io"
	"net"
	"time"
)

type connEventKind int

const (
	eventOpened connEventKind = iota + 1
	eventLine
	// eventClosed: the dial failed, the server closed, or the bytes were unreadable (err says).
	eventClosed
)

type connEvent struct {
	gen  int
	kind connEventKind
	conn net.Conn // eventOpened
	line string   // eventLine
	err  error    // eventClosed
}

// writeTimeout bounds one write of a request line; a server that does not read for this long
// is as good as gone (its --io-timeout ends such connections too).
const writeTimeout = 5 * time.Second

// dialAndRead dials address and then reads it until it ends, sending events to events until
// quit is closed. It is the connection's permanent reader (ACQUIRED may be pushed at any time),
// and the only one who closes the connection: a connection the claim leaves is half-closed
// (leave) and read to its end here, so that no unread byte turns the close into a reset.
func dialAndRead(gen int, address string, dialTimeout time.Duration, events chan<- connEvent, quit <-chan struct{}) {
	send := func(ev connEvent) bool {
		select {
		case events <- ev:
			return true
		case <-quit:
			return false
		}
	}
	conn, err := net.DialTimeout("tcp", address, dialTimeout)
	if err != nil {
		send(connEvent{gen: gen, kind: eventClosed, err: newError("connection-lost", address+": "+err.Error())})
		return
	}
	defer conn.Close()
	if !send(connEvent{gen: gen, kind: eventOpened, conn: conn}) {
		return // the claim ended while we dialled: nothing was sent on this connection
	}
	lines := newLineReader(conn)
	for {
		line, err := lines.Next()
		if err != nil {
			send(connEvent{gen: gen, kind: eventClosed, err: readFailure(address, err)})
			return
		}
		if !send(connEvent{gen: gen, kind: eventLine, line: line}) {
			drain(conn)
			return
		}
	}
}

// drain reads what is left after the claim ended, until the server closes (or leaveDrain).
func drain(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(leaveDrain))
	_, _ = io.Copy(io.Discard, io.LimitReader(conn, 1<<20))
}

// readFailure names why reading ended: the server's close, a reset, or unreadable bytes.
func readFailure(address string, err error) error {
	var baton *Error
	switch {
	case errors.As(err, &baton):
		return baton
	case err == io.EOF:
		return newError("connection-lost", address+" closed the connection")
	case err == io.ErrUnexpectedEOF:
		return newError("connection-lost", address+" closed the connection in the middle of a line")
	}
	return newError("connection-lost", address+": "+err.Error())
}

// writeLine writes one or more request lines in one write (CLIENT goes with its ACQUIRE).
func writeLine(conn net.Conn, text string) error {
	_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := io.WriteString(conn, text)
	return err
}

// leaveDrain bounds how long a connection the claim left is read for the server's own close.
const leaveDrain = time.Second

// leave ends the claim's side of a connection: FIN, not a reset. A close with unread bytes in
// the socket would be a reset, and a server keeps a resumable claim after a reset (it cannot
// tell it from a network fault) instead of handing the lock on, or dropping the waiter, at once.
// The reader goroutine reads on until the server closes (or leaveDrain), then closes.
func leave(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(leaveDrain))
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
		return
	}
	conn.Close()
}
