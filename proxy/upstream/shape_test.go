package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func answering(status int, ctype, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
}

func callThrough(t *testing.T, url string) error {
	t.Helper()
	c := New("docmost", url, Options{ConnectTimeout: 2 * time.Second, CallTimeout: 2 * time.Second, CloseGrace: 100 * time.Millisecond})
	defer c.Close()
	_, err := c.CallTool(context.Background(), "search", nil, nil)
	if err == nil {
		t.Fatal("a call through a misshapen answer succeeded")
	}
	return err
}

// TestPlainTextAnswerIsNamed: the seed's ingress hairpin (an L7 proxy's bare
// `Access denied` 403) is reported with its status, type and first bytes, and
// as something between mcplocal and the server, not as a generic failure.
func TestPlainTextAnswerIsNamed(t *testing.T) {
	srv := answering(http.StatusForbidden, "text/plain; charset=utf-8", "Access denied\n")
	defer srv.Close()
	err := callThrough(t, srv.URL+"/mcp")
	var se *ShapeError
	if !errors.As(err, &se) {
		t.Fatalf("want a *ShapeError in the chain, got %v", err)
	}
	want := "upstream answered 403 text/plain `Access denied`, not JSON-RPC: something between mcplocal and the server answered"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error does not say %q:\n%v", want, err)
	}
}

// TestHTMLOn200IsNamed: a login page served with 200 is not an MCP answer either.
func TestHTMLOn200IsNamed(t *testing.T) {
	srv := answering(http.StatusOK, "text/html", "<html><body>Sign in to continue</body></html>")
	defer srv.Close()
	err := callThrough(t, srv.URL+"/mcp")
	if !strings.Contains(err.Error(), "upstream answered 200 text/html `<html><body>Sign in to continue</body></html>`, not JSON-RPC") {
		t.Errorf("error does not name the HTML answer: %v", err)
	}
}

type canned struct{ resp *http.Response }

func (c canned) RoundTrip(*http.Request) (*http.Response, error) { return c.resp, nil }

// TestShapePassesMCPAnswers: JSON and SSE answers, empty 202s, and the
// spec's 404 for a terminated session (plain text from go-sdk, and the signal
// that drives reconnection) reach the SDK untouched; other methods too.
func TestShapePassesMCPAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, method, session, ctype string
		status                       int
		body                         string
	}{
		{"json-rpc error", http.MethodPost, "", "application/json", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad"}}`},
		{"sse", http.MethodPost, "s1", "text/event-stream", 200, "data: {}\n\n"},
		{"accepted", http.MethodPost, "s1", "", 202, ""},
		{"session terminated", http.MethodPost, "s1", "text/plain; charset=utf-8", 404, "session not found\n"},
		{"delete", http.MethodDelete, "s1", "text/plain", 403, "Access denied"},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body)), ContentLength: int64(len(tc.body))}
		if tc.ctype != "" {
			resp.Header.Set("Content-Type", tc.ctype)
		}
		req, _ := http.NewRequest(tc.method, "http://127.0.0.1/mcp", nil)
		if tc.session != "" {
			req.Header.Set("Mcp-Session-Id", tc.session)
		}
		got, err := Shape(canned{resp}).RoundTrip(req)
		if err != nil || got != resp {
			t.Errorf("%s: want the answer passed through, got %v", tc.name, err)
		}
	}
}
