package config

import (
	"strings"
	"testing"
)

const good = `
listen: 127.0.0.1:0
audit: sqlite:/tmp/x.db
llm:
  primary: vllm
  providers:
    vllm: {kind: openai, url: http://127.0.0.1:9001/v1, model: qwen3-32b, fallbacks: [anth]}
    anth: {kind: anthropic, url: http://127.0.0.1:9002, model: claude-sonnet-latest, apiKeyEnv: K}
users:
  alice: {tokenEnv: ALICE_TOKEN}
projects:
  docmost:
    servers:
      docmost:
        url: http://127.0.0.1:9100/mcp
        healthCheck: {tool: search, arguments: {query: health}, intervalSeconds: 60, timeoutSeconds: 15, failureThreshold: 3}
    pipeline: [paginate, {summarize-tree: {budgetMs: 300}}]
    gate: {enabled: true}
    prompts: [{name: a, text: hello, priority: 1}]
`

func TestParseGood(t *testing.T) {
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Projects["docmost"]
	if p.Servers["docmost"].HealthCheck.Tool != "search" {
		t.Errorf("healthCheck.tool = %q", p.Servers["docmost"].HealthCheck.Tool)
	}
	if len(p.Pipeline) != 2 || p.Pipeline[0].Name != "paginate" || p.Pipeline[1].Name != "summarize-tree" {
		t.Fatalf("pipeline = %+v", p.Pipeline)
	}
	if p.Pipeline[1].Options["budgetMs"] != 300 {
		t.Errorf("summarize-tree options = %+v", p.Pipeline[1].Options)
	}
	if !c.AuthRequired(p) {
		t.Error("users are declared, so auth should be required by default")
	}
	if c.LLM.Providers["vllm"].Fallbacks[0] != "anth" {
		t.Errorf("fallbacks = %v", c.LLM.Providers["vllm"].Fallbacks)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"no projects":     {`listen: x`, "projects: at least one project"},
		"bad url":         {"projects: {p: {servers: {s: {url: 'ftp://x'}}}}", "projects.p.servers.s.url"},
		"no servers":      {"projects: {p: {servers: {}}}", "projects.p.servers"},
		"unknown stage":   {"projects: {p: {servers: {s: {url: 'http://a/mcp'}}, pipeline: [frobnicate]}}", "projects.p.pipeline[0]: unknown stage \"frobnicate\""},
		"unknown field":   {"projects: {p: {servers: {s: {url: 'http://a/mcp', bogus: 1}}}}", "field bogus not found"},
		"bad primary":     {"llm: {primary: x, providers: {y: {kind: openai, url: 'http://a', model: m}}}\nprojects: {p: {servers: {s: {url: 'http://a/mcp'}}}}", "primary \"x\" is not a configured provider"},
		"bad kind":        {"llm: {primary: y, providers: {y: {kind: cohere, url: 'http://a', model: m}}}\nprojects: {p: {servers: {s: {url: 'http://a/mcp'}}}}", "provider \"y\": unknown kind \"cohere\""},
		"bad fallback":    {"llm: {primary: y, providers: {y: {kind: openai, url: 'http://a', model: m, fallbacks: [z]}}}\nprojects: {p: {servers: {s: {url: 'http://a/mcp'}}}}", "fallback \"z\" is not a configured provider"},
		"user no token":   {"users: {bob: {}}\nprojects: {p: {servers: {s: {url: 'http://a/mcp'}}}}", "users.bob"},
		"bad audit":       {"audit: mysql://x\nprojects: {p: {servers: {s: {url: 'http://a/mcp'}}}}", "audit:"},
		"bad server name": {"projects: {p: {servers: {'Bad Name': {url: 'http://a/mcp'}}}}", "projects.p.servers.Bad Name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Parse accepted %q", tc.doc)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestPrefixFalseNeedsOneServerAndCollidingServersAreNamed(t *testing.T) {
	_, err := Parse([]byte(`
projects:
  p:
    prefix: false
    servers:
      a: {url: http://127.0.0.1:1/mcp}
      b: {url: http://127.0.0.1:2/mcp}
`))
	if err == nil || !strings.Contains(err.Error(), "projects.p.prefix") {
		t.Fatalf("prefix: false with two servers: %v", err)
	}
	_, err = Parse([]byte(`
projects:
  p:
    servers:
      wiki: {url: http://127.0.0.1:1/mcp}
      wiki_admin: {url: http://127.0.0.1:2/mcp}
`))
	if err == nil || !strings.Contains(err.Error(), `"wiki" and "wiki_admin" collide`) {
		t.Fatalf("servers wiki and wiki_admin: %v", err)
	}
	if _, err := Parse([]byte("projects:\n  p:\n    prefix: false\n    servers:\n      a: {url: http://127.0.0.1:1/mcp}\n")); err != nil {
		t.Fatalf("prefix: false with one server: %v", err)
	}
}

func TestCredentialsBelongInHeadersNotURLs(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"projects:\n  p:\n    servers:\n      s: {url: 'http://u:pw@127.0.0.1:1/mcp'}\n", "put them in headers"},
		{"projects:\n  p:\n    servers:\n      s: {url: 'http://127.0.0.1:1/mcp', headers: {X-Key: {}}}\n", "exactly one of value or valueEnv"},
		{"projects:\n  p:\n    servers:\n      s: {url: 'http://127.0.0.1:1/mcp', headers: {X-Key: {value: a, valueEnv: B}}}\n", "exactly one of value or valueEnv"},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.yaml, err, c.want)
		}
	}
	if _, err := Parse([]byte("projects:\n  p:\n    servers:\n      s: {url: 'http://127.0.0.1:1/mcp', headers: {X-Key: {valueEnv: KEY}}}\n")); err != nil {
		t.Errorf("a header with valueEnv: %v", err)
	}
}

// The raw tools/call relay is on unless the file says `relay: false`: a
// file without the key, and `relay: true`, both relay.
func TestRelayIsOnUnlessTheFileSaysFalse(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       bool
	}{
		{"absent", "", true},
		{"relay: false", "relay: false\n", false},
		{"relay: true", "relay: true\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.line + good))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.RelayOn(); got != c.want {
				t.Errorf("RelayOn() = %v, want %v (Relay %v)", got, c.want, cfg.Relay)
			}
			// What a harness writes for a proxy in another process says the
			// same: absent stays absent (on), false stays false.
			b, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.RelayOn(); got != c.want {
				t.Errorf("after Marshal and Parse: RelayOn() = %v, want %v; yaml:\n%s", got, c.want, b)
			}
		})
	}
	if !(&Config{}).RelayOn() {
		t.Error("a Config built in code without Relay must relay (nil is on)")
	}
}
