package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// streamChain is a two-provider chain over the fakes: an OpenAI-style
// primary and an Anthropic fallback.
func streamChain(t *testing.T, primary, fallback fakellm.Step) (*Adapter, *fakellm.Server, *fakellm.Server) {
	t.Helper()
	p, err := fakellm.New(fakellm.Options{Provider: fakellm.OpenAI, Default: primary})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	f, err := fakellm.New(fakellm.Options{Provider: fakellm.Anthropic, Default: fallback})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	k := knobs.Defaults()
	k.LLMCallBudget, k.LLMProviderTimeout = 600*time.Millisecond, 300*time.Millisecond
	a, err := New(Config{Primary: "vllm", Providers: map[string]ProviderConfig{
		"vllm":     {Kind: KindOpenAI, URL: p.BaseURL(), Model: "qwen3-32b", Fallbacks: []string{"fallback"}},
		"fallback": {Kind: KindAnthropic, URL: f.URL(), Model: "claude-sonnet-latest"},
	}}, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, p, f
}

var streamPrompt = Request{Messages: []Message{{Role: RoleUser, Content: "tell me about the backup runbook please"}}}

func TestStreamDeliversChunksThatMakeTheAnswer(t *testing.T) {
	a, _, f := streamChain(t, fakellm.Step{Kind: fakellm.OK}, fakellm.Step{Kind: fakellm.OK})
	var chunks []string
	resp, err := a.Stream(context.Background(), streamPrompt, func(s string) { chunks = append(chunks, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 || strings.Join(chunks, "") != resp.Text || resp.Text != fakellm.Reply(streamPrompt.Messages[0].Content) {
		t.Fatalf("chunks %q, text %q", chunks, resp.Text)
	}
	if resp.FailedOver || resp.Provider != "vllm" || len(f.Requests()) != 0 {
		t.Fatalf("answered by %s (failed over %v)", resp.Provider, resp.FailedOver)
	}
}

func TestStreamFailsOverBeforeTheFirstChunk(t *testing.T) {
	a, _, _ := streamChain(t, fakellm.Step{Kind: fakellm.NotFound}, fakellm.Step{Kind: fakellm.OK})
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
	for _, k := range []fakellm.Kind{fakellm.StallMidStream, fakellm.TruncatedStream, fakellm.StreamError} {
		t.Run(string(k), func(t *testing.T) {
			a, _, f := streamChain(t, fakellm.Step{Kind: k}, fakellm.Step{Kind: fakellm.OK})
			var got strings.Builder
			start := time.Now()
			_, err := a.Stream(context.Background(), streamPrompt, func(s string) { got.WriteString(s) })
			if !errors.Is(err, ErrStreamBroken) {
				t.Fatalf("err = %v, want ErrStreamBroken", err)
			}
			if got.Len() == 0 {
				t.Fatal("no chunk arrived before the break: the fake did not stream")
			}
			if n := len(f.Requests()); n != 0 {
				t.Fatalf("the fallback was asked %d times after the caller already had part of an answer", n)
			}
			if el := time.Since(start); el > 600*time.Millisecond+60*time.Millisecond {
				t.Fatalf("took %v, budget 600ms + 60ms tolerance", el)
			}
			var ce *ChainError
			if !errors.As(err, &ce) || len(ce.Attempts) != 1 || ce.Attempts[0].Model != "qwen3-32b" {
				t.Fatalf("the error does not name the broken attempt: %v", err)
			}
		})
	}
}
