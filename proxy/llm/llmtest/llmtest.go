// Package llmtest is a stand-in LLM provider for the proxy's own unit tests:
// it answers the OpenAI chat-completions path and the Anthropic messages path
// on loopback, non-streamed, with a text or an error status, and records what
// it was asked. It is deliberately small; the scripted fakes that play the
// providers' faults (streams, stalls, gated tokens, ...) live in fakes/llm and
// drive the whole proxy from scenarios/, which proxy/ may not import.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Answer is what the provider says to every completion request.
type Answer struct {
	// Text is the completion's text.
	Text string
	// Status, when not 0, answers with this HTTP status and the provider's
	// error body instead of a completion.
	Status int
}

// Request is one completion request the provider received.
type Request struct {
	Path   string
	Model  string
	Prompt string // the messages' contents, one per line
	// MaxTokens is the request's max_tokens (0 when it has none).
	MaxTokens int
	Header    http.Header
}

// Server is a running stand-in provider. Its methods may be called from
// any goroutine.
type Server struct {
	srv      *httptest.Server
	mu       sync.Mutex
	answer   Answer
	requests []Request
}

// New starts a provider answering a on loopback. Close it when done.
func New(a Answer) *Server {
	s := &Server{answer: a}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.complete)
	mux.HandleFunc("POST /v1/messages", s.complete)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the provider's root: an Anthropic provider's url.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is the root plus /v1: an OpenAI-compatible provider's url.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Set changes the answer to later requests.
func (s *Server) Set(a Answer) {
	s.mu.Lock()
	s.answer = a
	s.mu.Unlock()
}

// Requests returns the completion requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Close stops the server and closes its connections.
func (s *Server) Close() { s.srv.CloseClientConnections(); s.srv.Close() }

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &in)
	var prompt []string
	for _, m := range in.Messages {
		if c, ok := m.Content.(string); ok {
			prompt = append(prompt, c)
		}
	}
	anthropic := r.URL.Path == "/v1/messages"
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Model: in.Model, Prompt: strings.Join(prompt, "\n"), MaxTokens: in.MaxTokens, Header: r.Header.Clone()})
	a := s.answer
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	var out any
	switch {
	case a.Status != 0 && anthropic:
		w.WriteHeader(a.Status)
		out = map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": http.StatusText(a.Status)}}
	case a.Status != 0:
		w.WriteHeader(a.Status)
		out = map[string]any{"error": map[string]any{"message": http.StatusText(a.Status), "type": "server_error", "param": nil, "code": nil}}
	case anthropic:
		out = map[string]any{
			"id": "msg_test", "type": "message", "role": "assistant", "model": in.Model,
			"content":     []map[string]string{{"type": "text", "text": a.Text}},
			"stop_reason": "end_turn", "usage": map[string]int{"input_tokens": 1, "output_tokens": 1},
		}
	default:
		out = map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": in.Model,
			"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": a.Text}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		}
	}
	_ = json.NewEncoder(w).Encode(out)
}
