package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShutdownCancelsTheUpstreamsCallsStillRunning: a tools/call still
// running upstream when the proxy shuts down is answered "shutting down"
// and the client is told to retry it; so the upstream must be told too
// (notifications/cancelled for the call's id, before the session's
// DELETE), or a client that retries, as told, runs the tool twice. On the
// go-sdk path and on the raw relay.
func TestShutdownCancelsTheUpstreamsCallsStillRunning(t *testing.T) {
	for _, relay := range []bool{false, true} {
		name := "sdk-path"
		if relay {
			name = "relay"
		}
		t.Run(name, func(t *testing.T) { shutdownCancels(t, relay) })
	}
}

// upstreamLog notes, in order, the JSON-RPC traffic an upstream received
// that this spec judges: tools/call ids, the ids notifications/cancelled
// named, and DELETEs, each with its session id.
type upstreamLog struct {
	mu     sync.Mutex
	events []string // "call <id> @<session>", "cancel <id> @<session>", "delete @<session>"
}

func (l *upstreamLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *upstreamLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

func (l *upstreamLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := " @" + r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodDelete:
			l.add("delete" + at)
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil {
				switch m.Method {
				case "tools/call":
					l.add("call " + string(m.ID) + at)
				case "notifications/cancelled":
					l.add("cancel " + string(m.Params.RequestID) + at)
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func shutdownCancels(t *testing.T, relay bool) {
	entered := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	testDone := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		entered <- struct{}{}
		select {
		case <-ctx.Done():
			ended <- struct{}{}
		case <-testDone:
		}
		return nil, nil, ctx.Err()
	})
	var log upstreamLog
	upSrv := httptest.NewServer(log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)))
	defer upSrv.Close()
	defer close(testDone) // runs before upSrv.Close: a call never told lets go

	p, _, kv := startInFrontOf(t, upSrv.URL, &relay)
	// The client holds its standalone stream, as go-sdk clients do by
	// default: one that offers roots without it stays off the relay.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A first call connects the upstream session, so the relay (which
	// sends on a session the Conn holds) takes the second.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s_block", Arguments: map[string]any{}})
	}()
	<-entered
	if relay && p.projects["p"].Relayed() == 0 {
		t.Fatal("the call took the SDK path; this case is the relay's")
	}
	if !relay && p.projects["p"].Relayed() != 0 {
		t.Fatal("the call took the relay; this case is the SDK path's")
	}
	start := time.Now()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	const tolerance = 300 * time.Millisecond
	select {
	case <-ended:
	case <-time.After(kv.ShutdownGrace + tolerance - time.Since(start)):
		t.Fatalf("the upstream's tool still runs %v after the shutdown began (grace %v + tolerance %v); upstream saw %v",
			time.Since(start), kv.ShutdownGrace, tolerance, log.snapshot())
	}
	ev := log.snapshot()
	var call, sess string // "<id> @<session>", " @<session>"
	cancelAt, deleteAt := -1, -1
	for i, e := range ev {
		switch {
		case strings.HasPrefix(e, "call "):
			call, sess = e[len("call "):], e[strings.LastIndex(e, " @"):]
		case call != "" && e == "delete"+sess && deleteAt < 0:
			deleteAt = i
		case call != "" && e == "cancel "+call && cancelAt < 0:
			cancelAt = i
		}
	}
	if cancelAt < 0 {
		t.Fatalf("the upstream was never told its call %s was given up; it saw %v", call, ev)
	}
	if deleteAt >= 0 && deleteAt < cancelAt {
		t.Errorf("the upstream session's DELETE came before the call's cancel (a go-sdk upstream then drops it); it saw %v", ev)
	}
}
