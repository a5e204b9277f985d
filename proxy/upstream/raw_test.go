package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// olderUpstream is an MCP server written out by hand that negotiates an
// older protocol version than the proxy asks for and hands out a new
// session id (raw-1, raw-2, ...) at each initialize.
func olderUpstream(t *testing.T, version string) string {
	t.Helper()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("raw-%d", n.Add(1)))
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"`+version+`","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"0"}}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestRawSessionWholeShape: what the raw relay sends on. Raw has no session
// before a connect and after Close; Session connects one, with the Conn's
// own HTTP client, its URL, the upstream's session id and the version the
// upstream negotiated; Reconnect of a session forgets it (logging it) and
// connects a new one, and of no session keeps the current one; after
// Close both answer ErrClosed.
func TestRawSessionWholeShape(t *testing.T) {
	const older = "2025-06-18"
	url := olderUpstream(t, older)
	var mu sync.Mutex
	var logs strings.Builder
	c := New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Logger: slogTo(&mu, &logs)})
	defer c.Close()
	ctx := context.Background()
	if _, ok := c.Raw(); ok {
		t.Fatal("Raw before any connect: ok")
	}
	rs, err := c.Session(ctx)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if rs.HTTP != c.httpClient || rs.URL != url || rs.ID != "raw-1" || rs.ProtocolVersion != older {
		t.Fatalf("Session = %+v; want the Conn's client, %s, raw-1, %s", rs, url, older)
	}
	if again, ok := c.Raw(); !ok || again.ID != "raw-1" {
		t.Fatalf("Raw after Session = %+v, %v; want raw-1", again, ok)
	}
	if same, err := c.Session(ctx); err != nil || same.ID != "raw-1" {
		t.Fatalf("Session again = %+v, %v; want raw-1, no new connect", same, err)
	}
	if kept, err := c.Reconnect(ctx, RawSession{}); err != nil || kept.ID != "raw-1" {
		t.Fatalf("Reconnect of no session = %+v, %v; want raw-1 kept", kept, err)
	}
	mu.Lock()
	quiet := logs.String()
	mu.Unlock()
	if quiet != "" {
		t.Errorf("Reconnect of no session logged %q", quiet)
	}
	next, err := c.Reconnect(ctx, rs)
	if err != nil || next.ID != "raw-2" || next.ProtocolVersion != older {
		t.Fatalf("Reconnect = %+v, %v; want raw-2", next, err)
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, `msg="upstream session lost; reconnecting" server=s`) {
		t.Errorf("the lost session was not logged: %q", logged)
	}
	if cur, ok := c.Raw(); !ok || cur.ID != "raw-2" {
		t.Fatalf("Raw after Reconnect = %+v, %v; want raw-2", cur, ok)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Raw(); ok {
		t.Error("Raw after Close: ok")
	}
	if _, err := c.Session(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Session after Close: %v, want ErrClosed", err)
	}
	if _, err := c.Reconnect(ctx, next); !errors.Is(err, ErrClosed) {
		t.Errorf("Reconnect after Close: %v, want ErrClosed", err)
	}
}
