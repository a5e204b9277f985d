package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// TestAStoppingProxyDrainsBeforeItStopsListening: with MCPCTL_STOP_DRAIN_MS
// set, a proxy told to stop keeps listening for that long; /readyz answers
// 503 "stopping" (a balancer's check takes it out), /healthz still 200, and
// a tools/call on a live session gets a 503 with Retry-After and a trace
// code, and is not run upstream, so a balancer may send it again elsewhere.
// Only then does the stop go on.
func TestAStoppingProxyDrainsBeforeItStopsListening(t *testing.T) {
	var calls atomic.Int64
	up := mcp.NewServer(&mcp.Implementation{Name: "count", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "count"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()

	const drain = 400 * time.Millisecond
	kv := knobs.Defaults()
	kv.ShutdownGrace = 600 * time.Millisecond
	kv.StopDrain = drain
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: "sqlite:" + t.TempDir() + "/audit.db",
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: upSrv.URL}}}},
	}
	p, err := New(context.Background(), cfg, Options{Knobs: &kv, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	base := "http://" + p.Addr()
	hc := &http.Client{Timeout: 5 * time.Second}
	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/projects/p/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if session == "" {
		t.Fatalf("initialize: HTTP %d and no session id", resp.StatusCode)
	}
	resp = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s_count","arguments":{}}}`
	resp = post(session, call)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 1 {
		t.Fatalf("before the stop: HTTP %d, %d calls upstream", resp.StatusCode, calls.Load())
	}

	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() { _ = p.Close(context.Background()); closed <- time.Since(start) }()
	status := func(path string) (int, string) {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s while draining: %v (the proxy stopped listening)", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for deadline := time.Now().Add(drain / 2); ; {
		if code, body := status("/readyz"); code == http.StatusServiceUnavailable && strings.Contains(body, "stopping") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz never said stopping")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, _ := status("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz while draining: %d, want 200: the process is alive", code)
	}
	resp = post(session, call)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a tools/call while draining: HTTP %d, Retry-After %q: want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var e struct {
		Error struct {
			Message string            `json:"message"`
			Data    map[string]string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || !strings.Contains(e.Error.Message, StoppingText) || e.Error.Data[trace.MetaKey] == "" {
		t.Fatalf("a tools/call while draining was answered %s (%v): want the stopping text and a trace code", body, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the tools/call refused while draining ran upstream (%d calls): a balancer's retry would run it twice", n)
	}
	took := <-closed
	if took < drain {
		t.Fatalf("the stop took %v: the drain of %v was cut short", took, drain)
	}
	if limit := drain + kv.ShutdownGrace + 2*time.Second; took > limit {
		t.Fatalf("the stop took %v, past drain + grace + 2 s (%v)", took, limit)
	}
}
