package replay

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// rootAndUp is a recorded call of docmost_search: its root row and its one
// upstream call, which lasted d.
func rootAndUp(d time.Duration) (audit.Row, audit.Row) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, "search", 0, d, "ok")
	up.Server = "docmost"
	return root, up
}

// Compression divides durations only: a count knob keeps its value, a
// compress below 1 is 1, the client waits a second past the request's
// deadline, and an upstream answer of no recorded latency is played at
// once rather than slow by nothing.
func TestPlanCompressesDurationsOnly(t *testing.T) {
	root, up := rootAndUp(0)
	b := planBundle(t, []audit.Row{root, up})
	b.Knobs["MCPCTL_CONNS_MAX"] = 500
	b.Knobs["MCPCTL_REQUEST_DEADLINE_MS"] = 20_000
	b.Knobs["MCPCTL_STOP_DRAIN_MS"] = 0 // no wait: compressed, still none
	p, err := PlanOf(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Knobs.StopDrain != 0 {
		t.Errorf("a recorded stop drain of 0 (no wait) played compressed as %v", p.Knobs.StopDrain)
	}
	if p.Knobs.ConnsMax != 500 {
		t.Errorf("a count knob compressed: %d, want 500", p.Knobs.ConnsMax)
	}
	if p.Knobs.RequestDeadline != 2*time.Second || p.ClientTimeout != 3*time.Second {
		t.Errorf("deadline %v, client timeout %v; want 2s and 3s", p.Knobs.RequestDeadline, p.ClientTimeout)
	}
	if got := p.Upstream["search"]; got.Kind != upstream.OK {
		t.Errorf("an answer of no latency played as %+v, want at once", got)
	}
	if p, err := PlanOf(b, 0); err != nil || p.Compress != 1 || p.Knobs.RequestDeadline != 20*time.Second {
		t.Errorf("compress 0: %v %d %v, want 1 and the recorded deadline", err, p.Compress, p.Knobs.RequestDeadline)
	}
	if isMillis("MCPCTL_NO_SUCH_KNOB") || isMillis("MCPCTL_CONNS_MAX") || !isMillis("MCPCTL_REQUEST_DEADLINE_MS") {
		t.Error("isMillis does not follow the knob table")
	}
}

// What the plan reads from the rows: the tool from the root row only (a
// nested trace row does not rename it), the first upstream call, a
// recreated session; without a root row, the project from the upstream
// call and the tool named server_tool.
func TestPlanReadsTheRootAndTheFirstUpstreamCall(t *testing.T) {
	root, up := rootAndUp(10 * time.Millisecond)
	nested := row(audit.KindToolCallTrace, "docmost_other", time.Millisecond, time.Millisecond, "ok")
	nested.ParentID = "root"
	second := row(audit.KindUpstreamCall, "other", 2*time.Millisecond, time.Millisecond, "ok")
	second.Server = "docmost"
	p, err := PlanOf(planBundle(t, []audit.Row{root, nested, up, second}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tool != "docmost_search" || p.UpstreamTool != "search" || p.Recreate {
		t.Errorf("plan: tool %q, upstream tool %q, recreate %v", p.Tool, p.UpstreamTool, p.Recreate)
	}
	recreated := row(audit.KindSessionRecreated, "", 0, 0, "ok")
	if p, err := PlanOf(planBundle(t, []audit.Row{root, up, recreated}), 1); err != nil || !p.Recreate {
		t.Errorf("a recreated session's row: %v, recreate %v", err, p.Recreate)
	}
	up.Project = "docmost"
	p, err = PlanOf(planBundle(t, []audit.Row{up}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tool != "docmost_search" {
		t.Errorf("no root row: tool %q, want the server's name and the tool's", p.Tool)
	}
}

// A project the config does not name is the config's one project when it
// has one, and refused when it has several; one LLM provider plays no
// fallback, two do.
func TestPlanFindsItsProjectAndProviders(t *testing.T) {
	root, up := rootAndUp(10 * time.Millisecond)
	root.Project = "renamed"
	b := planBundle(t, []audit.Row{root, up})
	p, err := PlanOf(b, 1)
	if err != nil {
		t.Fatalf("the config's one project: %v", err)
	}
	if !p.Env.LLM || !p.Env.Fallback {
		t.Errorf("two providers: LLM %v, fallback %v", p.Env.LLM, p.Env.Fallback)
	}
	var cfg config.Config
	if err := yaml.Unmarshal([]byte(b.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg.LLM.Providers, "claude")
	vllm := cfg.LLM.Providers["vllm"]
	vllm.Fallbacks = nil
	cfg.LLM.Providers["vllm"] = vllm
	cfg.Projects["other"] = &config.Project{Servers: map[string]*config.Server{"docmost": {URL: "http://127.0.0.1:1/mcp"}}}
	y, err := config.Marshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Config = string(y)
	if _, err := PlanOf(b, 1); err == nil {
		t.Error("a project the config does not name, among two, was planned")
	}
	root.Project = "docmost"
	b = planBundle(t, []audit.Row{root, up})
	b.Config = string(y)
	p, err = PlanOf(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Env.LLM || p.Env.Fallback {
		t.Errorf("one provider: LLM %v, fallback %v", p.Env.LLM, p.Env.Fallback)
	}
}
