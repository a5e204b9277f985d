package upstream

import "net/http"

// WithHeaders wraps rt so that every request to the upstream carries h (the
// credentials of the config's `headers:`, resolved from the environment):
// keys travel in headers, never in URLs where logs and errors would show
// them. Nil or empty h leaves rt as it is.
func WithHeaders(rt http.RoundTripper, h http.Header) http.RoundTripper {
	if len(h) == 0 {
		return rt
	}
	return headers{rt: rt, h: h.Clone()}
}

type headers struct {
	rt http.RoundTripper
	h  http.Header
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper must not change the caller's request
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.rt.RoundTrip(r)
}

// CloseIdleConnections passes the call on, so closing a client reaches the pool.
func (t headers) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
