// Package origin guards every endpoint of the proxy against DNS rebinding
// and cross-site requests: the Host header must name the proxy, and a
// request that carries an Origin must come from an allowed origin (by
// default only loopback ones); one without an Origin goes through Go's
// http.CrossOriginProtection (Sec-Fetch-Site). The MCP spec requires servers
// to validate Origin; a browser page on evil.example that resolves its own
// name to 127.0.0.1 is stopped by both checks.
package origin

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Options are the allowlists; empty lists mean the loopback defaults.
type Options struct {
	// Origins are extra allowed origins, scheme://host[:port] exactly
	// (e.g. https://inspector.example:6274).
	Origins []string
	// Hosts are extra allowed Host header names, without port.
	Hosts []string
	// OnRefuse writes the refusal; nil writes {"error": msg}.
	OnRefuse func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// Guard wraps h with the Host and Origin checks.
func Guard(h http.Handler, o Options) http.Handler {
	cop := http.NewCrossOriginProtection()
	for _, or := range o.Origins {
		_ = cop.AddTrustedOrigin(or) // validated by the config loader
	}
	refuse := o.OnRefuse
	if refuse == nil {
		refuse = func(w http.ResponseWriter, _ *http.Request, status int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !HostAllowed(r.Host, o.Hosts) {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not this proxy's (loopback names, or config allowedHosts)", r.Host))
			return
		}
		if or := r.Header.Get("Origin"); or != "" {
			if !OriginAllowed(or, o.Origins) {
				refuse(w, r, http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed (loopback origins, or config allowedOrigins)", or))
				return
			}
		} else if err := cop.Check(r); err != nil {
			refuse(w, r, http.StatusForbidden, "cross-origin request refused: "+err.Error())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// HostAllowed reports whether a Host header names this proxy: a loopback
// name or address (any port), or one of extra.
func HostAllowed(host string, extra []string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(strings.ToLower(h), "[]")
	if h == "" {
		return false
	}
	return loopback(h) || slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, h) })
}

// OriginAllowed reports whether origin is a loopback origin (http or https,
// any port) or exactly one of extra.
func OriginAllowed(origin string, extra []string) bool {
	if slices.Contains(extra, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	return loopback(strings.ToLower(u.Hostname()))
}

func loopback(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
