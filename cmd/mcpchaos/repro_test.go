package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestReproHang1800s runs the incident end to end, compressed 300×: the
// mutant never answers within the 6 s client timeout, mcplocal answers
// within its budget plus the catalogue's stated tolerance, with the notice.
func TestReproHang1800s(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	if err := run(ctx, []string{"repro", "hang-1800s", "--compress", "300"}, &out, &errOut); err != nil {
		t.Fatalf("repro failed: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{
		"docmost_search       NO ANSWER: the client gave up after 6",
		"⚠ Smart page titles unavailable (",
		"⚠ Session state unavailable (",
		"Reproduced: (a) never answered",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The raw call's verdict, half by half: the seed's proxy answers the
	// stale id outside the envelope, mcplocal inside it.
	a, b, ok := strings.Cut(out.String(), "== (b)")
	if !ok {
		t.Fatalf("no (b) half in the output:\n%s", out.String())
	}
	const bare, correlated = "NOT a JSON-RPC message: the client cannot tell which request it answers", ": a JSON-RPC message the client can correlate"
	if !strings.Contains(a, bare) || strings.Contains(a, correlated) {
		t.Errorf("(a)'s raw call is not judged %q:\n%s", bare, a)
	}
	if !strings.Contains(b, correlated) || strings.Contains(b, bare) {
		t.Errorf("(b)'s raw call is not judged %q:\n%s", correlated, b)
	}
	t.Logf("repro took %v", time.Since(start))
}

func TestReproRejectsUnknownIncidents(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"repro", "hang-60s"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "unknown incident") {
		t.Fatalf("err = %v", err)
	}
}

// TestReproReadsTheAnswerOfEitherContentType: the raw call's verdict is about
// the JSON-RPC envelope, whatever carries it. An SSE stream whose event
// answers id 7 is a correlated answer; so is a JSON body; a plain-text 404
// and an SSE stream answering another id are not.
func TestReproReadsTheAnswerOfEitherContentType(t *testing.T) {
	for _, c := range []struct {
		name, ctype, body string
		want              bool
	}{
		{"sse, a notification first", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\nid: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n", true},
		{"sse, data split over lines", "text/event-stream; charset=utf-8", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\"result\":{}}\n", true},
		{"sse, another id", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\n", false},
		{"json", "application/json", `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`, true},
		{"bare 404", "text/plain; charset=utf-8", "session not found", false},
		{"sse body read as plain text", "text/plain", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n", false},
	} {
		if got := answersID(c.ctype, []byte(c.body), "7"); got != c.want {
			t.Errorf("%s: answersID = %v, want %v", c.name, got, c.want)
		}
	}
}
