package lazyaccept

import (
	"io"
	"net"
	"testing"
	"time"
)

// handingListener is an inner listener whose Close hands one last
// connection to the Accept waiting on it: a connection that arrives while
// Close runs.
type handingListener struct {
	conns  chan net.Conn
	closed chan struct{}
	last   net.Conn
}

func (h *handingListener) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	}
}

func (h *handingListener) Close() error {
	h.conns <- h.last // the accepting goroutine takes it after the Listener is marked closed
	close(h.closed)
	return nil
}

func (h *handingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// TestAConnectionAcceptedAsCloseRunsIsClosed: a connection the inner
// listener hands over while Close runs is closed, not served, and the
// Listener stays usable (Open answers) after Close.
func TestAConnectionAcceptedAsCloseRunsIsClosed(t *testing.T) {
	ours, theirs := net.Pipe()
	defer theirs.Close()
	inner := &handingListener{conns: make(chan net.Conn), closed: make(chan struct{}), last: ours}
	l := New(inner, Options{Idle: time.Minute})
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5 s")
	}
	_ = theirs.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := theirs.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("the client's read: %d bytes, %v; want EOF: the connection closed", n, err)
	}
	open := make(chan int, 1)
	go func() { open <- l.Open() }()
	select {
	case n := <-open:
		if n != 0 {
			t.Errorf("Open() = %d after Close, want 0", n)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Open() did not return within 2 s after Close")
	}
}
