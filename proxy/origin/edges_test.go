package origin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostAllowedEdges: each shape of Host header, allowed or not.
func TestHostAllowedEdges(t *testing.T) {
	extra := []string{"Proxy.Internal"}
	for host, want := range map[string]bool{
		"127.0.0.1":             true,
		"127.0.0.1:8080":        true,
		"[::1]:8080":            true,
		"[::1]":                 true,
		"LOCALHOST:1":           true,
		"app.localhost:8080":    true,
		"localhost.evil":        false,
		"evillocalhost":         false,
		"proxy.internal:80":     true, // extra names match whatever their case
		"PROXY.INTERNAL":        true,
		"other.internal":        false,
		"":                      false,
		":8080":                 false,
		"[]:8080":               false,
		"10.0.0.1:8080":         false,
		"127.0.0.1.nip.io:8080": false,
	} {
		if got := HostAllowed(host, extra); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestOriginAllowedEdges: each shape of Origin header, allowed or not.
func TestOriginAllowedEdges(t *testing.T) {
	extra := []string{"https://inspector.example:6274", "ftp://odd.example"}
	for origin, want := range map[string]bool{
		"http://127.0.0.1:3000":          true,
		"https://localhost":              true,
		"HTTP://LOCALHOST:1":             true,
		"http://app.localhost":           true,
		"http://[::1]:5173":              true,
		"ws://localhost":                 false, // neither http nor https
		"http://localhost/path":          false,
		"http://user@localhost":          false,
		"http://localhost:bad port":      false, // no URL
		"https://inspector.example:6274": true,  // exactly an extra one
		"https://inspector.example":      false,
		"ftp://odd.example":              true, // extra ones are taken as given
		"http://evil.example":            false,
		"null":                           false,
	} {
		if got := OriginAllowed(origin, extra); got != want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", origin, got, want)
		}
	}
}

// TestRefusalsWholeShape: the default refusal is 403 with a JSON body naming
// what was refused; OnRefuse, when set, writes it instead; an allowed request
// reaches the handler.
func TestRefusalsWholeShape(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, c := range []struct {
		name, host, origin, fetchSite, body string
	}{
		{"host", "evil.example:8080", "", "", `{"error":"Host \"evil.example:8080\" is not this proxy's (loopback names, or config allowedHosts)"}` + "\n"},
		{"origin", "127.0.0.1:8080", "http://evil.example", "", `{"error":"Origin \"http://evil.example\" is not allowed (loopback origins, or config allowedOrigins)"}` + "\n"},
		{"cross-site", "127.0.0.1:8080", "", "cross-site", `{"error":"cross-origin request refused: cross-origin request detected from Sec-Fetch-Site header"}` + "\n"},
	} {
		r := httptest.NewRequest("POST", "http://x/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", c.fetchSite)
		}
		w := httptest.NewRecorder()
		Guard(ok, Options{}).ServeHTTP(w, r)
		if w.Code != 403 || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != c.body {
			t.Errorf("%s: %d %q %q, want 403 application/json %q", c.name, w.Code, w.Header().Get("Content-Type"), w.Body.String(), c.body)
		}
		var got []string
		custom := Guard(ok, Options{OnRefuse: func(w http.ResponseWriter, _ *http.Request, status int, msg string) {
			got = append(got, msg)
			w.WriteHeader(status + 1)
		}})
		w = httptest.NewRecorder()
		custom.ServeHTTP(w, r)
		want, _ := json.Marshal(map[string]string{"error": strings.Join(got, "")})
		if w.Code != 404 || len(got) != 1 || string(want)+"\n" != c.body {
			t.Errorf("%s with OnRefuse: %d %q", c.name, w.Code, got)
		}
	}
}
