package llm

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Provider kinds, as written in the config's `kind:` field.
const (
	KindOpenAI    = "openai"    // OpenAI-compatible: POST {url}/chat/completions, url ends in /v1
	KindAnthropic = "anthropic" // Anthropic Messages API: POST {url}/v1/messages
)

// Config mirrors the `llm:` block of the proxy config:
//
//	llm:
//	  primary: vllm-current
//	  providers:
//	    vllm-current:       {kind: openai,    url: http://127.0.0.1:9001/v1, model: qwen3-32b, fallbacks: [anthropic-fallback]}
//	    anthropic-fallback: {kind: anthropic, url: http://127.0.0.1:9002,    model: claude-sonnet-latest, apiKeyEnv: ANTHROPIC_API_KEY}
//
// The zero Config means "no LLM configured" (see [Config.Enabled]).
type Config struct {
	Primary   string                    `yaml:"primary" json:"primary"`
	Providers map[string]ProviderConfig `yaml:"providers" json:"providers"`
}

// ProviderConfig is one entry of `llm.providers`. Name is the map key; it may be
// left empty in the entry itself.
type ProviderConfig struct {
	Name      string   `yaml:"name,omitempty" json:"name,omitempty"`
	Kind      string   `yaml:"kind" json:"kind"`
	URL       string   `yaml:"url" json:"url"`
	Model     string   `yaml:"model" json:"model"`
	APIKeyEnv string   `yaml:"apiKeyEnv,omitempty" json:"apiKeyEnv,omitempty"`
	Fallbacks []string `yaml:"fallbacks,omitempty" json:"fallbacks,omitempty"`

	// APIKey is the resolved key. It never comes from the file; when empty,
	// New reads it from the APIKeyEnv variable. An empty key is not an error:
	// the provider is wired but will answer 401, which fails over like any
	// other failure and shows in the attempts.
	APIKey string `yaml:"-" json:"-"`
}

// Enabled reports whether the block configures any LLM at all. "No LLM" is a
// deliberate choice, not a degradation.
func (c Config) Enabled() bool {
	return c.Primary != "" || len(c.Providers) > 0
}

// Validate checks the block without building anything: kinds, URLs, models,
// fallback names and cycles. Every problem is reported, sorted by provider.
func (c Config) Validate() error {
	_, err := c.Chain()
	return err
}

// Chain returns the provider names in the order Complete tries them: the
// primary, then the depth-first expansion of fallbacks, each name once.
func (c Config) Chain() ([]string, error) {
	if !c.Enabled() {
		return nil, ErrNotConfigured
	}
	var errs []error
	names := make([]string, 0, len(c.Providers))
	for name := range c.Providers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := c.Providers[name].check(name, c.Providers); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case c.Primary == "":
		errs = append(errs, errors.New("llm: primary is empty"))
	case !hasKey(c.Providers, c.Primary):
		errs = append(errs, fmt.Errorf("llm: primary %q is not a configured provider", c.Primary))
	}
	if cyc := findCycle(c.Providers, names); cyc != nil {
		errs = append(errs, fmt.Errorf("llm: fallback cycle %s", strings.Join(cyc, " → ")))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	var chain []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		chain = append(chain, name)
		for _, fb := range c.Providers[name].Fallbacks {
			walk(fb)
		}
	}
	walk(c.Primary)
	return chain, nil
}

func (p ProviderConfig) check(name string, all map[string]ProviderConfig) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("llm: provider %q: "+format, append([]any{name}, args...)...))
	}
	if name == "" {
		bad("empty provider name")
	}
	if p.Name != "" && p.Name != name {
		bad("name %q differs from its key", p.Name)
	}
	switch p.Kind {
	case KindOpenAI, KindAnthropic:
	case "":
		bad("kind is empty (want %q or %q)", KindOpenAI, KindAnthropic)
	default:
		bad("unknown kind %q (want %q or %q)", p.Kind, KindOpenAI, KindAnthropic)
	}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("url %q is not an absolute http(s) URL", p.URL)
	} else if u.RawQuery != "" || u.Fragment != "" {
		bad("url %q must not carry a query or fragment", p.URL)
	}
	if strings.TrimSpace(p.Model) == "" {
		bad("model is empty")
	}
	for _, fb := range p.Fallbacks {
		switch {
		case fb == name:
			bad("lists itself as a fallback")
		case !hasKey(all, fb):
			bad("fallback %q is not a configured provider", fb)
		}
	}
	return errors.Join(errs...)
}

// findCycle returns one cycle in the fallback graph (first name repeated at
// the end), or nil. Self-references are reported by check, not here.
func findCycle(all map[string]ProviderConfig, names []string) []string {
	const (
		unvisited = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = onStack
		stack = append(stack, n)
		for _, fb := range all[n].Fallbacks {
			if fb == n || !hasKey(all, fb) {
				continue
			}
			switch state[fb] {
			case onStack:
				i := slices.Index(stack, fb)
				return append(slices.Clone(stack[i:]), fb)
			case unvisited:
				if c := visit(fb); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range names {
		if state[n] == unvisited {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

func hasKey(m map[string]ProviderConfig, k string) bool {
	_, ok := m[k]
	return ok
}
