package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestChatPrintsTheAnswerThenTheModel: chat sends the message as JSON and
// prints the answer, then the model that answered with its trace code, and
// a failover line when the primary failed; streamed, the answer's line is
// ended before the model line, however long the answer.
func TestChatPrintsTheAnswerThenTheModel(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	for _, c := range []struct {
		name   string
		args   []string
		answer string
		stdout string
	}{
		{"whole", nil, `{"text":"hi there","llm":"vllm","model":"qwen","traceCode":"7K3M9QXZ"}`,
			"hi there\nmodel: vllm (qwen)  [trace 7K3M9QXZ]\n"},
		{"failed over", nil, `{"text":"hi","llm":"ollama","model":"llama","failedOver":true,"traceCode":"7K3M9QXZ"}`,
			"hi\nmodel: ollama (llama)  [trace 7K3M9QXZ]\n⚠ failed over → answered by ollama (llama)\n"},
		{"streamed", []string{"--stream"}, "event: chunk\ndata: {\"text\":\"hi \"}\n\nevent: chunk\ndata: {\"text\":\"there\"}\n\n" +
			"event: done\ndata: {\"llm\":\"vllm\",\"model\":\"qwen\",\"traceCode\":\"7K3M9QXZ\"}\n\n",
			"hi there\nmodel: vllm (qwen)  [trace 7K3M9QXZ]\n"},
		{"streamed, a long chunk", []string{"--stream"}, "event: chunk\ndata: {\"text\":\"" + long + "\"}\n\n" +
			"event: done\ndata: {\"llm\":\"vllm\",\"model\":\"qwen\",\"traceCode\":\"7K3M9QXZ\"}\n\n",
			long + "\nmodel: vllm (qwen)  [trace 7K3M9QXZ]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{"POST /api/v1/chat": ok200(c.answer)})
			r := cli(t, append([]string{"chat", "hello", "world", "--url", s.srv.URL}, c.args...)...)
			r.wantCode(t, exitOK)
			if r.stdout != c.stdout {
				t.Errorf("stdout %.200q, want %.200q", r.stdout, c.stdout)
			}
			q := s.requests()
			if len(q) != 1 || q[0].contentType != "application/json" {
				t.Fatalf("sent %+v, want one JSON request", q)
			}
			if msgs, _ := q[0].body["messages"].([]any); len(msgs) != 1 || fmt.Sprint(msgs[0]) != "map[content:hello world role:user]" {
				t.Errorf("messages %v, want the one user message", q[0].body["messages"])
			}
		})
	}
}

// TestChatStreamFrameTooLongIsAnError: a stream frame beyond what mcpctl
// reads (1 MiB) ends the chat with an error saying the stream could not be
// read, exit 1.
func TestChatStreamFrameTooLongIsAnError(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{"POST /api/v1/chat": ok200("event: chunk\ndata: {\"text\":\"" + strings.Repeat("x", 2<<20) + "\"}\n\n")})
	r := cli(t, "chat", "hello", "--stream", "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "reading the stream: ")
}
