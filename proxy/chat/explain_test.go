package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
)

// TestChatErrorExplainsAGatedOAuthToken: when the always-up fallback holds a
// subscription OAuth token that Anthropic gates (429 on a current model id),
// the chat error says so and asks for an API key, instead of an unexplained
// 429.
func TestChatErrorExplainsAGatedOAuthToken(t *testing.T) {
	f := llmtest.New(llmtest.Answer{Status: 429})
	defer f.Close()
	a, err := llm.New(llm.Config{Primary: "anthropic-fallback", Providers: map[string]llm.ProviderConfig{
		"anthropic-fallback": {Kind: llm.KindAnthropic, URL: f.URL(), Model: "claude-sonnet-5", APIKey: "sk-ant-oat01-chat-test"},
	}}, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err == nil {
		t.Fatal("a gated token answered")
	}
	msg := Explain(err)
	for _, want := range []string{"HTTP 429", "anthropic-fallback", "subscription OAuth token", "API key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("chat error does not say %q: %s", want, msg)
		}
	}
}
