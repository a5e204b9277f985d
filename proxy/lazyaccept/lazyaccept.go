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
//
// The Listener also bounds how many connections are open at once, silent
// ones included (Options.Max). At the cap, a connection that has been silent
// for longer than Options.Evict (the server's read-header bound) is closed
// to make room for the new one: a client that dials ahead has had the same
// time any client gets to send its headers, and a silent connection is the
// cheapest to drop. With none to drop, the new connection gets
// Options.Refusal (an HTTP 503) and is closed.
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
	o     Options

	ready chan net.Conn
	errs  chan error
	done  chan struct{}

	mu      sync.Mutex
	waiting map[net.Conn]time.Time // accepted, no byte yet: when
	open    int                    // connections accepted and not yet closed, waiting ones included
	closed  bool
	once    sync.Once
	wg      sync.WaitGroup
}

// Options bound a Listener.
type Options struct {
	// Idle is how long a connection may wait for its first byte.
	Idle time.Duration
	// Max bounds the connections open at once (0: no bound).
	Max int
	// Evict is how long a connection must have been silent before it may
	// be closed to make room for a new one at Max.
	Evict time.Duration
	// Refusal returns what a connection past Max is sent before it is
	// closed (nil: nothing).
	Refusal func() []byte
}

// New starts accepting on inner.
func New(inner net.Listener, o Options) *Listener {
	l := &Listener{inner: inner, o: o, ready: make(chan net.Conn), errs: make(chan error),
		done: make(chan struct{}), waiting: map[net.Conn]time.Time{}}
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
		now := time.Now()
		var evict net.Conn
		if l.o.Max > 0 && l.open >= l.o.Max {
			if evict = l.oldestSilentLocked(now); evict == nil {
				l.mu.Unlock()
				l.refuse(c)
				continue
			}
			delete(l.waiting, evict)
			l.open--
		}
		l.waiting[c] = now
		l.open++
		l.wg.Add(1)
		l.mu.Unlock()
		if evict != nil {
			_ = evict.Close() // its awaitFirstByte returns: no longer waiting, not counted twice
		}
		go l.awaitFirstByte(c)
	}
}

// oldestSilentLocked is the connection that has waited longest for its
// first byte, if that is longer than Evict; nil otherwise. l.mu is held.
func (l *Listener) oldestSilentLocked(now time.Time) net.Conn {
	var oldest net.Conn
	var since time.Time
	for c, t := range l.waiting {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest == nil || now.Sub(since) < l.o.Evict {
		return nil
	}
	return oldest
}

// refuse sends c the refusal and closes it, on the accepting goroutine: a
// few hundred bytes into a fresh connection's empty send buffer do not
// block, and the write deadline bounds it if they would.
func (l *Listener) refuse(c net.Conn) {
	if l.o.Refusal != nil {
		_ = c.SetWriteDeadline(time.Now().Add(l.o.Evict))
		_, _ = c.Write(l.o.Refusal())
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	_ = c.Close()
}

// Open is how many connections are open now, silent ones included.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// release counts a connection closed, once.
func (l *Listener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// awaitFirstByte reads c's first byte under the idle timeout and hands c
// to Accept with that byte put back in front.
func (l *Listener) awaitFirstByte(c net.Conn) {
	defer l.wg.Done()
	var b [1]byte
	_ = c.SetReadDeadline(time.Now().Add(l.o.Idle))
	n, _ := c.Read(b[:]) // an error with no byte: silent past the idle timeout, closed by the client, evicted, or Close
	l.mu.Lock()
	_, mine := l.waiting[c] // not evicted meanwhile (the evicting side counted it closed)
	delete(l.waiting, c)
	if mine && n == 0 {
		l.open--
	}
	l.mu.Unlock()
	if !mine || n == 0 {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{}) // the server sets its own
	hc := &conn{Conn: c, first: b[0], hasFirst: true, l: l}
	select {
	case l.ready <- hc:
	case <-l.done:
		_ = hc.Close()
	}
}

// conn replays the byte awaitFirstByte read before the rest of the stream.
type conn struct {
	net.Conn
	mu       sync.Mutex
	first    byte
	hasFirst bool
	l        *Listener
	once     sync.Once
}

// Close implements net.Conn, counting the connection closed once.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
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
