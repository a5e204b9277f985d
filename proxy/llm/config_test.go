package llm

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

func prov(kind string, fallbacks ...string) ProviderConfig {
	url := "http://127.0.0.1:9001/v1"
	if kind == KindAnthropic {
		url = "http://127.0.0.1:9002"
	}
	return ProviderConfig{Kind: kind, URL: url, Model: "m", Fallbacks: fallbacks}
}

func TestChainOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"design example", Config{Primary: "vllm-current", Providers: map[string]ProviderConfig{
			"vllm-current":       prov(KindOpenAI, "anthropic-fallback"),
			"anthropic-fallback": prov(KindAnthropic),
		}}, []string{"vllm-current", "anthropic-fallback"}},
		{"depth first, in order", Config{Primary: "a", Providers: map[string]ProviderConfig{
			"a": prov(KindOpenAI, "b", "c"), "b": prov(KindOpenAI, "d"), "c": prov(KindOpenAI), "d": prov(KindAnthropic),
			"unused": prov(KindOpenAI),
		}}, []string{"a", "b", "d", "c"}},
		{"a diamond lists each provider once", Config{Primary: "a", Providers: map[string]ProviderConfig{
			"a": prov(KindOpenAI, "b", "c"), "b": prov(KindOpenAI, "c"), "c": prov(KindOpenAI),
		}}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.Chain()
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Chain() = %v, %v; want %v", got, err, tc.want)
			}
			ad, err := New(tc.cfg, knobs.Defaults())
			if err != nil {
				t.Fatal(err)
			}
			defer ad.Close()
			if !slices.Equal(ad.Chain(), tc.want) {
				t.Errorf("Adapter.Chain() = %v, want %v", ad.Chain(), tc.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"cycle", Config{Primary: "a", Providers: map[string]ProviderConfig{
			"a": prov(KindOpenAI, "b"), "b": prov(KindOpenAI, "c"), "c": prov(KindAnthropic, "a"),
		}}, []string{"fallback cycle a → b → c → a"}},
		{"cycle away from the primary", Config{Primary: "a", Providers: map[string]ProviderConfig{
			"a": prov(KindOpenAI), "x": prov(KindOpenAI, "y"), "y": prov(KindOpenAI, "x"),
		}}, []string{"fallback cycle x → y → x"}},
		{"self fallback", Config{Primary: "a", Providers: map[string]ProviderConfig{"a": prov(KindOpenAI, "a")}},
			[]string{`provider "a": lists itself as a fallback`}},
		{"unknown fallback", Config{Primary: "a", Providers: map[string]ProviderConfig{"a": prov(KindOpenAI, "ghost")}},
			[]string{`provider "a": fallback "ghost" is not a configured provider`}},
		{"unknown primary", Config{Primary: "ghost", Providers: map[string]ProviderConfig{"a": prov(KindOpenAI)}},
			[]string{`primary "ghost" is not a configured provider`}},
		{"providers without primary", Config{Providers: map[string]ProviderConfig{"a": prov(KindOpenAI)}},
			[]string{"primary is empty"}},
		{"every field problem at once", Config{Primary: "a", Providers: map[string]ProviderConfig{
			"a": {Name: "b", Kind: "gemini", URL: "127.0.0.1:9001", Model: " "},
			"c": {URL: "http://h/v1?x=1", Model: "m"},
		}}, []string{`"a": name "b" differs`, `"a": unknown kind "gemini"`, `"a": url "127.0.0.1:9001" is not an absolute`,
			`"a": model is empty`, `"c": kind is empty`, `"c": url "http://h/v1?x=1" must not carry a query`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("want a config error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should contain %q", err, w)
				}
			}
			if _, err := New(tc.cfg, knobs.Defaults()); err == nil {
				t.Error("New must refuse an invalid config")
			}
		})
	}
	if err := (Config{}).Validate(); !errors.Is(err, ErrNotConfigured) || (Config{}).Enabled() {
		t.Errorf("the empty config is 'no LLM', got %v", err)
	}
}
