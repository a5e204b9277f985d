package upstream

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody records whether it was closed.
type trackedBody struct {
	io.Reader
	closed bool
}

func (b *trackedBody) Close() error { b.closed = true; return nil }

// limitedResponse answers body through LimitResponses(max), with the given
// Content-Length (-1: unknown).
func limitedResponse(t *testing.T, body string, contentLength, max int64) (*http.Response, *trackedBody, error) {
	t.Helper()
	tb := &trackedBody{Reader: strings.NewReader(body)}
	rt := LimitResponses(rtFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: tb, ContentLength: contentLength}, nil
	}), max)
	req, err := http.NewRequest(http.MethodGet, "http://upstream.invalid/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	return resp, tb, err
}

// TestResponseLimitIsInclusive: a body of exactly the limit reads whole,
// with its end; one byte more fails with a TooLargeError and the body is
// closed; a Content-Length past the limit is refused before reading, the
// body closed.
func TestResponseLimitIsInclusive(t *testing.T) {
	const max = 8
	resp, _, err := limitedResponse(t, strings.Repeat("a", max), -1, max)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != max {
		t.Fatalf("a body of exactly %d bytes: %d bytes, %v", max, len(b), err)
	}

	resp, tb, err := limitedResponse(t, strings.Repeat("a", max+1), -1, max)
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != max || len(b) != max || !tb.closed {
		t.Fatalf("a body one byte over: %d bytes, %v, closed %v; want %d bytes, a TooLargeError, closed", len(b), err, tb.closed, max)
	}

	_, tb, err = limitedResponse(t, strings.Repeat("a", max+1), max+1, max)
	if !errors.As(err, &tl) || !tb.closed {
		t.Fatalf("a Content-Length over the limit: %v, closed %v; want a TooLargeError, closed", err, tb.closed)
	}
	if _, _, err = limitedResponse(t, strings.Repeat("a", max), max, max); err != nil {
		t.Fatalf("a Content-Length of exactly the limit: %v", err)
	}
}
