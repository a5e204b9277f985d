package harness

import (
	"strings"
	"testing"
)

// A spec's shape fields reach the harness: the endpoint per server, the
// names of tools and prompts, statelessness, the methods it claims.
func TestForeignShapeFieldsAreHonoured(t *testing.T) {
	s, err := ParseForeign([]byte(`name: paths
command: [x, "{{.DocmostURL}}", "{{.EverythingURL}}"]
endpoint: "/{{.Server}}/mcp"
toolName: "{{.Server}}__{{.Tool}}"
promptName: "{{.Server}}.{{.Prompt}}"
stateless: true
forwards: [ping, prompts/get]
`))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Target(nil).(*Foreign)
	if got := f.ServerEndpoint(Project, "everything"); !strings.HasSuffix(got, "/everything/mcp") {
		t.Errorf("the everything fake's endpoint is %q, want its own path /everything/mcp", got)
	}
	if got := f.Endpoint(Project); !strings.HasSuffix(got, "/docmost/mcp") {
		t.Errorf("the project's endpoint is %q, want docmost's path", got)
	}
	if got := ToolName(f, "everything", "echo"); got != "everything__echo" {
		t.Errorf("tool name %q", got)
	}
	if got := PromptName(f, "everything", "greet"); got != "everything.greet" {
		t.Errorf("prompt name %q", got)
	}
	if !IsStateless(f) || !strings.Contains(NeedsSessions(f), "is stateless") {
		t.Errorf("stateless: %v, NeedsSessions %q", IsStateless(f), NeedsSessions(f))
	}
	if why := Unforwarded(f, MethodPing, MethodPrompt); why != "" {
		t.Errorf("claimed methods: %s", why)
	}
	if why := Unforwarded(f, MethodPing, MethodSampling); !strings.Contains(why, "target foreign:paths does not claim to forward "+MethodSampling) {
		t.Errorf("an unclaimed method: %q", why)
	}
}

// Without promptName, prompts are named as tools are; mcplocal's targets
// keep SERVER_NAME and claim every method.
func TestShapeDefaults(t *testing.T) {
	s, err := ParseForeign([]byte("name: agg\ncommand: [x]\ntoolName: \"{{.Server}}__{{.Tool}}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Target(nil)
	if got := PromptName(f, "everything", "greet"); got != "everything__greet" {
		t.Errorf("prompt name %q, want the toolName template's", got)
	}
	if IsStateless(f) || NeedsSessions(f) != "" {
		t.Error("a spec without stateless: is stateful")
	}
	if why := Unforwarded(f, MethodPing); why == "" {
		t.Error("a spec without forwards: claims ping")
	}
	in := &InProcess{}
	if PromptName(in, "everything", "greet") != "everything_greet" || Unforwarded(in, ForwardableMethods...) != "" || IsStateless(in) {
		t.Error("mcplocal's shape changed")
	}
}

func TestForwardsAreChecked(t *testing.T) {
	for doc, want := range map[string]string{
		"name: a\ncommand: [x, \"{{.EverythingURL}}\"]\nforwards: [telepathy]\n":                        "unknown method",
		"name: a\ncommand: [x, \"{{.EverythingURL}}\"]\nforwards: [ping]\ncapabilities: [everything]\n": "at most one of forwards",
	} {
		if _, err := ParseForeign([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	// A proxy of one server may claim methods: the everything fake stands
	// in for that server in those rows.
	if _, err := ParseForeign([]byte("name: a\ncommand: [x, \"{{.DocmostURL}}\"]\nforwards: [ping]\n")); err != nil {
		t.Errorf("forwards on a proxy of one server: %v", err)
	}
}
