package llm

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// TestOpenAIContentShapes: content as a string, null, absent, or text
// parts (other parts left out); anything else is not content.
func TestOpenAIContentShapes(t *testing.T) {
	for raw, want := range map[string]struct {
		text string
		ok   bool
	}{
		``:        {"", true},
		`null`:    {"", true},
		`"plain"`: {"plain", true},
		`[{"type":"text","text":"a"},{"type":"image_url","text":"NOT"},{"type":"text","text":"b"}]`: {"ab", true},
		`{"type":"text"}`: {"", false},
		`5`:               {"", false},
	} {
		text, ok := openaiContent([]byte(raw))
		if text != want.text || ok != want.ok {
			t.Errorf("openaiContent(%s) = %q, %v; want %q, %v", raw, text, ok, want.text, want.ok)
		}
	}
}

// TestOpenAIAnswerNamesTheServedModel: a non-streamed answer reports the
// model the provider says served it, or the configured one, and takes
// "error": null as no error.
func TestOpenAIAnswerNamesTheServedModel(t *testing.T) {
	noLeaks(t)
	for body, want := range map[string]string{
		`{"model":"served","error":null,"choices":[{"message":{"content":"hi"}}]}`: "served",
		`{"choices":[{"message":{"content":"hi"}}]}`:                               "configured",
	} {
		s := newStub(t, raw(200, body))
		ad := newAdapter(t, chainOf(openaiCfg("o", s, "configured")), knobs.Defaults())
		resp, err := ad.Complete(context.Background(), hello)
		if err != nil || resp.Model != want || resp.Text != "hi" {
			t.Errorf("%s: %+v, %v; want model %q", body, resp, err, want)
		}
	}
}

// TestConfigRefusesAnEmptyNameAndAHostlessURL: two field checks the
// table of TestConfigErrors does not reach.
func TestConfigRefusesAnEmptyNameAndAHostlessURL(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Primary: "", Providers: map[string]ProviderConfig{"": prov(KindOpenAI)}}, `provider "": empty provider name`},
		{Config{Primary: "a", Providers: map[string]ProviderConfig{"a": {Kind: KindOpenAI, URL: "http:///v1", Model: "m"}}}, `url "http:///v1" is not an absolute`},
		{Config{Primary: "a", Providers: map[string]ProviderConfig{"a": {Kind: KindOpenAI, URL: "ftp://h/v1", Model: "m"}}}, `url "ftp://h/v1" is not an absolute`},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, c.want)
		}
	}
}

// TestOAuthBetaIsAppendedOnce: an OAuth token adds the oauth beta to a
// beta header already set, once, and sets it alone otherwise.
func TestOAuthBetaIsAppendedOnce(t *testing.T) {
	key := "sk-ant-oat01-test"
	for before, want := range map[string]string{
		"":                        oauthBeta,
		"tools-2024":              "tools-2024," + oauthBeta,
		"x," + oauthBeta:          "x," + oauthBeta,
		oauthBeta + ",tools-2024": oauthBeta + ",tools-2024",
	} {
		h := http.Header{}
		if before != "" {
			h.Set("anthropic-beta", before)
		}
		setAnthropicAuth(h, key)
		if got := h.Get("anthropic-beta"); got != want || h.Get("Authorization") != "Bearer "+key {
			t.Errorf("beta %q before: %q after (Authorization %q), want %q", before, got, h.Get("Authorization"), want)
		}
	}
}

// TestASelfOrUnknownFallbackIsNoCycle: those are reported by the field
// check, and the cycle search skips them rather than reporting a cycle.
func TestASelfOrUnknownFallbackIsNoCycle(t *testing.T) {
	for _, fb := range []string{"a", "ghost"} {
		err := Config{Primary: "a", Providers: map[string]ProviderConfig{"a": prov(KindOpenAI, fb)}}.Validate()
		if err == nil || strings.Contains(err.Error(), "cycle") {
			t.Errorf("fallback %q: %v, want a field error and no cycle", fb, err)
		}
	}
}

// TestConfigErrorsComeInProviderNameOrder: the same config gives the same
// error text every time, providers in name order.
func TestConfigErrorsComeInProviderNameOrder(t *testing.T) {
	cfg := Config{Primary: "a", Providers: map[string]ProviderConfig{
		"z": {Kind: KindOpenAI, URL: "http://z/v1"}, "a": {Kind: KindOpenAI, URL: "http://a/v1"}, "m": {Kind: KindOpenAI, URL: "http://m/v1"}}}
	for range 20 {
		msg := cfg.Validate().Error()
		a, m, z := strings.Index(msg, `provider "a"`), strings.Index(msg, `provider "m"`), strings.Index(msg, `provider "z"`)
		if a < 0 || !(a < m && m < z) {
			t.Fatalf("errors not in provider name order: %s", msg)
		}
	}
}

// TestAnthropicAnswerNamesTheServedModel: a Messages answer naming its
// model is what the response says was used (an alias resolves to a dated
// id); one naming none keeps the model that was asked for.
func TestAnthropicAnswerNamesTheServedModel(t *testing.T) {
	noLeaks(t)
	for body, want := range map[string]string{
		`{"type":"message","model":"claude-opus-5-20260512","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`: "claude-opus-5-20260512",
		`{"type":"message","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`:                                  "claude-opus-5",
	} {
		s := newStub(t, raw(200, body))
		ad := newAdapter(t, chainOf(anthropicCfg("a", s, "claude-opus-5")), knobs.Defaults())
		resp, err := ad.Complete(context.Background(), hello)
		if err != nil || resp.Model != want || resp.Text != "hi" {
			t.Errorf("%s: %+v, %v; want model %q", body, resp, err, want)
		}
	}
}
