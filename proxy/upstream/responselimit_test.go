package upstream

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLimitResponsesStopsAtTheKnob(t *testing.T) {
	body := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: the limit must hold while streaming
		}
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	for _, q := range []string{"", "?chunked=1"} {
		c := &http.Client{Transport: LimitResponses(http.DefaultTransport, 999)}
		resp, err := c.Get(srv.URL + q)
		var tl *TooLargeError
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if !errors.As(err, &tl) || tl.Limit != 999 || !strings.Contains(err.Error(), "MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES=999") {
			t.Errorf("%q: a 1000-byte body under a 999-byte limit gave %v, want a TooLargeError naming the knob", q, err)
		}
		c = &http.Client{Transport: LimitResponses(http.DefaultTransport, 1000)}
		resp, err = c.Get(srv.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(b) != 1000 {
			t.Errorf("%q: a body of exactly the limit: %d bytes, %v", q, len(b), err)
		}
	}
}
