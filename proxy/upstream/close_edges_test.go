package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// within runs f and fails the test if it has not returned after d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestCloseTwiceAndCallsAfterClose: Close may be called again, and a call
// on a closed Conn answers ErrClosed; neither waits.
func TestCloseTwiceAndCallsAfterClose(t *testing.T) {
	c := New("s", pinging(t, nil), Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "the first Close", func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	within(t, 2*time.Second, "a second Close", func() {
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	within(t, 2*time.Second, "ListTools after Close", func() {
		if _, err := c.ListTools(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("ListTools after Close: %v, want ErrClosed", err)
		}
	})
}

// TestCloseAbortsAConnectInFlight: a Close while the handshake waits on a
// silent upstream ends the handshake at once, not at the connect timeout.
func TestCloseAbortsAConnectInFlight(t *testing.T) {
	const connectTimeout, budget = 6 * time.Second, 2 * time.Second
	reached := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case reached <- struct{}{}:
		default:
		}
		_, _ = io.ReadAll(r.Body) // (the server notices a closed connection only once the body is read)
		<-r.Context().Done()      // silent until the client gives up
	}))
	defer ts.Close()
	c := New("s", ts.URL, Options{ConnectTimeout: connectTimeout, CallTimeout: 5 * time.Second})
	connected := make(chan error, 1)
	go func() { connected <- c.Connect(context.Background()) }()
	select {
	case <-reached:
	case <-time.After(5 * time.Second):
		t.Fatal("the handshake did not reach the upstream within 5 s")
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-connected:
		if err == nil {
			t.Error("a connect aborted by Close succeeded")
		}
		if d := time.Since(start); d > budget {
			t.Errorf("the connect ended %v after Close, want within %v", d, budget)
		}
	case <-time.After(budget):
		t.Errorf("the connect still waits %v after Close (connect timeout %v)", budget, connectTimeout)
		t.Logf("connect: %v after %v", <-connected, time.Since(start))
	}
}

// TestCloseClosesItsOwnTransportsIdleConnections: a Conn with a transport of
// its own leaves no connection to the upstream open once closed (a shared
// transport's stay: TestCloseLeavesASharedTransportsConnections).
func TestCloseClosesItsOwnTransportsIdleConnections(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	var open atomic.Int32
	ts := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	ts.Start()
	defer ts.Close()
	c := New("s", ts.URL, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := open.Load(); n < 1 {
		t.Fatalf("%d connections open to the upstream before Close", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for open.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("%d connections to the upstream still open 2 s after Close", n)
	}
}

// hooks is a context that counts the cancellation hooks registered on it
// (context.AfterFunc, and context.WithCancel of a child, register one) and
// not yet removed: a request's hooks must be gone once the request is.
type hooks struct {
	mu    sync.Mutex
	next  int
	live  map[int]func()
	done  chan struct{}
	ended bool
}

func newHooks() *hooks { return &hooks{live: map[int]func(){}, done: make(chan struct{})} }

func (h *hooks) Deadline() (time.Time, bool) { return time.Time{}, false }
func (h *hooks) Done() <-chan struct{}       { return h.done }
func (h *hooks) Value(any) any               { return nil }
func (h *hooks) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return context.Canceled
	}
	return nil
}

// AfterFunc is what the context package calls to hook a child or an
// AfterFunc onto a context of a foreign type.
func (h *hooks) AfterFunc(f func()) func() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.live[id] = f
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		_, ok := h.live[id]
		delete(h.live, id)
		return ok
	}
}

func (h *hooks) Live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.live)
}

// TestAbortableReleasesEachRequestsHooks: a request through abortable hooks
// itself onto the Conn's closing context and derives a context from the
// caller's; both hooks are removed when the request fails, or when its
// answer's body is closed (once, however often it is closed), so a
// long-lived Conn or caller context does not pile them up request after
// request.
func TestAbortableReleasesEachRequestsHooks(t *testing.T) {
	closing, caller := newHooks(), newHooks()
	var fail atomic.Bool
	var seen context.Context
	a := abortable{closing: closing, base: rtFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Context()
		if fail.Load() {
			return nil, errors.New("connection refused")
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("answer"))}, nil
	})}
	req, err := http.NewRequestWithContext(caller, http.MethodPost, "http://upstream.invalid/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}

	fail.Store(true)
	if _, err := a.RoundTrip(req); err == nil {
		t.Fatal("a failing transport's request succeeded")
	}
	if n, m := closing.Live(), caller.Live(); n != 0 || m != 0 {
		t.Errorf("after a failed request: %d hooks left on the closing context, %d on the caller's; want 0 and 0", n, m)
	}
	if seen.Err() == nil {
		t.Error("a failed request's context was not released")
	}

	fail.Store(false)
	resp, err := a.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := closing.Live(), caller.Live(); n != 1 || m != 1 {
		t.Errorf("while the answer is read: %d hooks on the closing context, %d on the caller's; want 1 and 1", n, m)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "answer" {
		t.Fatalf("body %q, %v", b, err)
	}
	_ = resp.Body.Close()
	_ = resp.Body.Close()
	if n, m := closing.Live(), caller.Live(); n != 0 || m != 0 {
		t.Errorf("after the body was closed: %d hooks left on the closing context, %d on the caller's; want 0 and 0", n, m)
	}
	if seen.Err() == nil {
		t.Error("an answered request's context was not released when its body was closed")
	}
}
