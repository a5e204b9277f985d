package catalogue

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// shape is a foreign target of the given shape, with a declared request
// budget, that claims none of mcplocal's capabilities.
func shape(t *testing.T, doc string) harness.Target {
	t.Helper()
	s, err := harness.ParseForeign([]byte("name: shape\ncommand: [x, \"{{.DocmostURL}}\", \"{{.EverythingURL}}\"]\nbudgets: {request: 2s}\n" + doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Target(nil)
}

// Every generic row applies to a proxy that claims its methods, whatever its
// paths and names: only rows about mcplocal's own evidence are N/A, and they
// are no more than NotApplicableCeiling.
func TestEveryGenericRowAppliesToAProxyClaimingItsMethods(t *testing.T) {
	target := shape(t, "endpoint: \"/{{.Server}}/mcp\"\ntoolName: \"{{.Tool}}\"\nforwards: ["+strings.Join(harness.ForwardableMethods, ", ")+"]\n")
	na := 0
	for _, s := range All() {
		why := s.NotApplicable(target)
		if why != "" {
			na++
		}
		generic := len(s.Operation.Forwards) > 0 || s.HasLabel("wire")
		for _, op := range []Operation{ForeignOrigin, MalformedSessionIDs, MalformedRequests, ConcurrentCalls, FreshAfterRestart, DeleteEmptyJSON, ListTools, CallAcrossFault} {
			generic = generic || s.Operation.Name == op.Name
		}
		if generic && why != "" {
			t.Errorf("%s: a generic row is N/A on a proxy claiming what it needs: %s", s.Name(), why)
		}
	}
	if total := len(All()); na > NotApplicableCeiling {
		t.Errorf("%d of %d rows N/A, want at most %d (NotApplicableCeiling)", na, total, NotApplicableCeiling)
	} else if 3*na > total {
		t.Errorf("%d of %d rows N/A, more than a third", na, total)
	}
}

// A stateless proxy is spared the rows about a session's lifecycle, and
// only those, saying why; its DELETE is judged as a stateless one's.
func TestAStatelessProxyIsSparedOnlySessionRows(t *testing.T) {
	// Both claim every method but those that set what outlives their
	// request: the stateless one then differs only by its sessions.
	var forwards []string
	for _, m := range harness.ForwardableMethods {
		if m != harness.MethodSubscribe && m != harness.MethodSetLevel {
			forwards = append(forwards, m)
		}
	}
	claims := "forwards: [" + strings.Join(forwards, ", ") + "]\n"
	stateful := shape(t, claims)
	stateless := shape(t, "stateless: true\n"+claims)
	for _, s := range All() {
		a, b := s.NotApplicable(stateful), s.NotApplicable(stateless)
		switch {
		case a == "" && b != "" && !strings.Contains(b, "target foreign:shape is stateless"):
			t.Errorf("%s: N/A on the stateless proxy only, for another reason: %s", s.Name(), b)
		case a != "" && b == "":
			t.Errorf("%s: applies on the stateless proxy only", s.Name())
		}
	}
	for _, s := range All() {
		switch why := s.NotApplicable(stateless); s.Operation.Name {
		case MalformedSessionIDs.Name:
			if why == "" {
				t.Errorf("%s: applies to a stateless proxy, which reads no session id", s.Name())
			}
		case DeleteEmptyJSON.Name:
			// Its DELETE is held to the stateless promises (2xx or 405,
			// nothing broken after it).
			if why != "" {
				t.Errorf("%s: N/A on a stateless proxy: %s", s.Name(), why)
			}
		}
	}
}

// A relayed JSON-RPC error without mcplocal's trace code answers a method
// that is not tools/call, for a proxy that does not claim trace codes.
func TestAnRPCErrorNeedsNoTraceCodeFromAProxyNotClaimingThem(t *testing.T) {
	var row Scenario
	for _, s := range All() {
		if s.Name() == "down × prompts/get" {
			row = s
		}
	}
	if row.Expect == nil {
		t.Fatal("no row down × prompts/get")
	}
	o := Observation{Err: &jsonrpc.Error{Code: -32603, Message: "upstream down"}}
	if r := row.JudgeOn(shape(t, "forwards: [prompts/get]\n"), harness.CompressedBounds(), o); !r.Pass {
		t.Errorf("held to a trace code it never claimed: %s", r.Reason)
	}
	if r := row.JudgeOn(nil, harness.CompressedBounds(), o); r.Pass {
		t.Error("mcplocal's own JSON-RPC error without a trace code passed")
	}
	if r := row.JudgeOn(shape(t, "forwards: [prompts/get]\n"), harness.CompressedBounds(), Observation{Err: errors.New("connection reset")}); r.Pass {
		t.Error("a transport failure passed as an answer")
	}
}

// A proxy built around one upstream server (its spec gives it
// {{.DocmostURL}} alone) is held to the rows on the everything fake too:
// that fake stands in for docmost there, reached under docmost's names and
// path, and every such row applies to it as to a proxy fronting both.
func TestTheEverythingFakeStandsInForAProxyOfOneServer(t *testing.T) {
	fronting := shape(t, "")
	for _, doc := range []string{"", "endpoint: \"/{{.Server}}/mcp\"\ntoolName: \"{{.Server}}__{{.Tool}}\"\n"} {
		s, err := harness.ParseForeign([]byte("name: docmost-only\ncommand: [x, \"{{.DocmostURL}}\"]\nbudgets: {request: 2s}\n" + doc))
		if err != nil {
			t.Fatal(err)
		}
		docmostOnly := s.Target(nil)
		if !harness.StandsIn(docmostOnly) || harness.StandsIn(fronting) {
			t.Fatalf("stands in: one-server proxy %v, two-server proxy %v", harness.StandsIn(docmostOnly), harness.StandsIn(fronting))
		}
		env := &harness.Env{Target: docmostOnly}
		if got, want := env.EverythingTool("echo"), harness.ToolName(docmostOnly, "docmost", "echo"); got != want {
			t.Errorf("the everything fake's echo on a one-server proxy is called %q, want docmost's name for it %q", got, want)
		}
		if got, want := env.ServerURL("everything"), env.ServerURL("docmost"); got != want {
			t.Errorf("the everything fake is reached at %q, want docmost's endpoint %q", got, want)
		}
		anyShape := 0
		for _, sc := range All() {
			if !sc.Operation.AnyShape {
				continue
			}
			anyShape++
			if why := sc.NotApplicable(docmostOnly); why != "" {
				t.Errorf("%s: N/A on a proxy of one server: %s", sc.Name(), why)
			}
		}
		if anyShape == 0 {
			t.Fatal("no row calls the everything fake on any shape")
		}
	}
}

// A stateless proxy speaking MCP 2026-07-28 (protocol:) is asked for a log
// level and a subscription that revision's way, which it can carry: the log
// and subscription rows apply to it when it claims those ways, under every
// fault, and are N/A saying why when it does not; without protocol: they are
// N/A for outliving their request.
func TestAStatelessProxySpeakingThePerRequestRevisionIsAskedThatWay(t *testing.T) {
	forwards := "forwards: [" + strings.Join(append(slices.Clone(harness.ForwardableMethods), harness.PerRequestWays...), ", ") + "]\n"
	perRequest := shape(t, "stateless: true\nprotocol: \""+harness.PerRequestRevision+"\"\n"+forwards)
	unclaimed := shape(t, "stateless: true\nprotocol: \""+harness.PerRequestRevision+"\"\nforwards: ["+strings.Join(harness.ForwardableMethods, ", ")+"]\n")
	// A stateless proxy of the older revisions claims all but what outlives its request.
	kept := slices.DeleteFunc(slices.Clone(harness.ForwardableMethods), func(m string) bool {
		return m == harness.MethodSubscribe || m == harness.MethodSetLevel
	})
	older := shape(t, "stateless: true\nforwards: ["+strings.Join(kept, ", ")+"]\n")
	if !harness.PerRequest(perRequest) || harness.PerRequest(older) || harness.PerRequest(shape(t, "protocol: \""+harness.PerRequestRevision+"\"\n")) {
		t.Fatal("PerRequest: want a stateless spec of protocol 2026-07-28 only")
	}
	rows := 0
	for _, s := range All() {
		if s.Operation.Name != SetLevelAndLog.Name && s.Operation.Name != SubscribeUpdate.Name {
			continue
		}
		rows++
		if why := s.NotApplicable(perRequest); why != "" {
			t.Errorf("%s: N/A on a stateless proxy of 2026-07-28 claiming its way: %s", s.Name(), why)
		}
		if why := s.NotApplicable(unclaimed); !strings.Contains(why, "does not claim to forward "+harness.MetaLogLevel) && !strings.Contains(why, "does not claim to forward "+harness.MethodListen) {
			t.Errorf("%s: on a stateless proxy of 2026-07-28 not claiming its way: %q, want N/A naming that way", s.Name(), why)
		}
		if why := s.NotApplicable(older); !strings.Contains(why, "outlives that request") {
			t.Errorf("%s: on a stateless proxy of the older revisions: %q, want N/A for outliving its request", s.Name(), why)
		}
	}
	if rows != 10 {
		t.Errorf("%d log and subscription rows, want 10 (each under 5 faults)", rows)
	}
	if _, err := harness.ParseForeign([]byte("name: x\ncommand: [x]\nforwards: [" + harness.MethodListen + "]\n")); err == nil {
		t.Error("a spec of the older revisions claiming subscriptions/listen was accepted")
	}
	if _, err := harness.ParseForeign([]byte("name: x\ncommand: [x]\nprotocol: \"2025-06-18\"\n")); err == nil {
		t.Error("a spec of protocol 2025-06-18 was accepted: the field names a revision past the harness's own")
	}
}
