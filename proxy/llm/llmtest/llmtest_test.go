package llmtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to the stand-in's path and returns the status, the
// Content-Type and the body of its answer.
func post(t *testing.T, s *Server, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestAnswersWholeShape: each path answers the provider's own shape, a
// completion or an error envelope, as JSON; Set changes the answer to later
// requests; Requests records each one's path, model, prompt, max_tokens and
// headers, oldest first.
func TestAnswersWholeShape(t *testing.T) {
	s := New(Answer{Text: "hello"})
	defer s.Close()
	const ask = `{"model":"m1","max_tokens":7,"messages":[{"content":"first"},{"content":[{"type":"text"}]},{"content":"second"}]}`
	for _, c := range []struct {
		name   string
		answer *Answer // nil: keep the current one
		path   string
		status int
		body   string
	}{
		{"openai text", nil, "/v1/chat/completions", 200,
			`{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"hello","role":"assistant"}}],"created":1,"id":"chatcmpl-test","model":"m1","object":"chat.completion","usage":{"completion_tokens":1,"prompt_tokens":1,"total_tokens":2}}`},
		{"anthropic text", nil, "/v1/messages", 200,
			`{"content":[{"text":"hello","type":"text"}],"id":"msg_test","model":"m1","role":"assistant","stop_reason":"end_turn","type":"message","usage":{"input_tokens":1,"output_tokens":1}}`},
		{"openai error", &Answer{Status: 503}, "/v1/chat/completions", 503,
			`{"error":{"code":null,"message":"Service Unavailable","param":null,"type":"server_error"}}`},
		{"anthropic error", nil, "/v1/messages", 503,
			`{"error":{"message":"Service Unavailable","type":"api_error"},"type":"error"}`},
	} {
		if c.answer != nil {
			s.Set(*c.answer)
		}
		status, ctype, body := post(t, s, c.path, ask)
		if status != c.status || ctype != "application/json" || body != c.body+"\n" {
			t.Errorf("%s: %d %q %s\nwant %d \"application/json\" %s", c.name, status, ctype, body, c.status, c.body)
		}
	}
	got := s.Requests()
	if len(got) != 4 {
		t.Fatalf("%d requests recorded, want 4", len(got))
	}
	for i, path := range []string{"/v1/chat/completions", "/v1/messages", "/v1/chat/completions", "/v1/messages"} {
		r := got[i]
		if r.Path != path || r.Model != "m1" || r.Prompt != "first\nsecond" || r.MaxTokens != 7 || r.Header.Get("X-Test") != "yes" {
			t.Errorf("request %d = %+v", i, r)
		}
	}
}
