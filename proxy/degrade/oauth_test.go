package degrade

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
)

// TestNoticeExplainsAGatedOAuthToken: when the optional LLM work fails
// because the Anthropic key is a gated subscription token (Anthropic answers
// such a token 404 on an older model id), the ⚠ notice and the audit reason
// say so and ask for an API key.
func TestNoticeExplainsAGatedOAuthToken(t *testing.T) {
	f := llmtest.New(llmtest.Answer{Status: 404})
	defer f.Close()
	a, err := llm.New(llm.Config{Primary: "anthropic-fallback", Providers: map[string]llm.ProviderConfig{
		"anthropic-fallback": {Kind: llm.KindAnthropic, URL: f.URL(), Model: "claude-opus-4-20250514", APIKey: "sk-ant-oat01-notice-test"},
	}}, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := Bounded(context.Background(), 2*time.Second, func(ctx context.Context) (llm.Response, error) {
		return a.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "titles please"}}})
	})
	if r.OK || r.Skipped {
		t.Fatalf("a gated token answered: %+v", r)
	}
	if reqs := f.Requests(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-ant-oat01-notice-test" {
		t.Fatalf("the token was not sent as a bearer token: %+v", reqs)
	}
	d := Degradation{Feature: "Smart page titles", Reason: r.Reason}
	for what, text := range map[string]string{"notice": d.Notice("9Q77WKZW"), "audit reason": d.AuditReason()} {
		for _, want := range []string{"Smart page titles unavailable", "HTTP 404", "subscription OAuth token", "API key"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q: %s", what, want, text)
			}
		}
	}
}
