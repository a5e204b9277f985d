package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestChatStreamErrorPrintsNoBlankLine: a streamed chat that fails before
// any chunk prints nothing on stdout, only its error; one that fails after
// a chunk ends that chunk's line.
func TestChatStreamErrorPrintsNoBlankLine(t *testing.T) {
	for _, c := range []struct{ events, stdout string }{
		{"event: error\ndata: {\"error\":\"every candidate failed\",\"traceCode\":\"7K3M9QXZ\"}\n\n", ""},
		{"event: chunk\ndata: {\"text\":\"half an ans\"}\n\nevent: error\ndata: {\"error\":\"broke off\",\"traceCode\":\"7K3M9QXZ\"}\n\n", "half an ans\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(c.events))
		}))
		r := cli(t, "chat", "hello", "--stream", "--url", srv.URL)
		srv.Close()
		r.wantCode(t, exitFailure)
		r.wantStderr(t, "chat failed: ", "[trace 7K3M9QXZ]")
		if r.stdout != c.stdout {
			t.Errorf("stdout %q, want %q", r.stdout, c.stdout)
		}
	}
}
