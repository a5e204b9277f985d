package llm

import (
	"context"
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
