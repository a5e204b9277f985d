package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// streamChain is a two-provider chain over stubs: an OpenAI-style primary
// and an Anthropic fallback whose claude-sonnet-latest follows to
// claude-sonnet-5.
func streamChain(t *testing.T, primary, fallback behaviour) (*Adapter, *stub, *stub) {
	t.Helper()
	p := newStub(t, primary)
	f := newStub(t, fallback)
	f.models = (&pager{list: []listedModel{{"claude-sonnet-4-5", "2025-09-29T00:00:00Z"}, {"claude-sonnet-5", "2026-03-01T00:00:00Z"}}}).handler
	k := knobs.Defaults()
	k.LLMCallBudget, k.LLMProviderTimeout = 600*time.Millisecond, 300*time.Millisecond
	a, err := New(Config{Primary: "vllm", Providers: map[string]ProviderConfig{
		"vllm":     {Kind: KindOpenAI, URL: p.srv.URL + "/v1", Model: "qwen3-32b", Fallbacks: []string{"fallback"}},
		"fallback": {Kind: KindAnthropic, URL: f.srv.URL, Model: "claude-sonnet-latest"},
	}}, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, p, f
}

// streamReply is what the stubs stream: several words, so several chunks.
const streamReply = "The backup runbook lives in ops/backup.md and restores last night's snapshot."

var streamPrompt = Request{Messages: []Message{{Role: RoleUser, Content: "tell me about the backup runbook please"}}}

func TestStreamDeliversChunksThatMakeTheAnswer(t *testing.T) {
	a, _, f := streamChain(t, streamed(streamReply, endDone), streamed(streamReply, endDone))
	var chunks []string
	resp, err := a.Stream(context.Background(), streamPrompt, func(s string) { chunks = append(chunks, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 || strings.Join(chunks, "") != resp.Text || resp.Text != streamReply {
		t.Fatalf("chunks %q, text %q", chunks, resp.Text)
	}
	if resp.FailedOver || resp.Provider != "vllm" || f.hits.Load() != 0 {
		t.Fatalf("answered by %s (failed over %v)", resp.Provider, resp.FailedOver)
	}
}

func TestStreamFailsOverBeforeTheFirstChunk(t *testing.T) {
	a, _, _ := streamChain(t, raw(http.StatusNotFound, `{"error":{"message":"The model `+"`qwen3-32b`"+` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`), streamed(streamReply, endDone))
	var got strings.Builder
	resp, err := a.Stream(context.Background(), streamPrompt, func(s string) { got.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if !resp.FailedOver || resp.Provider != "fallback" || resp.Model != "claude-sonnet-5" || got.String() != resp.Text {
		t.Fatalf("resp = %+v, streamed %q", resp, got.String())
	}
}

func TestStreamDoesNotFailOverAfterTheFirstChunk(t *testing.T) {
	for name, end := range map[string]streamEnd{"stall_mid_stream": endStall, "truncated_stream": endTruncate, "stream_error": endError} {
		t.Run(name, func(t *testing.T) {
			a, _, f := streamChain(t, streamed(streamReply, end), streamed(streamReply, endDone))
			var got strings.Builder
			w := startWatch()
			_, err := a.Stream(context.Background(), streamPrompt, func(s string) { got.WriteString(s) })
			tm := w.end()
			if !errors.Is(err, ErrStreamBroken) {
				t.Fatalf("err = %v, want ErrStreamBroken", err)
			}
			if got.Len() == 0 {
				t.Fatal("no chunk arrived before the break: the fake did not stream")
			}
			if n := f.hits.Load(); n != 0 {
				t.Fatalf("the fallback was asked %d times after the caller already had part of an answer", n)
			}
			betweenTimed(t, "a stream broken after its first chunk (budget 600ms)", tm, 0, 600*time.Millisecond+tolerance)
			var ce *ChainError
			if !errors.As(err, &ce) || len(ce.Attempts) != 1 || ce.Attempts[0].Model != "qwen3-32b" {
				t.Fatalf("the error does not name the broken attempt: %v", err)
			}
		})
	}
}
