package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// These tests play recordings back in a world built in-process (the proxy,
// the fakes and toxiproxy in this test binary), at a compression that keeps
// each replay well under a second.

// docmostPlan is the plan of a recorded docmost_search whose upstream call
// answered in 200ms, played 10× compressed (20ms).
func docmostPlan(t *testing.T) Plan {
	t.Helper()
	root, up := rootAndUp(200 * time.Millisecond)
	p, err := PlanOf(planBundle(t, []audit.Row{root, up}), 10)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serverPlan is the plan of a call recorded through server's tool, a server
// the bundle's config names next to docmost.
func serverPlan(t *testing.T, server, tool string) Plan {
	t.Helper()
	root := row(audit.KindToolCallTrace, server+"_"+tool, 0, time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, tool, 0, 100*time.Millisecond, "ok")
	up.Server = server
	b := withConfig(t, planBundle(t, []audit.Row{root, up}), func(cfg *config.Config) {
		cfg.Projects["docmost"].Servers[server] = &config.Server{URL: "http://127.0.0.1:2/mcp"}
	})
	p, err := PlanOf(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withConfig is b with its config changed by edit.
func withConfig(t *testing.T, b bundle.Bundle, edit func(*config.Config)) bundle.Bundle {
	t.Helper()
	var cfg config.Config
	if err := yaml.Unmarshal([]byte(b.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	edit(&cfg)
	y, err := config.Marshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Config = string(y)
	return b
}

// worldOf builds the plan's world in-process; it is closed when the test
// ends.
func worldOf(t *testing.T, p Plan) *harness.Env {
	t.Helper()
	env, err := harness.NewEnv(context.Background(), p.Env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close(context.Background()) })
	return env
}

// rowOf is the first row of kind in rows.
func rowOf(rows []audit.Row, kind audit.Kind) (audit.Row, bool) {
	for _, r := range rows {
		if r.Kind == kind {
			return r, true
		}
	}
	return audit.Row{}, false
}

// toolsOf is what the world's project lists to a fresh client.
func toolsOf(t *testing.T, env *harness.Env) []string {
	t.Helper()
	ctx := context.Background()
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// callSearch calls docmost_search once through a fresh client and says
// whether it was answered without an error.
func callSearch(t *testing.T, env *harness.Env) bool {
	t.Helper()
	ctx := context.Background()
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "after the replay"}})
	return err == nil && !r.IsError
}

// A recorded call is played back and answered; the result holds the
// call's trace and exactly the rows of that trace, its root among them,
// once they have settled (the LLM attempt its stage made included).
func TestPlayReturnsTheAnsweredCallsRows(t *testing.T) {
	p := docmostPlan(t)
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Answered || res.IsError || res.Trace == "" || res.Text == "" {
		t.Fatalf("result: answered %v, isError %v, trace %q, %d bytes of text; want an answer with its trace", res.Answered, res.IsError, res.Trace, len(res.Text))
	}
	if !hasRoot(res.Rows) {
		t.Errorf("the rows lack the root row: %v", res.Rows)
	}
	for _, r := range res.Rows {
		if r.CorrelationID != res.Trace {
			t.Errorf("row %s %s belongs to trace %s, not the call's %s", r.Kind, r.Tool, r.CorrelationID, res.Trace)
		}
	}
	up, ok := rowOf(res.Rows, audit.KindUpstreamCall)
	if !ok || up.Server != "docmost" || up.Tool != "search" || up.Status != audit.StatusOK {
		t.Errorf("upstream call: %+v (found %v), want docmost search ok", up, ok)
	}
	if _, ok := rowOf(res.Rows, audit.KindLLMAttempt); !ok {
		t.Errorf("the stage's LLM attempt, written as the call settles, is missing: %v", res.Rows)
	}
	// The fake answers after the recorded 200ms compressed 10×: 20ms.
	if res.Latency < 20*time.Millisecond {
		t.Errorf("answered in %v, before the recorded latency of 20ms", res.Latency)
	}
}

// Each recorded attempt is played on the provider that made it: the
// primary's recorded 429 and the fallback's 404 are what the replay's
// attempts show, in that order.
func TestPlayPlaysEachProvidersRecordedAttempts(t *testing.T) {
	p := docmostPlan(t)
	p.LLM = []fakellm.Step{fakellm.Do(fakellm.RateLimited)}
	p.Fallback = []fakellm.Step{fakellm.Do(fakellm.NotFound)}
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, r := range res.Rows {
		if r.Kind == audit.KindLLMAttempt {
			outcomes = append(outcomes, AttemptOutcome(r.Detail))
		}
	}
	if !slices.Equal(outcomes, []string{"HTTP 429", "HTTP 404"}) {
		t.Errorf("attempts %q, want the primary's HTTP 429 then the fallback's HTTP 404", outcomes)
	}
}

// A recording whose attempts the world has no fake LLM for (its config
// names no LLM) is still played: the call is answered, the attempts left
// out.
func TestPlayLeavesOutAttemptsTheWorldHasNoFakeFor(t *testing.T) {
	p := docmostPlan(t)
	p.Env.LLM, p.Env.Fallback = false, false
	p.LLM = []fakellm.Step{fakellm.Do(fakellm.RateLimited)}
	p.Fallback = []fakellm.Step{fakellm.Do(fakellm.NotFound)}
	res, err := Run(context.Background(), p, nil)
	if err != nil || !res.Answered {
		t.Fatalf("answered %v, error %v: want the call answered without an LLM", res.Answered, err)
	}
	if r, ok := rowOf(res.Rows, audit.KindLLMAttempt); ok {
		t.Errorf("an attempt was made in a world without an LLM: %+v", r)
	}
}

// A call the recording never saw answered is played as that: the client
// gives up after its timeout, and the replay still returns the call's rows
// (found through the session), root row included, without waiting out its
// bound once that root row is written.
func TestPlayFindsTheRowsOfACallItsClientGaveUpOn(t *testing.T) {
	p := docmostPlan(t)
	p.Upstream["search"] = upstream.Behavior{Kind: upstream.Hang}
	p.ClientTimeout = 300 * time.Millisecond
	env := worldOf(t, p)
	t0 := time.Now()
	res, err := Play(context.Background(), p, env)
	took := time.Since(t0)
	if err != nil {
		t.Fatalf("a call its client gave up on is not an error: %v", err)
	}
	if res.Answered || res.Trace == "" {
		t.Fatalf("answered %v, trace %q: want unanswered, with the call's trace", res.Answered, res.Trace)
	}
	if res.Latency < p.ClientTimeout {
		t.Errorf("the client gave up after %v, before its timeout of %v", res.Latency, p.ClientTimeout)
	}
	if !hasRoot(res.Rows) {
		t.Errorf("the root row written when the client gave up is missing: %v", res.Rows)
	}
	up, ok := rowOf(res.Rows, audit.KindUpstreamCall)
	if !ok || up.Tool != "search" || up.CorrelationID != res.Trace {
		t.Errorf("the hung upstream call's row: %+v (found %v)", up, ok)
	}
	// The root row is written within milliseconds of the client giving up;
	// the wait for it is bounded by rootWait (3s). Half of it is the
	// tolerance for a loaded machine.
	if budget := p.ClientTimeout + rootWait/2; took > budget {
		t.Errorf("the replay took %v, over %v: it waited for a root row it already had", took, budget)
	}
}

// deadlineAtCancel is a context whose deadline passes when it is
// cancelled: the caller's deadline, at a moment the test chooses.
type deadlineAtCancel struct{ context.Context }

// Value holds nothing, so a context made from this one watches its Done
// and takes its Err, not the cancellation inside.
func (deadlineAtCancel) Value(any) any { return nil }

func (c deadlineAtCancel) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// A replay its caller cuts short before the client's timeout is an error,
// not a call the client gave up on: the recording is not what was played.
func TestPlayCutShortByItsCallerIsAnError(t *testing.T) {
	p := docmostPlan(t)
	p.Upstream["search"] = upstream.Behavior{Kind: upstream.Hang}
	p.ClientTimeout = 10 * time.Second
	env := worldOf(t, p)
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := deadlineAtCancel{inner}
	go func() { // the caller's deadline passes once the call hangs at the upstream
		for env.Docmost.InFlight() == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Play(ctx, p, env)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "calling "+p.Tool) {
		t.Fatalf("a replay cut short by its caller: %+v, %v; want the caller's error, naming the call it cut", res, err)
	}
	if res.Answered {
		t.Errorf("the call was reported answered: %+v", res)
	}
}

// A network failure is played on the way to the upstream as recorded: a
// refusal and a reset reach the proxy as those, so its row names the same
// kind of failure; a refused server is put back when the replay ends.
func TestPlayFailsTheWayToTheUpstreamAsRecorded(t *testing.T) {
	for _, c := range []struct {
		n    Network
		want string
	}{{NetworkRefused, FailureRefused}, {NetworkReset, FailureNetwork}} {
		t.Run(string(c.n), func(t *testing.T) {
			p := docmostPlan(t)
			p.Network = c.n
			env := worldOf(t, p)
			res, err := Play(context.Background(), p, env)
			if err != nil {
				t.Fatal(err)
			}
			up, ok := rowOf(res.Rows, audit.KindUpstreamCall)
			if !ok || up.Status != audit.StatusError || UpstreamFailure(up.Detail) != c.want {
				t.Fatalf("upstream call %+v (found %v): want an error that is %s", up, ok, c.want)
			}
			if c.n == NetworkRefused && !callSearch(t, env) {
				t.Errorf("after the replay the world's docmost does not answer: the refused server was not put back")
			}
		})
	}
}

// A network timeout is played as a blackhole: the upstream never answers,
// so the client gives up.
func TestPlayPlaysANetworkTimeoutAsABlackhole(t *testing.T) {
	p := docmostPlan(t)
	p.Network = NetworkTimeout
	p.ClientTimeout = 300 * time.Millisecond
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered {
		t.Errorf("a call through a blackhole was answered: %q", res.Text)
	}
	if _, ok := rowOf(res.Rows, audit.KindUpstreamCall); !ok {
		t.Errorf("the blackholed upstream call's row is missing: %v", res.Rows)
	}
}

// A call recorded through a server other than the world's docmost is
// played on a fake of that server, added to the proxy for the replay and
// removed after it.
func TestPlayAddsAFakeOfAnotherServerForTheReplayOnly(t *testing.T) {
	p := serverPlan(t, "wiki", "get_page")
	env := worldOf(t, p)
	res, err := Play(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	up, ok := rowOf(res.Rows, audit.KindUpstreamCall)
	if !res.Answered || res.IsError || !ok || up.Server != "wiki" || up.Tool != "get_page" {
		t.Fatalf("answered %v (isError %v, %q); upstream call %+v: want wiki's get_page answered", res.Answered, res.IsError, res.Text, up)
	}
	if !strings.Contains(res.Text, "fake wiki: get_page answered") {
		t.Errorf("the answer %q is not the wiki fake's", res.Text)
	}
	tools := toolsOf(t, env)
	if slices.Contains(tools, "wiki_get_page") || !slices.Contains(tools, "docmost_search") {
		t.Errorf("after the replay the project lists %v: want wiki gone, docmost kept", tools)
	}
}

// A docmost tool the world's docmost fake does not serve is played on a
// fake of its own that replaces docmost for the replay; the world's
// docmost is put back after it.
func TestPlayPutsTheWorldsDocmostBackAfterReplacingIt(t *testing.T) {
	p := serverPlan(t, "docmost", "get_page")
	env := worldOf(t, p)
	res, err := Play(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Answered || !strings.Contains(res.Text, "fake docmost: get_page answered") {
		t.Fatalf("answered %v: %q: want the replacing fake's answer", res.Answered, res.Text)
	}
	before := len(env.Docmost.Calls())
	if !callSearch(t, env) || len(env.Docmost.Calls()) != before+1 {
		t.Errorf("after the replay docmost_search does not reach the world's docmost (%d calls, were %d)", len(env.Docmost.Calls()), before)
	}
}

// A recording on a recreated session is played as that sequence: the
// proxy restarts between the handshake and the call, the call is still
// answered, and a fake the replay added is added again after the restart.
func TestPlayRestartsTheProxyBeforeTheCallAsRecorded(t *testing.T) {
	for _, p := range []Plan{docmostPlan(t), serverPlan(t, "wiki", "get_page")} {
		t.Run(p.Server, func(t *testing.T) {
			p.Recreate = true
			res, err := Run(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Answered || res.IsError {
				t.Fatalf("answered %v, isError %v (%q): want the call answered after the restart", res.Answered, res.IsError, res.Text)
			}
			if _, ok := rowOf(res.Rows, audit.KindSessionRecreated); !ok {
				t.Errorf("no session_recreated row: the proxy did not restart under the session: %v", res.Rows)
			}
		})
	}
}

// What cannot be played is an error that says why: a tool the proxy does
// not list, a network failure the replay has no way to play, a fake the
// proxy refuses to add.
func TestPlayRefusesWhatItCannotPlay(t *testing.T) {
	ctx := context.Background()
	p := docmostPlan(t)
	env := worldOf(t, p)
	q := p
	q.Tool = "docmost_no_such_tool"
	if _, err := Play(ctx, q, env); err == nil || !strings.Contains(err.Error(), "lists no tool docmost_no_such_tool") {
		t.Errorf("a tool the proxy does not list: %v", err)
	}
	q = p
	q.Network = "flood"
	if _, err := Play(ctx, q, env); err == nil || !strings.Contains(err.Error(), `no way to play network failure "flood"`) {
		t.Errorf("an unknown network failure: %v", err)
	}
	q = serverPlan(t, "wiki", "get_page")
	q.Server = "Not A Name"
	if _, err := Play(ctx, q, env); err == nil || !strings.Contains(err.Error(), "adding a fake of server Not A Name") || !strings.Contains(err.Error(), "/api/v1/servers/"+harness.Project+"/Not A Name") {
		t.Errorf("a server the proxy refuses to add: %v", err)
	}
	if !callSearch(t, env) {
		t.Errorf("after the refusals the world's docmost does not answer")
	}
}

// The rows of a call its client gave up on are the session's rows of the
// trace that called the plan's tool (or whose root is the plan's tool);
// another trace's rows are not.
func TestCallRowsPicksTheTraceOfThePlansCall(t *testing.T) {
	p := Plan{Tool: "docmost_search", UpstreamTool: "search"}
	tagged := func(r audit.Row, code string) audit.Row { r.CorrelationID = code; return r }
	other := tagged(row(audit.KindUpstreamCall, "update_page", 0, time.Millisecond, "ok"), "OTHER")
	otherRoot := tagged(row(audit.KindToolCallTrace, "docmost_update_page", 0, time.Millisecond, "ok"), "OTHER")
	up := tagged(row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "error"), "CALL")
	stage := tagged(row(audit.KindStageExecution, "paginate", 0, time.Millisecond, "ok"), "CALL")
	code, rows := callRows([]audit.Row{otherRoot, other, up, stage}, p)
	if code != "CALL" || len(rows) != 2 || rows[0].Tool != "search" || rows[1].Stage != "paginate" {
		t.Errorf("by its upstream call: trace %q, rows %v; want CALL's two rows", code, rows)
	}
	root := tagged(row(audit.KindToolCallTrace, "docmost_search", 0, time.Millisecond, "cancelled"), "ROOT")
	root.ParentID = ""
	if code, rows := callRows([]audit.Row{otherRoot, root, other}, p); code != "ROOT" || len(rows) != 1 {
		t.Errorf("by its root: trace %q, rows %v; want ROOT's root row", code, rows)
	}
	// A search made under another tool's root, as a non-root span, is
	// not the plan's call; rows without a trace are never picked.
	untraced := row(audit.KindStageExecution, "paginate", 0, time.Millisecond, "ok")
	if code, rows := callRows([]audit.Row{otherRoot, other, untraced}, p); code != "" || len(rows) != 0 {
		t.Errorf("no row of the plan's call: trace %q, rows %v; want none", code, rows)
	}
}

// Only a root tool_call_trace row is the call's root: a nested one or an
// mcp_request is not.
func TestHasRootWantsARootToolCallTrace(t *testing.T) {
	nested := row(audit.KindToolCallTrace, "docmost_search", 0, time.Millisecond, "ok")
	nested.ParentID = "outer"
	req := row(audit.KindMCPRequest, "tools/list", 0, time.Millisecond, "ok")
	req.ParentID = ""
	if hasRoot([]audit.Row{nested, req}) {
		t.Error("a nested tool_call_trace and an mcp_request taken for the root")
	}
	root := nested
	root.ParentID = ""
	if !hasRoot([]audit.Row{req, root}) {
		t.Error("a root tool_call_trace not taken for the root")
	}
}

// An answered call's rows are not taken as whole before its root row is
// written, however long they stay the same without it.
func TestAnAnsweredCallsRowsWaitForTheRoot(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok")
	root.ParentID = ""
	up := row(audit.KindUpstreamCall, "search", 0, time.Second, "ok")
	stage := row(audit.KindStageExecution, "paginate", 0, time.Second, "ok")
	reads := 0
	// Two rows without the root for longer than settleQuiet, then the
	// root in place of one of them: as many rows as before.
	rows, err := settledRows(context.Background(), func() ([]audit.Row, error) {
		reads++
		if reads <= 2+int(settleQuiet/(50*time.Millisecond)) {
			return []audit.Row{up, stage}, nil
		}
		return []audit.Row{root, up}, nil
	})
	if err != nil || !hasRoot(rows) {
		t.Errorf("after %d reads: %v (%v), want the rows with the root", reads, rows, err)
	}
}
