package upstream

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// ShapeError says an upstream's answer was not MCP's: plain text, HTML or no
// body where JSON-RPC (application/json or text/event-stream) was expected.
// The seed's "ingress hairpin": an L7 proxy between mcplocal and the server
// answered a bare `Access denied` 403, and only the shape of the error told it
// apart from the server's own (JSON-RPC) errors.
type ShapeError struct {
	Status      int
	ContentType string // its media type (parameters dropped); empty when the answer had none
	Excerpt     string // the first bytes of the body, on one line
}

func (e *ShapeError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "with no Content-Type"
	}
	return fmt.Sprintf("upstream answered %d %s `%s`, not JSON-RPC: something between mcplocal and the server answered (an L7 proxy or gateway?)",
		e.Status, ct, e.Excerpt)
}

// Advice is what a failed call's error tells the agent to do about err from
// server: a 401 or 403 of another shape than MCP's is a policy in front of the
// server denying the request, which a retry will not change; anything else
// may be passing trouble.
func Advice(err error, server string) string {
	var se *ShapeError
	if errors.As(err, &se) && (se.Status == http.StatusForbidden || se.Status == http.StatusUnauthorized) {
		return fmt.Sprintf("the request was denied by whatever answered in front of upstream %s, and retrying will not change a policy's answer: "+
			"have it allow mcplocal's requests, or point the server's url past it", server)
	}
	return fmt.Sprintf("retry, and if it keeps failing the upstream %s may be down", server)
}

// shapeExcerptBytes is how much of a misshapen body is read and quoted: a
// formatting limit, not a resource bound (the body is then closed unread).
const shapeExcerptBytes = 200

// Shape wraps base so that an answer to a POST (every MCP message is one)
// whose shape is not MCP's fails the round trip with a *ShapeError instead of
// reaching the SDK, which would report it as a bare status text or
// "unsupported content type". What passes untouched:
//   - application/json and text/event-stream answers, whatever their status
//     (a JSON body that is not JSON-RPC is left to the SDK);
//   - 2xx answers without a body (202 Accepted for notifications);
//   - a 404 on a request carrying Mcp-Session-Id: the spec's "session
//     terminated" signal, whatever its body, which drives reconnection;
//   - every other method (GET streams, DELETE).
//
// The wrapper forwards CloseIdleConnections to base.
func Shape(base http.RoundTripper) http.RoundTripper { return shape{base: base} }

type shape struct{ base http.RoundTripper }

func (s shape) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || wellShaped(r, resp) {
		return resp, err
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, shapeExcerptBytes))
	_ = resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if media, _, err := mime.ParseMediaType(ct); err == nil {
		ct = media
	}
	return nil, &ShapeError{Status: resp.StatusCode, ContentType: ct, Excerpt: oneLine(b)}
}

func (s shape) CloseIdleConnections() {
	if c, ok := s.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func wellShaped(r *http.Request, resp *http.Response) bool {
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case media == "application/json" || media == "text/event-stream":
		return true
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && (resp.ContentLength == 0 || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent):
		return true
	case resp.StatusCode == http.StatusNotFound && r.Header.Get("Mcp-Session-Id") != "":
		return true
	}
	return false
}

// oneLine makes b printable on one line: invalid UTF-8 (a rune cut by the
// excerpt included) replaced, whitespace runs collapsed.
func oneLine(b []byte) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " ")
}
