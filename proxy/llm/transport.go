package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
)

// Response bodies are read up to these sizes; larger ones are cut and the
// connection dropped rather than drained.
const (
	maxCompletionBody = 8 << 20
	maxModelsBody     = 4 << 20
)

// errUnbounded is what send answers to a context without a deadline. Complete
// always sets one, so seeing it means a code path bypassed the adapter.
var errUnbounded = errors.New("llm: refusing a provider call without a deadline")

// httpCaller owns the transport every provider uses, so its connection handling
// is ours: HTTP/1.1 only (a cancelled request closes its own connection rather
// than resetting one stream of a shared HTTP/2 connection), no redirects, a
// small idle pool closed by Adapter.Close. Waits are bounded by the request
// context, which always has a deadline (see send).
type httpCaller struct {
	transport *http.Transport
	client    *http.Client
}

func newHTTPCaller() *httpCaller {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	t := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		Protocols:              protocols,
		MaxIdleConns:           16,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &httpCaller{
		transport: t,
		client: &http.Client{
			Transport: t,
			// A redirect from an LLM API is a misconfiguration: answer with
			// the 3xx itself, which fails over like any non-2xx.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

func (c *httpCaller) closeIdle() { c.transport.CloseIdleConnections() }

type httpResult struct {
	status    int
	body      []byte
	truncated bool   // body was longer than the limit and was cut
	ctype     string // the Content-Type header as sent
}

// send is the only place in the package that performs HTTP. It refuses a
// context without a deadline; the request is bound to ctx, so when ctx ends
// the transport aborts the request and closes its connection, and the body is
// always closed before send returns.
//
// With stream set, a 2xx body is handed to stream as it arrives instead of
// being read into the result (the result then carries only the status).
func (c *httpCaller) send(ctx context.Context, method, url string, header http.Header, body []byte, limit int64, stream func(io.Reader) error) (httpResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		return httpResult{}, errUnbounded
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return httpResult{}, err
	}
	req.Header = header
	resp, err := c.client.Do(req)
	if err != nil {
		return httpResult{}, err
	}
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	// An HTML page is never a stream: read it as a body, so it is reported by shape.
	if media, _, _ := mime.ParseMediaType(ctype); stream != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 && media != "text/html" {
		return httpResult{status: resp.StatusCode, ctype: ctype}, stream(resp.Body)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	res := httpResult{status: resp.StatusCode, body: data, ctype: ctype}
	if int64(len(data)) > limit {
		res.body, res.truncated = data[:limit], true
	}
	if err != nil {
		return res, fmt.Errorf("reading response body: %w", err)
	}
	return res, nil
}

// attemptResult is what a provider reports for one attempt; the adapter turns
// it into an Attempt, reclassifying transport errors caused by its deadlines.
type attemptResult struct {
	text    string
	model   string
	outcome Outcome
	status  int
	detail  string
	excerpt string
	gated   bool // an OAuth token met Anthropic's gating pattern (see oauthGated)
}

// fromHTTP classifies the transport level: an error, a non-2xx status or an
// oversized body ends the attempt (ok=false); otherwise the body is the
// caller's to parse.
func fromHTTP(model, what string, res httpResult, err error) (attemptResult, bool) {
	r := attemptResult{model: model, status: res.status, excerpt: excerpt(res.body)}
	switch {
	case err != nil:
		r.outcome, r.detail = OutcomeTransport, what+": "+err.Error()
	case res.status < 200 || res.status > 299:
		r.outcome, r.detail = OutcomeStatus, what+": "+errorSummary(res.body)
		if foreignShape(res) {
			r.detail = what + ": " + shapeDetail(res)
		}
	case foreignShape(res):
		r.outcome, r.detail = OutcomeInvalid, what+": "+shapeDetail(res)
	case res.truncated:
		r.outcome, r.detail = OutcomeInvalid, fmt.Sprintf("%s: response body over %d bytes", what, len(res.body))
	default:
		return r, true
	}
	return r, false
}

// errorSummary pulls "type: message" out of either provider's error envelope,
// {"type":"error","error":{"type","message"}} or {"error":{"message","type"}}.
func errorSummary(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && len(env.Error) > 0 {
		var e struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &e) == nil && (e.Type != "" || e.Message != "") {
			return strings.TrimSuffix(strings.TrimPrefix(e.Type+": "+e.Message, ": "), ": ")
		}
		var s string
		if json.Unmarshal(env.Error, &s) == nil && s != "" {
			return s
		}
	}
	if len(body) == 0 {
		return "empty body"
	}
	return "unrecognised error body"
}

// invalid reports a 2xx body that does not parse as the wire format.
func invalid(r attemptResult, format string, args ...any) attemptResult {
	r.outcome, r.detail = OutcomeInvalid, fmt.Sprintf(format, args...)
	return r
}

func jsonHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "mcpchaos-proxy")
	return h
}

// foreignShape reports whether an answer came from something other than the
// provider's API (an L7 proxy's plain-text 403, a gateway's HTML error page, a
// captive portal): a body that is not JSON, labelled neither JSON nor an event
// stream. A JSON body mislabelled as text/plain is still the provider's.
func foreignShape(res httpResult) bool {
	if len(res.body) == 0 || res.ctype == "" || json.Valid(res.body) {
		return false
	}
	media, _, err := mime.ParseMediaType(res.ctype)
	if err != nil {
		return true
	}
	return media != "application/json" && !strings.HasSuffix(media, "+json") && media != "text/event-stream"
}

// shapeDetail says what answered instead of the provider, with its status,
// media type and first bytes.
func shapeDetail(res httpResult) string {
	media, _, err := mime.ParseMediaType(res.ctype)
	if err != nil {
		media = res.ctype
	}
	return fmt.Sprintf("answered %d %s `%s`, not the provider's JSON: something between mcplocal and the provider answered (a proxy or gateway?)",
		res.status, media, excerpt(res.body))
}
