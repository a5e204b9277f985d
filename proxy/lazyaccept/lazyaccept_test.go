package lazyaccept

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// bound keeps a broken Listener from hanging a test; generous for a loaded,
// shared machine.
const bound = 5 * time.Second

func listen(t *testing.T, idle time.Duration) *Listener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, Options{Idle: idle})
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dial(t *testing.T, l *Listener) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", l.Addr().String(), bound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(bound))
	return c
}

func acceptWithin(t *testing.T, l *Listener) net.Conn {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		got <- c
	}()
	select {
	case c := <-got:
		if c == nil {
			t.Fatal("Accept failed")
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	case <-time.After(bound):
		t.Fatal("Accept returned nothing")
	}
	return nil
}

func TestAcceptReturnsAConnectionWithItsFirstByteIntact(t *testing.T) {
	l := listen(t, time.Minute)
	// Each round dials a silent connection first, then one that writes:
	// Accept must return the one that wrote, whichever the listener's
	// goroutines got to first. Twenty rounds, since a listener that hands
	// out connections at accept returns the silent one only when its
	// goroutine wins the race to Accept (it did not, once in a loaded run).
	for round := range 20 {
		silent := dial(t, l) // never writes: must not block the next
		_ = silent
		c := dial(t, l)
		want := fmt.Sprintf("hello %02d", round)
		if _, err := c.Write([]byte(want)); err != nil {
			t.Fatal(err)
		}
		s := acceptWithin(t, l)
		_ = s.SetDeadline(time.Now().Add(bound))
		got, err := io.ReadAll(io.LimitReader(s, int64(len(want))))
		if err != nil || string(got) != want {
			t.Fatalf("round %d: read %q, %v; want %q", round, got, err, want)
		}
	}
}

func TestASilentConnectionIsClosedAfterTheIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	l := listen(t, idle)
	// The listener's idle clock starts when it accepts, which may come before
	// dial returns here: the lower bound is measured from before the dial.
	start := time.Now()
	c := dial(t, l)
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); err == nil || ok && ne.Timeout() {
		t.Fatalf("a silent connection is still open after %v (idle timeout %v): %v", time.Since(start), idle, err)
	}
	if took := time.Since(start); took < idle {
		t.Fatalf("closed after %v, before the idle timeout %v", took, idle)
	}
}

func TestCloseEndsWaitingConnectionsAndItsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, Options{Idle: time.Minute})
	c := dial(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the waiting connection is still open after Close")
	}
	if _, err := l.Accept(); err == nil {
		t.Fatal("Accept after Close returned a connection")
	}
	deadline := time.Now().Add(bound)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Close, %d before", n, before)
	}
}

func listenWith(t *testing.T, o Options) *Listener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, o)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// openWithin waits until l counts n open connections.
func openWithin(t *testing.T, l *Listener, n int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for l.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", l.Open(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAConnectionPastMaxGetsTheRefusalAndIsClosed(t *testing.T) {
	l := listenWith(t, Options{Idle: time.Minute, Max: 2, Evict: time.Minute, Refusal: func() []byte { return []byte("no room") }})
	dial(t, l)
	dial(t, l)
	openWithin(t, l, 2)
	c := dial(t, l)
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "no room" {
		t.Fatalf("past Max: read %q, %v; want the refusal, then EOF", got, err)
	}
	if n := l.Open(); n != 2 {
		t.Fatalf("%d open after a refusal, want 2", n)
	}
}

func TestAtMaxASilentConnectionPastEvictMakesRoom(t *testing.T) {
	const evict = 150 * time.Millisecond
	l := listenWith(t, Options{Idle: time.Minute, Max: 1, Evict: evict, Refusal: func() []byte { return []byte("no room") }})
	silent := dial(t, l)
	openWithin(t, l, 1)
	time.Sleep(evict) // the wait is what is tested
	c := dial(t, l)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	s := acceptWithin(t, l)
	_ = s.SetDeadline(time.Now().Add(bound))
	if _, err := s.Read(make([]byte, 1)); err != nil {
		t.Fatalf("the new connection was not handed over: %v", err)
	}
	if got, err := io.ReadAll(silent); err != nil || len(got) != 0 {
		t.Fatalf("the silent connection: read %q, %v; want it closed, sent nothing", got, err)
	}
	if n := l.Open(); n != 1 {
		t.Fatalf("%d open, want 1", n)
	}
	_ = s.Close()
	openWithin(t, l, 0)
}

// TestAnEmptyReadKeepsTheFirstByte: a Read with no room returns nothing and
// leaves the replayed first byte for the next Read.
func TestAnEmptyReadKeepsTheFirstByte(t *testing.T) {
	l := listen(t, time.Minute)
	c := dial(t, l)
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	s := acceptWithin(t, l)
	_ = s.SetDeadline(time.Now().Add(bound))
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty Read = %d, %v", n, err)
	}
	got, err := io.ReadAll(io.LimitReader(s, 2))
	if err != nil || string(got) != "hi" {
		t.Fatalf("read %q, %v; want hi", got, err)
	}
}

// TestCloseLeavesAcceptedConnectionsOpen: Close ends the connections still
// waiting for their first byte, not the ones already handed to the server
// (a shutdown lets those finish).
func TestCloseLeavesAcceptedConnectionsOpen(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, Options{Idle: time.Minute})
	c := dial(t, l)
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	s := acceptWithin(t, l)
	defer s.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	_ = s.SetDeadline(time.Now().Add(bound))
	got, err := io.ReadAll(io.LimitReader(s, 2))
	if err != nil || string(got) != "ab" {
		t.Fatalf("the accepted connection after Close read %q, %v; want ab", got, err)
	}
}
