package upstream

import (
	"net/http"
	"testing"
)

// TestWellShapedIsExactlyWhatMCPAnswers: JSON and event streams always; an
// empty 2xx, a 202 or a 204 without a type; a 404 to a request with a
// session id (the session is gone); nothing else. A 2xx body of another type
// is named whether it came with a Content-Length or chunked (no length): an
// unknown length is not an empty body.
func TestWellShapedIsExactlyWhatMCPAnswers(t *testing.T) {
	for _, c := range []struct {
		name          string
		status        int
		ctype         string
		contentLength int64
		session       bool
		want          bool
	}{
		{"JSON error status", 500, "application/json", 10, false, true},
		{"event stream", 200, "text/event-stream", -1, false, true},
		{"empty 200", 200, "", 0, false, true},
		{"empty 299", 299, "", 0, false, true},
		{"empty 199", 199, "", 0, false, false},
		{"empty 300", 300, "", 0, false, false},
		{"202 with a body", 202, "", 5, false, true},
		{"204", 204, "", -1, false, true},
		{"200 text with a body", 200, "text/plain", 5, false, false},
		{"200 text chunked", 200, "text/plain", -1, false, false},
		{"200 HTML chunked", 200, "text/html", -1, false, false},
		{"201 chunked without a type", 201, "", -1, false, false},
		{"200 with a body and no type", 200, "", 12, false, false},
		{"404 with a session", 404, "text/plain", 17, true, true},
		{"404 without a session", 404, "text/plain", 17, false, false},
		{"403 with a session", 403, "text/plain", 13, true, false},
	} {
		r, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.session {
			r.Header.Set("Mcp-Session-Id", "s1")
		}
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}, ContentLength: c.contentLength}
		if c.ctype != "" {
			resp.Header.Set("Content-Type", c.ctype)
		}
		if got := wellShaped(r, resp); got != c.want {
			t.Errorf("%s: wellShaped %v, want %v", c.name, got, c.want)
		}
	}
}
