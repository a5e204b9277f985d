package plainproxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
)

// The plain proxy serves the upstream's tools under their own names, and
// with an API key refuses a request that does not carry it.
func TestPlainProxyForwardsUnprefixedAndChecksItsKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up, err := upstream.NewDocmost(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	p, err := Start(ctx, Options{Addr: "127.0.0.1:0", Upstream: up.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	post := func(key string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("X-Api-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("without the key: %d, want 401", got)
	}
	if got := post("k"); got != http.StatusOK {
		t.Errorf("with the key: %d, want 200", got)
	}
}

// --start-delay D: the proxy says it serves only after D, as a proxy that
// takes D to start would.
func TestStartDelayHoldsTheProxyBack(t *testing.T) {
	up, err := upstream.NewDocmost(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- Main(ctx, []string{"--upstream", up.URL(), "--start-delay", "400ms"}, &out, io.Discard)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "serving MCP at") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "serving MCP at") || took < 400*time.Millisecond {
		t.Errorf("with --start-delay 400ms the proxy said it served after %v: %q", took, out.String())
	}
}

// Drain: the health path answers 200 while the proxy serves; told to stop
// with a drain, it keeps listening, failing the health path and refusing
// every request with 503 (not acted on), and only then closes.
func TestDrainRefusesWhileListeningThenStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up, err := upstream.NewDocmost(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	p, err := Start(ctx, Options{Addr: "127.0.0.1:0", Upstream: up.URL(), Health: "/healthz", StopDrain: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(p.URL(), "/mcp")
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func(method, url string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), nil
	}
	if st, _, err := get(http.MethodGet, base+"/healthz"); err != nil || st != http.StatusOK {
		t.Fatalf("serving: health %d %v, want 200", st, err)
	}
	drained := make(chan error, 1)
	go func() { drained <- p.Drain(context.Background()) }()
	for st := 0; st != http.StatusServiceUnavailable; {
		if st, _, err = get(http.MethodGet, base+"/healthz"); err != nil {
			t.Fatalf("draining: the health path must still answer: %v", err)
		}
		select {
		case err := <-drained:
			t.Fatalf("stopped (%v) before its health path answered 503", err)
		default:
		}
	}
	if st, retry, err := get(http.MethodPost, p.URL()); err != nil || st != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("draining: a request got %d (Retry-After %q) %v, want 503 with Retry-After", st, retry, err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(http.MethodGet, base+"/healthz"); err == nil {
		t.Fatal("drained: the proxy still listens")
	}
}
