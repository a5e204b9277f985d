package catalogue

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// sseOf is an SSE stream of messages.
func sseOf(msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("event: message\ndata: " + m + "\n\n")
	}
	return b.String()
}

// The raw client of the routing rows speaks a session as a client does:
// its initialize offers the capabilities given and takes the session the
// answer issues, every later request names it; a POST's messages before
// its response are seen, the response is its answer; a notification's 202
// answers nothing; a refusal is an error; the standalone stream is a GET
// whose messages are all seen; close DELETEs the session.
func TestTheRawClientSpeaksASession(t *testing.T) {
	const sampling = `{"jsonrpc":"2.0","id":41,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"p1"}}]}}`
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case r.Method == http.MethodDelete:
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, sseOf(sampling, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
		case strings.Contains(body, `"initialize"`):
			answerJSON("RAW", `{"jsonrpc":"2.0","id":"init","result":{}}`)(w, r, body)
		case strings.Contains(body, "notifications/") || strings.Contains(body, `"result"`):
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(body, `"refuse"`):
			http.Error(w, "refused", http.StatusBadRequest)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, sseOf(sampling, `{"jsonrpc":"2.0","id":2,"result":{"answer":1}}`, `{"jsonrpc":"2.0","method":"after"}`))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A world of bounds: close gives its DELETE the request bound.
	rc := &rawClient{env: harness.JudgedOn(served{url: rec.url}, harness.CompressedBounds()), hc: harness.HTTPClient("alice-token")}
	if err := rc.open(ctx, `{"sampling":{}}`); err != nil || rc.session != "RAW" {
		t.Fatalf("open: %v, session %q", err, rc.session)
	}
	var seen []string
	answer, err := rc.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`, func(m rawMessage) { seen = append(seen, m.Method) })
	if err != nil || answer != `{"answer":1}` || strings.Join(seen, ",") != "sampling/createMessage" {
		t.Errorf("post: answer %q %v, seen %v; want the response's result and the request before it", answer, err, seen)
	}
	if answer, err := rc.post(ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, nil); err != nil || answer != "" {
		t.Errorf("a notification: %q %v", answer, err)
	}
	if _, err := rc.post(ctx, `{"jsonrpc":"2.0","id":3,"method":"refuse"}`, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a refusal: %v, want an error naming its status", err)
	}
	ready := make(chan struct{})
	var listened []string
	if err := rc.listen(ctx, ready, func(m rawMessage) { listened = append(listened, m.Method) }); err != nil || strings.Join(listened, ",") != "sampling/createMessage,notifications/message" {
		t.Errorf("listen: %v, seen %v", err, listened)
	}
	select {
	case <-ready:
	default:
		t.Error("the standalone stream answered, yet ready was not closed")
	}
	rc.answerSampling(ctx, rawMessage{ID: []byte("41"), Method: "sampling/createMessage", Params: []byte(`{"messages":[{"content":{"type":"text","text":"p1"}}]}`)})
	rc.close()

	got := rec.requests()
	if len(got) != 8 {
		t.Fatalf("%d requests, want 8", len(got))
	}
	if !strings.Contains(got[0].body, `"capabilities":{"sampling":{}}`) || got[0].header.Get("Mcp-Session-Id") != "" {
		t.Errorf("the initialize: %q, session %q", got[0].body, got[0].header.Get("Mcp-Session-Id"))
	}
	for i, r := range got[1:] {
		if r.header.Get("Mcp-Session-Id") != "RAW" || r.header.Get("Mcp-Protocol-Version") != "2025-11-25" || r.header.Get("Authorization") != "Bearer alice-token" {
			t.Errorf("request %d (%s): %v", i+1, r.method, r.header)
		}
	}
	if !strings.Contains(got[1].body, "notifications/initialized") {
		t.Errorf("after the initialize: %q", got[1].body)
	}
	if a := got[6]; !strings.Contains(a.body, `"id":41`) || !strings.Contains(a.body, `"text":"answer-p1"`) {
		t.Errorf("the sampling answer: %q", a.body)
	}
	if d := got[7]; d.method != http.MethodDelete {
		t.Errorf("close sent %s", d.method)
	}
}

// A raw client whose initialize issues no session, or whose standalone
// stream is refused, says so.
func TestTheRawClientFailsWhatDoesNotOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Method == http.MethodGet {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		answerJSON("", `{"jsonrpc":"2.0","id":"init","result":{}}`)(w, r, body)
	})
	rc := &rawClient{env: rec.env(), hc: harness.HTTPClient("alice-token")}
	if err := rc.open(ctx, `{}`); err == nil {
		t.Error("an initialize issuing no session opened one")
	}
	rc.session = "GIVEN"
	ready := make(chan struct{})
	if err := rc.listen(ctx, ready, func(rawMessage) {}); err == nil || !strings.Contains(err.Error(), "405") {
		t.Errorf("a refused standalone stream: %v", err)
	}
	select {
	case <-ready:
		t.Error("ready was closed for a refused stream")
	default:
	}
}
