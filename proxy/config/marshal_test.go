package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// full sets every field of the config tree (TestFullFixtureSetsEveryField
// keeps it that way when fields are added).
const full = `
listen: 127.0.0.1:8080
audit: sqlite:./mcplocal-audit.db
llm:
  primary: vllm-current
  providers:
    vllm-current: {name: vllm-current, kind: openai, url: http://127.0.0.1:9001/v1, model: qwen3-32b, apiKeyEnv: VLLM_KEY, fallbacks: [anthropic-fallback]}
    anthropic-fallback: {kind: anthropic, url: http://127.0.0.1:9002, model: claude-sonnet-latest, apiKeyEnv: ANTHROPIC_API_KEY}
allowedOrigins: [https://inspector.example:6274]
allowedHosts: [proxy.internal]
relay: true
users:
  alice: {tokenEnv: ALICE_TOKEN, token: inline-a}
  bob: {tokenEnv: BOB_TOKEN, token: "123", admin: true}
projects:
  docmost:
    servers:
      docmost:
        url: http://127.0.0.1:9100/mcp
        headers: {X-Api-Key: {valueEnv: DOCMOST_KEY}, X-Team: {value: docs}}
        healthCheck: {tool: search, arguments: {query: health, limit: 3, deep: {ratio: 0.5, tags: [a, "true"]}}, intervalSeconds: 60, timeoutSeconds: 15, failureThreshold: 3}
    pipeline: [paginate, {summarize-tree: {}}, {paginate: {thresholdBytes: 8192, budgetMs: 30000, mode: "null"}}]
    gate: {enabled: true}
    prompts:
      - {name: onboarding, text: "Read the space index first.\nThen search.", priority: 2, keywords: [start, "yes"]}
    requireAuth: false
    prefix: false
sessions: {strict: true}
`

func mustParse(t *testing.T, doc string) *Config {
	t.Helper()
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", doc, err)
	}
	return c
}

func roundTrip(t *testing.T, c *Config) {
	t.Helper()
	b, err := Marshal(c)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Marshal(c)):\n%s\nerror: %v", b, err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("Parse(Marshal(c)) != c\nyaml:\n%s\ngot:  %#v\nwant: %#v", b, back, c)
	}
}

func TestMarshalRoundTripsFullConfig(t *testing.T) {
	roundTrip(t, mustParse(t, full))
}

func TestMarshalRoundTripsConfigBuiltInCode(t *testing.T) {
	no := false
	c := &Config{
		Listen:   "127.0.0.1:0",
		Audit:    "sqlite:/tmp/x y/audit.db",
		Sessions: Sessions{Strict: true},
		Users:    map[string]User{"alice": {Token: "t0k3n"}},
		Projects: map[string]*Project{
			"docmost": {
				Servers:     map[string]*Server{"docmost": {URL: "http://127.0.0.1:1234/mcp"}},
				Pipeline:    []Stage{{Name: "paginate"}, {Name: "summarize-tree", Options: map[string]any{}}, {Name: "paginate", Options: map[string]any{"thresholdBytes": 8192, "nested": map[string]any{"f": 1.5, "l": []any{"x", 2, true}}}}},
				Prompts:     []Prompt{},
				RequireAuth: &no,
				Prefix:      &no,
			},
			"other": {Servers: map[string]*Server{"s": {URL: "https://example.invalid/mcp", HealthCheck: &HealthCheck{Tool: "ping"}}}},
		},
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c)
}

func TestMarshalKeepsNilAndEmptyApart(t *testing.T) {
	c := &Config{Listen: "a:1", Audit: "memory", Projects: map[string]*Project{
		"p": {Servers: map[string]*Server{"s": {URL: "http://h/mcp"}}},
	}}
	b, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"users", "llm", "pipeline", "prompts", "gate", "sessions", "requireAuth", "healthCheck", "{}", "[]", "null"} {
		if strings.Contains(string(b), absent) {
			t.Errorf("Marshal wrote %q for a zero value:\n%s", absent, b)
		}
	}
	roundTrip(t, c)

	c.Users = map[string]User{}
	c.Projects["p"].Pipeline = []Stage{}
	roundTrip(t, c)
}

func TestStageMarshalYAMLForms(t *testing.T) {
	for _, tc := range []struct {
		stage Stage
		want  any
	}{
		{Stage{Name: "paginate"}, "paginate"},
		{Stage{Name: "paginate", Options: map[string]any{}}, map[string]any{"paginate": map[string]any{}}},
		{Stage{Name: "paginate", Options: map[string]any{"thresholdBytes": 1}}, map[string]any{"paginate": map[string]any{"thresholdBytes": 1}}},
	} {
		got, err := tc.stage.MarshalYAML()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v.MarshalYAML() = %#v, want %#v", tc.stage, got, tc.want)
		}
	}
}

func TestMarshalNil(t *testing.T) {
	if _, err := Marshal(nil); err == nil {
		t.Fatal("Marshal(nil) succeeded")
	}
}

// TestFullFixtureSetsEveryField fails when a field is added to the config
// tree (including types of other packages it embeds, such as llm.Config) and
// no value in the round-trip fixture sets it yet. Fields the file cannot set
// (yaml:"-") are exempt.
func TestFullFixtureSetsEveryField(t *testing.T) {
	set := map[string]bool{} // "pkg.Type.Field" -> some value in the fixture sets it
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() || f.Tag.Get("yaml") == "-" {
					continue
				}
				key := v.Type().String() + "." + f.Name
				set[key] = set[key] || !v.Field(i).IsZero()
				walk(v.Field(i))
			}
		case reflect.Map:
			if v.Type().Elem().Kind() == reflect.Interface {
				return // free-form options and arguments
			}
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(mustParse(t, full)))
	for _, key := range slices.Sorted(maps.Keys(set)) {
		if !set[key] {
			t.Errorf("no value in the fixture sets %s; set one so the round trip covers it", key)
		}
	}
}
