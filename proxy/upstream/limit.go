package upstream

import (
	"fmt"
	"io"
	"net/http"
)

// TooLargeError says an upstream's response body passed the size knob.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the upstream's response is larger than MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES=%d bytes; ask for less (narrower query, fewer results)", e.Limit)
}

// LimitResponses wraps rt so that no response body yields more than max
// bytes: reading past it fails with a *TooLargeError and closes the body, so
// an upstream returning hundreds of megabytes cannot grow the proxy. A max
// of 0 or less leaves rt as it is.
func LimitResponses(rt http.RoundTripper, max int64) http.RoundTripper {
	if max <= 0 {
		return rt
	}
	return limited{rt: rt, max: max}
}

type limited struct {
	rt  http.RoundTripper
	max int64
}

func (l limited) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > l.max {
		resp.Body.Close()
		return nil, &TooLargeError{Limit: l.max}
	}
	resp.Body = &limitedBody{rc: resp.Body, left: l.max, max: l.max}
	return resp, nil
}

// CloseIdleConnections passes the call on, so closing a client reaches the pool.
func (l limited) CloseIdleConnections() {
	if c, ok := l.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte would pass the limit: is there one?
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n > 0 {
			b.rc.Close()
			return 0, &TooLargeError{Limit: b.max}
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
