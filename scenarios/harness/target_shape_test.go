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

// A stateless proxy speaking the per-request revision is asked for a log
// level and a subscription that revision's way; a stateful one, or one of
// the older revision, the older way.
func TestPerRequestWaysFollowTheRevisionAndStatelessness(t *testing.T) {
	pr := mustParseForeign(t, "name: pr\ncommand: [x]\nstateless: true\nprotocol: \""+PerRequestRevision+"\"\nforwards: [\""+MetaLogLevel+"\", ping]").Target(nil)
	if !PerRequest(pr) {
		t.Fatal("a stateless proxy of the per-request revision is not PerRequest")
	}
	if !Claims(pr, MethodSetLevel) || Claims(pr, MethodSubscribe) || !Claims(pr, MethodPing) {
		t.Errorf("claims: setLevel %v (by %s), subscribe %v, ping %v", Claims(pr, MethodSetLevel), MetaLogLevel, Claims(pr, MethodSubscribe), Claims(pr, MethodPing))
	}
	if why := Unforwarded(pr, MethodSetLevel, MethodPing); why != "" {
		t.Errorf("the per-request way of setLevel is claimed: %q", why)
	}
	// Its per-request way keeps nothing past the request: statelessness
	// is no reason.
	if why := Unforwarded(pr, MethodSubscribe); !strings.HasSuffix(why, "forward "+MethodListen) {
		t.Errorf("subscribe on a per-request proxy: %q", why)
	}
	for _, doc := range []string{
		"name: old\ncommand: [x]\nstateless: true\nforwards: [logging/setLevel]",
		"name: stateful\ncommand: [x]\nprotocol: \"" + PerRequestRevision + "\"\nforwards: [logging/setLevel]",
	} {
		f := mustParseForeign(t, doc).Target(nil)
		if PerRequest(f) || !Claims(f, MethodSetLevel) || Unforwarded(f, MethodSetLevel) != "" {
			t.Errorf("%s: PerRequest %v, claims setLevel %v", f.Name(), PerRequest(f), Claims(f, MethodSetLevel))
		}
	}
	if PerRequest(&InProcess{}) || !Claims(&InProcess{}, MethodSubscribe) {
		t.Error("mcplocal is asked the per-request way, or does not claim subscribe")
	}
}

// Only what outlives its request is explained by statelessness.
func TestUnforwardedExplainsStatelessnessOnlyForWhatOutlivesARequest(t *testing.T) {
	stateless := mustParseForeign(t, "name: sl\ncommand: [x]\nstateless: true").Target(nil)
	stateful := mustParseForeign(t, "name: sf\ncommand: [x]").Target(nil)
	const because = "it is stateless"
	for _, c := range []struct {
		t      Target
		method string
		want   bool
	}{
		{stateless, MethodSubscribe, true},
		{stateless, MethodSetLevel, true},
		{stateless, MethodPing, false},
		{stateful, MethodSubscribe, false},
	} {
		why := Unforwarded(c.t, c.method)
		if why == "" || strings.Contains(why, because) != c.want {
			t.Errorf("%s, %s: %q (explained: want %v)", c.t.Name(), c.method, why, c.want)
		}
	}
	if why := NeedsSessions(stateless); !strings.Contains(why, "target foreign:sl is stateless") {
		t.Errorf("NeedsSessions %q", why)
	}
}

// The per-request ways are named only by a spec speaking that revision.
func TestPerRequestWaysNeedTheProtocol(t *testing.T) {
	if _, err := ParseForeign([]byte("name: a\ncommand: [x]\nforwards: [\"" + MethodListen + "\"]")); err == nil || !strings.Contains(err.Error(), "want protocol: "+PerRequestRevision) {
		t.Errorf("a per-request way without the protocol: %v", err)
	}
	if _, err := ParseForeign([]byte("name: a\ncommand: [x]\nprotocol: \"" + PerRequestRevision + "\"\nforwards: [\"" + MethodListen + "\", ping]")); err != nil {
		t.Errorf("a per-request way with the protocol: %v", err)
	}
	if _, err := ParseForeign([]byte("name: a\ncommand: [x]\nprotocol: \"2024-11-05\"")); err == nil || !strings.Contains(err.Error(), `protocol "2024-11-05"`) {
		t.Errorf("another protocol: %v", err)
	}
}

// The everything fake is reached under its own name and path, or, on a
// proxy of one server, as that server.
func TestTheEverythingFakeIsReachedAsTheProxyFrontsIt(t *testing.T) {
	both := mustParseForeign(t, "name: both\ncommand: [x, '{{.DocmostURL}}', '{{.EverythingURL}}']\nendpoint: '/{{.Server}}/mcp'\ntoolName: '{{.Server}}.{{.Tool}}'").Target(nil).(*Foreign)
	both.vars = ForeignVars{Listen: "127.0.0.1:4242"}
	e := JudgedOn(both, CompressedBounds())
	if got := e.ServerURL("everything"); got != "http://127.0.0.1:4242/everything/mcp" {
		t.Errorf("both: everything at %q", got)
	}
	if got := e.EverythingTool("echo"); got != "everything.echo" {
		t.Errorf("both: tool %q", got)
	}
	if got := e.EverythingPrompt("greet"); got != "everything.greet" {
		t.Errorf("both: prompt %q", got)
	}
	one := mustParseForeign(t, "name: one\ncommand: [x, '{{.DocmostURL}}']\nendpoint: '/{{.Server}}/mcp'").Target(nil).(*Foreign)
	one.vars = ForeignVars{Listen: "127.0.0.1:4242"}
	e = JudgedOn(one, CompressedBounds())
	if got := e.ServerURL("everything"); got != "http://127.0.0.1:4242/docmost/mcp" {
		t.Errorf("one: everything at %q, want docmost's path", got)
	}
	if got := e.EverythingTool("echo"); got != "docmost_echo" {
		t.Errorf("one: tool %q", got)
	}
	if got := e.EverythingPrompt("greet"); got != "docmost_greet" {
		t.Errorf("one: prompt %q", got)
	}
	in := &InProcess{}
	e = JudgedOn(in, CompressedBounds())
	if got, want := e.ServerURL("everything"), e.ProjectURL(); got != want {
		t.Errorf("mcplocal: everything at %q, want the project's endpoint %q", got, want)
	}
	if got := e.EverythingTool("echo"); got != "everything_echo" {
		t.Errorf("mcplocal: tool %q", got)
	}
	if got := e.ProjectURLOf(OtherProject); got != in.URL()+"/projects/"+OtherProject+"/mcp" {
		t.Errorf("mcplocal: other project at %q", got)
	}
	if got := JudgedOn(one, CompressedBounds()).ProjectURLOf(OtherProject); got != "http://127.0.0.1:4242/docmost/mcp" {
		t.Errorf("foreign: other project at %q", got)
	}
}
