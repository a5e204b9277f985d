// Package bycall ties what an upstream sends during a call to that call.
//
// An upstream sends the requests (sampling, elicitation, roots) and the
// notifications (progress, log messages) a call causes on that call's own
// response stream (Streamable HTTP). The go-sdk client of an upstream
// session hands them to the proxy's handlers with nothing saying which of
// the session's concurrent calls they came with. So the proxy's HTTP
// transport to upstreams (Transport) writes the call's tag, which the call's
// context carries (With), into the _meta of every message that arrives on
// that call's stream; the handler takes it out again (Take) and relays the
// message on the client's stream of that same call (promise 9, "routing is
// by call"; docs/protocol.md). A message on no call's stream (the upstream's
// standalone stream) carries no tag: an upstream cannot forge one, because
// Transport removes the key from every message that is not on a tagged
// call's stream.
package bycall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"time"
)

// MetaKey is the _meta key carrying a call's tag between the transport and
// the handlers; it never leaves the proxy.
const MetaKey = "io.mcplocal/route"

var metaKey = []byte(`"` + MetaKey + `"`)

// Call is one request to an upstream, as the messages on its stream are
// tied to it.
type Call struct {
	Tag string // unique among the calls in flight
	// sent counts the notifications (progress, log messages) that arrived
	// on the call's stream, handled those the proxy relayed (Handled); the
	// go-sdk client hands the proxy the call's result as soon as it reads
	// it, while the notifications read before it may still wait for their
	// handler: Drain waits for them.
	sent, handled atomic.Int64
	signal        chan struct{}
}

// NewCall is a call tagged tag.
func NewCall(tag string) *Call { return &Call{Tag: tag, signal: make(chan struct{}, 1)} }

// Handled says one notification that came on the call's stream was relayed.
func (c *Call) Handled() {
	c.handled.Add(1)
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// Drain waits until every notification that came on the call's stream so
// far was relayed (Handled), at most max or until ctx ends; it reports
// whether all were.
func (c *Call) Drain(ctx context.Context, max time.Duration) bool {
	if c.handled.Load() >= c.sent.Load() {
		return true
	}
	t := time.NewTimer(max)
	defer t.Stop()
	for c.handled.Load() < c.sent.Load() {
		select {
		case <-c.signal:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

type callKey struct{}

// With returns ctx carrying c: the messages that arrive on the response
// stream of a request made under it carry c's tag.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// From is the call ctx carries (nil when none).
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Take removes the tag from meta (a message's _meta, as the go-sdk decoded
// it) and returns it; "" when there is none.
func Take(meta map[string]any) string {
	v, ok := meta[MetaKey]
	if !ok {
		return ""
	}
	delete(meta, MetaKey)
	t, _ := v.(string)
	return t
}

// Transport wraps rt: the event stream answering a request made under a
// tag (With) has that tag written into the _meta of every message with a
// method in it (a request or a notification); on every other event stream,
// the key is removed wherever an upstream wrote it. A response that is not
// an event stream is left as it is (it holds one response, no message of
// the upstream's own).
func Transport(rt http.RoundTripper) http.RoundTripper { return transport{rt: rt} }

type transport struct{ rt http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "text/event-stream" {
		return resp, nil
	}
	resp.Body = &stream{rc: resp.Body, r: bufio.NewReader(resp.Body), call: From(r.Context())}
	return resp, nil
}

// CloseIdleConnections passes the call on, so closing a client reaches the pool.
func (t transport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// stream rewrites an event stream event by event: an event is passed on
// once its blank line arrived, so nothing is held back longer than the
// upstream takes to finish writing it.
type stream struct {
	rc   io.ReadCloser
	r    *bufio.Reader
	call *Call        // nil: the stream of no tagged call
	out  bytes.Buffer // rewritten bytes not read yet
	data []byte       // the data lines of the event being read, joined
	rest []byte       // its other lines, as they came
	err  error
}

func (s *stream) Read(p []byte) (int, error) {
	for s.out.Len() == 0 && s.err == nil {
		s.fill()
	}
	if s.out.Len() > 0 {
		return s.out.Read(p)
	}
	return 0, s.err
}

// fill reads one line and, at an event's end, writes the event to out.
func (s *stream) fill() {
	line, err := s.r.ReadBytes('\n')
	if len(line) > 0 {
		body := bytes.TrimRight(line, "\r\n")
		switch v, isData := bytes.CutPrefix(body, []byte("data:")); {
		case len(body) == 0:
			s.flush()
			s.out.Write(line)
		case isData:
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, bytes.TrimPrefix(v, []byte(" "))...)
		default:
			s.rest = append(s.rest, line...)
		}
	}
	if err != nil {
		s.flush()
		s.err = err
	}
}

// flush writes the event read so far, its data rewritten.
func (s *stream) flush() {
	s.out.Write(s.rest)
	s.rest = s.rest[:0]
	if len(s.data) == 0 {
		return
	}
	data := s.data
	tag := ""
	if s.call != nil {
		tag = s.call.Tag
	}
	if b, method, ok := Rewrite(data, tag); ok {
		data = b
		if tag != "" && (method == "notifications/progress" || method == "notifications/message") {
			s.call.sent.Add(1)
		}
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		s.out.WriteString("data: ")
		s.out.Write(line)
		s.out.WriteByte('\n')
	}
	s.data = s.data[:0]
}

func (s *stream) Close() error { return s.rc.Close() }

// Rewrite returns msg, one JSON-RPC message, with tag in its params' _meta
// when it is a request or a notification (tag "": with the key removed),
// and its method; ok is false when msg is left as it is (a response, not
// JSON, or nothing to change). Only messages that may need it are decoded.
func Rewrite(msg []byte, tag string) ([]byte, string, bool) {
	if tag == "" && !bytes.Contains(msg, metaKey) {
		return nil, "", false
	}
	if tag != "" && !bytes.Contains(msg, []byte(`"method"`)) {
		return nil, "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return nil, "", false
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method == "" {
		return nil, "", false
	}
	params := map[string]json.RawMessage{}
	if p := m["params"]; len(p) > 0 && string(p) != "null" {
		if json.Unmarshal(p, &params) != nil {
			return nil, "", false
		}
	}
	meta := map[string]json.RawMessage{}
	if mm := params["_meta"]; len(mm) > 0 && string(mm) != "null" {
		if json.Unmarshal(mm, &meta) != nil {
			return nil, "", false
		}
	}
	if tag == "" {
		if _, ok := meta[MetaKey]; !ok {
			return nil, "", false
		}
		delete(meta, MetaKey)
	} else {
		meta[MetaKey], _ = json.Marshal(tag)
	}
	if len(meta) == 0 {
		delete(params, "_meta")
	} else {
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, "", false
		}
		params["_meta"] = b
	}
	pb, err := json.Marshal(params)
	if err != nil {
		return nil, "", false
	}
	m["params"] = pb
	out, err := json.Marshal(m)
	return out, method, err == nil
}
