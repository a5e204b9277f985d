package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startUpstream serves an MCP server with no tools on a loopback port.
func startUpstream(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// A detached call (CallTool, ListTools) whose work does not end when its
// context does (a lock inside the SDK, a write that waits for a busy
// connection) still returns at the call timeout: the timeout bounds the
// answer, not the SDK's good will.
func TestDoReturnsAtTheCallTimeoutEvenIfTheCallIgnoresItsContext(t *testing.T) {
	const callTimeout = 200 * time.Millisecond
	const tolerance = 100 * time.Millisecond
	c := New("s", startUpstream(t), Options{ConnectTimeout: 2 * time.Second, CallTimeout: callTimeout})
	defer c.Close()
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	err := c.do(context.Background(), true, func(context.Context, *mcp.ClientSession) error {
		select { // deaf to its context, like a goroutine parked on a mutex
		case <-release:
		case <-time.After(3 * time.Second):
		}
		return nil
	})
	took := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want the call timeout's TimeoutError", err)
	}
	if took > callTimeout+tolerance {
		t.Fatalf("Do returned after %v; want within the call timeout %v + %v", took, callTimeout, tolerance)
	}
}

// The caller's own context ending (the request deadline, a cancel) ends the
// wait too, with the caller's cause.
func TestDoReturnsWhenTheCallersContextEnds(t *testing.T) {
	c := New("s", startUpstream(t), Options{ConnectTimeout: 2 * time.Second, CallTimeout: 5 * time.Second})
	defer c.Close()
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	why := errors.New("the request deadline passed")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 150*time.Millisecond, why)
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	err := c.do(ctx, true, func(context.Context, *mcp.ClientSession) error {
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
		return nil
	})
	if !errors.Is(err, why) || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("Do: %v after %v; want %q within 150ms + 100ms", err, time.Since(start), why)
	}
}
