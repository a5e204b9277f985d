package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// TestErrorSummaryReadsEveryEnvelope: the "type: message" of both
// providers' error envelopes, either half alone, a bare string error, and
// what is said when there is none.
func TestErrorSummaryReadsEveryEnvelope(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`: "not_found_error: model: x",
		`{"error":{"message":"Rate limit reached","type":"requests"}}`:             "requests: Rate limit reached",
		`{"error":{"type":"overloaded_error"}}`:                                    "overloaded_error",
		`{"error":{"message":"only a message"}}`:                                   "only a message",
		`{"error":"a plain string"}`:                                               "a plain string",
		`{"error":""}`:                                                             "unrecognised error body",
		`{"error":{}}`:                                                             "unrecognised error body",
		`{"detail":"no error field"}`:                                              "unrecognised error body",
		`not json`:                                                                 "unrecognised error body",
		``:                                                                         "empty body",
	} {
		if got := errorSummary([]byte(body)); got != want {
			t.Errorf("errorSummary(%s) = %q, want %q", body, got, want)
		}
	}
}

// TestEvery2xxIsAnAnswer: 200 through 299 are answers; 199 and 300 are
// failures with the status.
func TestEvery2xxIsAnAnswer(t *testing.T) {
	body := []byte(`{"ok":true}`)
	for status, ok := range map[int]bool{199: false, 200: true, 299: true, 300: false} {
		r, gotOK := fromHTTP("m", "POST x", httpResult{status: status, body: body, ctype: "application/json"}, nil)
		if gotOK != ok {
			t.Errorf("status %d: ok %v, want %v (%+v)", status, gotOK, ok, r)
		}
		if !ok && (r.outcome != OutcomeStatus || r.status != status) {
			t.Errorf("status %d: %+v, want OutcomeStatus with the status", status, r)
		}
	}
}

// TestJSONRequestHeaders: what every non-streaming request says about
// itself, exactly.
func TestJSONRequestHeaders(t *testing.T) {
	h := jsonHeader()
	want := map[string]string{"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "mcpchaos-proxy"}
	if len(h) != len(want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, h.Get(k), v)
		}
	}
}

// TestBodyLimitIsInclusive: a body of exactly limit bytes is whole; one
// byte more is cut to limit and marked truncated.
func TestBodyLimitIsInclusive(t *testing.T) {
	const limit = 16
	for size, truncated := range map[int]bool{limit: false, limit + 1: true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("x", size)))
		}))
		c := newHTTPCaller()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := c.send(ctx, http.MethodGet, srv.URL, http.Header{}, nil, limit, nil)
		cancel()
		c.closeIdle()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.truncated != truncated || len(res.body) != limit {
			t.Errorf("a %d-byte body with limit %d: %d bytes, truncated %v; want %d, %v", size, limit, len(res.body), res.truncated, limit, truncated)
		}
	}
}

// TestCallsReuseTheirConnection: sequential calls to one provider go over
// one kept-alive connection (a zero idle timeout would dial every time).
func TestCallsReuseTheirConnection(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newHTTPCaller()
	defer c.closeIdle()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.send(ctx, http.MethodGet, srv.URL, http.Header{}, nil, 1<<10, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d connections for 3 sequential calls, want 1", n)
	}
}

// TestForeignShapeIsANonJSONBodyLabelledSoByItsSender: only a body that
// is not JSON, with a Content-Type that is neither JSON nor an event
// stream, came from something other than the provider.
func TestForeignShapeIsANonJSONBodyLabelledSoByItsSender(t *testing.T) {
	for _, c := range []struct {
		body, ctype string
		foreign     bool
	}{
		{"", "text/html", false},
		{"<html>", "", false},
		{`{"a":1}`, "text/plain", false},
		{"<html>", "text/html", true},
		{"Access denied", "text/plain; charset=utf-8", true},
		{"x", "application/problem+json", false},
		{"x", "text/event-stream", false},
		{"x", "application/json", false},
		{"x", "not a media type;;", true},
	} {
		if got := foreignShape(httpResult{body: []byte(c.body), ctype: c.ctype}); got != c.foreign {
			t.Errorf("body %q, Content-Type %q: foreign %v, want %v", c.body, c.ctype, got, c.foreign)
		}
	}
}

// TestAStreamAnsweredWith299IsAStream: every 2xx is read as the stream.
func TestAStreamAnsweredWith299IsAStream(t *testing.T) {
	noLeaks(t)
	s := newStub(t, func(_ *stub, w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(299)
		_, _ = w.Write([]byte(`data: {"choices":[{"delta":{"content":"ok"}}]}` + "\n\ndata: [DONE]\n\n"))
	})
	ad := newAdapter(t, chainOf(openaiCfg("o", s, "m")), knobs.Defaults())
	resp, err := ad.Stream(context.Background(), hello, func(string) {})
	if err != nil || resp.Text != "ok" {
		t.Fatalf("a 299 stream: %+v, %v", resp, err)
	}
}

// The caller speaks HTTP/1.1 only, even to a TLS provider that offers
// HTTP/2 and with HTTP/2 forced on its transport: a cancelled call then
// closes its own connection instead of resetting one stream of a shared one
// (newHTTPCaller). The test trusts the server's certificate through the
// transport's TLS config, which on its own would turn automatic HTTP/2 off;
// forcing HTTP/2 back on is what makes the pinned protocol the deciding
// setting.
func TestTheCallerSpeaksHTTP1WhereHTTP2IsOffered(t *testing.T) {
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	c := newHTTPCaller()
	t.Cleanup(c.closeIdle)
	c.transport.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c.transport.ForceAttemptHTTP2 = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.send(ctx, http.MethodGet, srv.URL, http.Header{}, nil, 1<<10, nil)
	if err != nil || res.status != http.StatusOK {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if got := proto.Load(); got != "HTTP/1.1" {
		t.Errorf("the provider was spoken to over %v, want HTTP/1.1", got)
	}
	// The server does speak HTTP/2 to a client that asks for it.
	h2 := srv.Client()
	h2.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	resp, err := h2.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := proto.Load(); got != "HTTP/2.0" {
		t.Fatalf("a client that offers HTTP/2 got %v: the server does not offer it, so the check above proves nothing", got)
	}
}
