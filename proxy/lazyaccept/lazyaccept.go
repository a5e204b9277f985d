// Package lazyaccept hands a connection to the HTTP server only once the
// client has sent its first byte.
//
// net/http starts a connection's read-header timeout when it accepts it, so
// a connection a client dialled ahead of its first request (Go's transport
// keeps a dial it ended up not needing in its idle pool; browsers and other
// clients preconnect too) is closed after the read-header timeout, not the
// idle timeout. A request sent as that close crosses it fails with EOF on a
// fresh connection, which no client retries: the 100,000-request soak in
// docs/performance.md saw three. Behind a Listener, a connection waits for
// its first byte under the idle-connection timeout (it is idle: no request is
// in flight), and the server's read timeouts start with the request.
package lazyaccept

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Listener wraps a net.Listener: Accept returns connections whose first
// byte has arrived. A connection that sends nothing within the idle timeout
// is closed without ever being returned. Its methods may be called from any
// goroutine.
type Listener struct {
	inner net.Listener
	idle  time.Duration

	ready chan net.Conn
	errs  chan error
	done  chan struct{}

	mu      sync.Mutex
	waiting map[net.Conn]struct{} // accepted, no byte yet
	closed  bool
	once    sync.Once
	wg      sync.WaitGroup
}

// New starts accepting on inner; each connection waits at most idle for
// its first byte.
func New(inner net.Listener, idle time.Duration) *Listener {
	l := &Listener{inner: inner, idle: idle, ready: make(chan net.Conn), errs: make(chan error),
		done: make(chan struct{}), waiting: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

// Accept implements net.Listener: the next connection that has sent a
// byte, or the inner listener's error (after Close, net.ErrClosed).
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener: it closes the inner listener and every
// connection still waiting for its first byte, and waits for the
// goroutines it started. Close may be called more than once.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		for c := range l.waiting {
			_ = c.Close()
		}
		l.mu.Unlock()
		close(l.done)
		err = l.inner.Close()
		l.wg.Wait()
	})
	return err
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary error (too many open files): the server backs off
			// before it calls Accept again, which paces this loop too.
			select {
			case l.errs <- err:
				continue
			case <-l.done:
				return
			}
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			_ = c.Close()
			return
		}
		l.waiting[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.awaitFirstByte(c)
	}
}

// awaitFirstByte reads c's first byte under the idle timeout and hands c
// to Accept with that byte put back in front.
func (l *Listener) awaitFirstByte(c net.Conn) {
	defer l.wg.Done()
	var b [1]byte
	_ = c.SetReadDeadline(time.Now().Add(l.idle))
	n, _ := c.Read(b[:]) // an error with no byte: silent past the idle timeout, closed by the client, or Close
	l.mu.Lock()
	delete(l.waiting, c)
	l.mu.Unlock()
	if n == 0 {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{}) // the server sets its own
	select {
	case l.ready <- &conn{Conn: c, first: b[0], hasFirst: true}:
	case <-l.done:
		_ = c.Close()
	}
}

// conn replays the byte awaitFirstByte read before the rest of the stream.
type conn struct {
	net.Conn
	mu       sync.Mutex
	first    byte
	hasFirst bool
}

// Read implements net.Conn.
func (c *conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.hasFirst && len(p) > 0 {
		p[0], c.hasFirst = c.first, false
		c.mu.Unlock()
		return 1, nil
	}
	c.mu.Unlock()
	return c.Conn.Read(p)
}

// CloseWrite half-closes the connection when the inner one can (net/http
// uses it to flush an error answer before it closes).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
