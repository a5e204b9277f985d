package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// halfAnswering is an upstream that answers initialize, handing out a session
// id, and then never answers anything else (notifications/initialized, the
// DELETE that ends the session) until the test ends: a server that dies, or a
// link that blackholes, in the middle of the handshake.
func halfAnswering(t *testing.T) (url string, deletes *atomic.Int32) {
	t.Helper()
	deletes = new(atomic.Int32)
	gone := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if r.Method == http.MethodPost && msg.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "half-1")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"`+ProtocolVersion+`","capabilities":{"tools":{}},"serverInfo":{"name":"half","version":"0"}}}`)
			return
		}
		select { // silent: the handshake's second half and the DELETE hang
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(func() { close(gone); ts.Close() })
	return ts.URL, deletes
}

// The connect timeout bounds the whole connect, including the clean-up the
// SDK does when a handshake fails after the upstream handed out a session id
// (its DELETE, which go-sdk v1.8.0 bounds by its own 5 s, not by the connect's
// context). Seen as a 5.3 s answer in the knob matrix's connect-timeout spec.
func TestConnectTimeoutBoundsAHandshakeThatStopsAfterTheSessionID(t *testing.T) {
	const connectTimeout = 200 * time.Millisecond
	const tolerance = 300 * time.Millisecond
	const closeGrace = 200 * time.Millisecond
	url, deletes := halfAnswering(t)
	c := New("s", url, Options{ConnectTimeout: connectTimeout, CallTimeout: 5 * time.Second, CloseGrace: closeGrace, Limit: NewLimit(1)})
	defer c.Close()

	start := time.Now()
	err := c.Connect(context.Background())
	took := time.Since(start)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connect did not finish within 200ms") {
		t.Fatalf("Connect = %v; want the connect timeout's error", err)
	}
	if took > connectTimeout+tolerance {
		t.Fatalf("Connect returned after %v; want within the connect timeout %v + %v", took, connectTimeout, tolerance)
	}
	// What the handshake left goes on in the background, bounded by the close
	// grace: the half-open session is ended with a DELETE, and then the
	// session slot is given back, so the next connect may try again.
	deadline := time.Now().Add(closeGrace + tolerance)
	for (deletes.Load() == 0 || len(c.limit.slots) != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if deletes.Load() == 0 {
		t.Fatalf("the half-open session was not ended with a DELETE")
	}
	if n := len(c.limit.slots); n != 0 {
		t.Fatalf("%d session slot(s) still held %v after the connect timeout: the abandoned handshake kept its slot past the close grace", n, closeGrace+tolerance)
	}
}
