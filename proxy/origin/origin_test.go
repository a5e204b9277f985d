package origin

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	g := Guard(ok, Options{Origins: []string{"https://inspector.example:6274"}, Hosts: []string{"proxy.internal"}})
	cases := []struct {
		name, method, host, origin, fetchSite string
		want                                  int
	}{
		{"loopback, no origin", "POST", "127.0.0.1:8080", "", "", 204},
		{"localhost name", "POST", "localhost:8080", "", "", 204},
		{"ipv6 loopback", "POST", "[::1]:8080", "", "", 204},
		{"configured host", "POST", "proxy.internal:8080", "", "", 204},
		{"rebinding host", "POST", "evil.example:8080", "", "", 403},
		{"evil origin", "POST", "127.0.0.1:8080", "http://evil.example", "", 403},
		{"evil origin on GET", "GET", "127.0.0.1:8080", "http://evil.example", "", 403},
		{"loopback origin, other port", "POST", "127.0.0.1:8080", "http://localhost:3000", "cross-site", 204},
		{"configured origin", "POST", "127.0.0.1:8080", "https://inspector.example:6274", "cross-site", 204},
		{"null origin", "POST", "127.0.0.1:8080", "null", "", 403},
		{"cross-site without origin", "POST", "127.0.0.1:8080", "", "cross-site", 403},
		{"cross-site GET without origin is safe", "GET", "127.0.0.1:8080", "", "cross-site", 204},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "http://x/projects/p/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", c.fetchSite)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: got %d, want %d (%s)", c.name, w.Code, c.want, w.Body.String())
		}
	}
}
