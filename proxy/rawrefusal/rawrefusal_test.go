package rawrefusal

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Headers past MaxHeaderBytes get net/http's own 431, as a JSON-RPC error.
func TestHeadersTooLargeIsAJSONRPCError(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{MaxHeaderBytes: 4 << 10, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		http.Error(w, "a handler's own", http.StatusTeapot)
	})}
	go func() { _ = srv.Serve(Listener{Listener: inner}) }()
	t.Cleanup(func() { _ = srv.Close() })
	do := func(pad int) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+inner.Addr().String()+"/", strings.NewReader("{}"))
		req.Header.Set("Mcp-Session-Id", strings.Repeat("s", pad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := do(1 << 20)
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != 431 || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &e) != nil || e.Error == nil ||
		e.Error.Code != CodeInvalidRequest || !strings.Contains(e.Error.Message, "431 Request Header Fields Too Large") {
		t.Fatalf("a 1 MiB header: %d %s %s, want 431 with a JSON-RPC error", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	// A handler's answer is never rewritten, even a plain-text one.
	if resp, body := do(10); resp.StatusCode != http.StatusTeapot || !strings.Contains(body, "a handler's own") {
		t.Fatalf("a handler's answer: %d %s", resp.StatusCode, body)
	}
}
