package catalogue

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The attacks (docs/security.md) on what one proxy process is: its projects, its
// config, its switches, its log and its readiness.

// twoProjects is the world of the project attack: alice and bob, and a second
// project serving the same server.
var twoProjects = func() harness.EnvOptions {
	o := twoUsers
	o.SecondProject = true
	return o
}()

// processScenarios are the security scenarios about one proxy process.
func processScenarios() []Scenario {
	sec := func(more ...string) []string { return append([]string{"security"}, more...) }
	return []Scenario{
		{Fault: harness.ProxyRestart{}, Operation: OtherProjectsID, Promise: "8 a session belongs to one project",
			Labels: sec("sessions", "projects", "restart"), Env: twoProjects, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
		{Fault: harness.None{}, Operation: SharedToken, Promise: "8 each user has a token of their own",
			Labels: sec("config", "shared-token"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: twinnable},
		{Fault: harness.None{}, Operation: FailpointsRefused, Promise: "8 the production binary refuses failpoints",
			Labels: sec("failpoints"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: productionBinary},
		{Fault: harness.HandlerPanic{Tool: "docmost_update_page"}, Operation: PanicLogged, Promise: "8 a panic's stack reaches the log",
			Labels: sec("panic"), Env: twoUsers, Budget: requestDeadline, Expect: sessionAnswered, Needs: logsKept},
		{Fault: harness.None{}, Operation: NotReadyWhileAuditDown, Promise: "8 not ready while the audit store does not answer",
			Labels: sec("readyz"), Env: twoUsers, Budget: func(b harness.Bounds) time.Duration { return b.D(harness.BoundReady) },
			Expect: sessionAnswered, Needs: auditStallable},
	}
}

// twinnable says why a target cannot start a second proxy of its own.
func twinnable(t harness.Target) string {
	_, why := harness.Twin(t)
	return why
}

// productionBinary says why a target cannot show what the production binary
// does with failpoints in its environment.
func productionBinary(t harness.Target) string {
	switch t.(type) {
	case *harness.Binary:
		return ""
	case *harness.InProcess:
		return "only a binary reads failpoints from its environment: in process they are an option the test passes to proxy.New, with no production switch to guard"
	}
	return "a check of mcplocal's own release binary (failpoints in its environment ignored without their switch): target " + t.Name() + " is not that binary"
}

// logsKept says why a target's proxy log cannot be read.
func logsKept(t harness.Target) string {
	if why := harness.Lacks(t, harness.CapFailpoints); why != "" {
		return why
	}
	if _, ok := t.(harness.LogReader); !ok {
		return "the harness keeps no log of this target's proxy"
	}
	return ""
}

// auditStallable says why a target's audit store cannot be made to stop
// answering.
func auditStallable(t harness.Target) string {
	if _, ok := t.(harness.AuditStaller); !ok {
		if why := harness.Lacks(t, harness.CapAuditAPI); why != "" {
			return why + ": it has no audit store the harness knows of, to stall"
		}
		if _, ok := t.(*harness.Binary); !ok {
			return "target " + t.Name() + "'s audit store cannot be stalled from outside its process"
		}
		return "its audit store cannot be stalled from outside the process: a binary's SQLite file in WAL mode takes no lock another process could hold to block its reads, and a store that can be cut (Postgres behind a toxiproxy link) needs Docker"
	}
	return ""
}

// OtherProjectsID: alice's session of project docmost, presented by alice
// herself on project other (a request and a DELETE), is refused there with
// a JSON-RPC 404, while live and after a restart (the pending fault). Nothing
// of it is left on other: no audit row of the id names that project, the
// DELETE tombstoned nothing (her session is recreated for her on docmost),
// and the store holds one record of the id, docmost's, open.
var OtherProjectsID = Operation{Name: "a session id of one project presented on another", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := aliceCalled(ctx, env, "alice's own call")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	id := cs.ID()
	var o Observation
	other := env.ProjectURLOf(harness.OtherProject)
	refused := func(when string) error {
		for _, m := range []string{http.MethodPost, http.MethodDelete} {
			body := ""
			if m == http.MethodPost {
				body = toolsCall
			}
			status, got, err := mcpRequestAt(ctx, env, other, "alice", m, id, body)
			if err != nil {
				return err
			}
			if bad, _ := rpcError(status, got, http.StatusNotFound); bad != "" {
				o.Broken = append(o.Broken, fmt.Sprintf("%s: alice's %s on project %s with her session of %s %s", when, m, harness.OtherProject, harness.Project, bad))
			}
		}
		return nil
	}
	clk := startClock()
	if err := refused("live"); err != nil {
		clk.halt()
		return Observation{Err: err}
	}
	clk.into(&o)
	if again := timedCall(ctx, cs, "docmost_update_page", aliceArgs); again.Err != nil || again.IsError {
		o.Broken = append(o.Broken, fmt.Sprintf("alice's session on %s after her requests on %s: %v %s", harness.Project, harness.OtherProject, again.Err, again.Text))
	}
	if _, err := env.Strike(ctx); err != nil {
		return Observation{Err: fmt.Errorf("fault: %w", err)}
	}
	if err := refused("after a restart"); err != nil {
		return Observation{Err: err}
	}
	mine := timedCall(ctx, cs, "docmost_update_page", aliceArgs)
	switch {
	case mine.Err != nil || mine.IsError:
		o.Broken = append(o.Broken, fmt.Sprintf("after a restart, alice's session of %s (DELETEd on %s) is not recreated for her: %v %s", harness.Project, harness.OtherProject, mine.Err, mine.Text))
	case !strings.Contains(mine.Text, NoticePrefix):
		o.Broken = append(o.Broken, "after a restart, alice's session was not recreated (no ⚠ notice)")
	}
	rows, err := mcplocal.AuditSession(ctx, env, id)
	if err != nil {
		o.Broken = append(o.Broken, "audit: "+err.Error())
	}
	for _, r := range rows {
		if r.Project != harness.Project {
			o.Broken = append(o.Broken, fmt.Sprintf("the %s row %s of alice's session of %s names project %q: it was adopted there", r.Kind, r.CorrelationID, harness.Project, r.Project))
			break
		}
	}
	// What the store holds of the id, where the harness can read it: one
	// record, of docmost, alice's, open; none of other (no tombstone there).
	recs, readable, err := sessionRecords(ctx, env, id)
	switch {
	case err != nil:
		o.Broken = append(o.Broken, "session records: "+err.Error())
	case readable && (len(recs) != 1 || recs[0].Project != harness.Project || recs[0].Owner != "alice" || recs[0].Tombstone()):
		o.Broken = append(o.Broken, fmt.Sprintf("the store's records of the id are %+v; want one, of %s, alice's, open: the requests on %s left something there", recs, harness.Project, harness.OtherProject))
	}
	return o
}}

// sessionRecords reads the session records of id from the audit store, when
// the target's store is the world's SQLite file (the inprocess and binary
// targets); readable is false otherwise.
func sessionRecords(ctx context.Context, env *harness.Env, id string) (recs []mcplocal.SessionRecord, readable bool, err error) {
	switch env.Target.(type) {
	case *harness.InProcess, *harness.Binary:
	default:
		return nil, false, nil
	}
	if !strings.HasPrefix(env.World.Store, "sqlite:") {
		return nil, false, nil
	}
	recs, err = mcplocal.SessionRecords(ctx, env.World.Store, id)
	return recs, true, err
}

// twinWorld is env's world for a second proxy of the operation's own, with
// an audit store of its own (the env's proxy keeps running on its own).
func twinWorld(env *harness.Env, name string) *harness.World {
	w := env.World.Clone()
	w.Store = "sqlite:" + filepath.Join(env.Dir, name+".db")
	return w
}

// SharedToken ("two users with one token silently overwrite each other"):
// a config giving alice and bob one token is refused when the proxy
// starts, with an error naming both; a binary exits non-zero saying so.
var SharedToken = Operation{Name: "a config giving two users one token", Do: func(ctx context.Context, env *harness.Env) Observation {
	twin, why := harness.Twin(env.Target)
	if twin == nil {
		return Observation{Err: fmt.Errorf("%s", why)}
	}
	w := twinWorld(env, "shared-token")
	w.Users = map[string]harness.User{"alice": {Token: "one-token-for-two"}, "bob": {Token: "one-token-for-two"}}
	err := twin.Start(ctx, harness.Spec{World: w, Bounds: env.Bounds()})
	defer twin.Stop(context.Background())
	var o Observation
	switch {
	case err == nil:
		o.Broken = append(o.Broken, "the proxy started with alice and bob sharing one token: one would act as the other")
	case !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "bob"):
		o.Broken = append(o.Broken, "the start was refused, but the error does not name both users: "+excerpt(err.Error()))
	default:
		if _, bin := twin.(*harness.Binary); bin && (!strings.Contains(err.Error(), "exited") || strings.Contains(err.Error(), "exit status 0")) {
			o.Broken = append(o.Broken, "mcplocal did not exit non-zero: "+excerpt(err.Error()))
		}
	}
	return o
}}

// FailpointsRefused: mcplocal started as production is, with a panic
// failpoint in MCPLOCAL_FAILPOINTS but without MCPLOCAL_ENABLE_FAILPOINTS=1,
// serves the call the failpoint names normally and logs that it ignored them.
var FailpointsRefused = Operation{Name: "failpoints in the environment of a production start", Do: func(ctx context.Context, env *harness.Env) Observation {
	twin, why := harness.Twin(env.Target)
	bin, ok := twin.(*harness.Binary)
	if !ok {
		return Observation{Err: fmt.Errorf("not a binary target: %s", why)}
	}
	bin.NoFailpointSwitch = true
	fps := harness.PanicInToolCall("docmost_update_page")
	if err := bin.Start(ctx, harness.Spec{World: twinWorld(env, "no-failpoints"), Bounds: env.Bounds(), Failpoints: fps}); err != nil {
		return Observation{Err: err}
	}
	defer bin.Stop(context.Background())
	cs, err := harness.SDKClient(ctx, bin.URL()+"/projects/"+harness.Project+"/mcp", env.Token("alice"))
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	o := timedCall(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p1", "content": "x"})
	if o.Err != nil {
		return o
	}
	if o.IsError {
		o.Broken = append(o.Broken, "the production binary honoured MCPLOCAL_FAILPOINTS without MCPLOCAL_ENABLE_FAILPOINTS=1: "+excerpt(o.Text))
	}
	if !strings.Contains(bin.Logs(), "failpoints ignored") {
		o.Broken = append(o.Broken, "mcplocal did not log that it ignored the failpoints in its environment")
	}
	return o
}}

// PanicLogged: a handler panics on the call (the failpoint); the client gets
// an isError quoting its trace code, and the proxy's log (a binary's stderr)
// has the panic with that trace code and its stack.
var PanicLogged = Operation{Name: "a handler panic, as the operator's log shows it", Do: func(ctx context.Context, env *harness.Env) Observation {
	lr, ok := env.Target.(harness.LogReader)
	if !ok {
		return Observation{Err: fmt.Errorf("target %s keeps no log", env.Target.Name())}
	}
	o := call(ctx, env, "docmost_update_page", map[string]any{"page_id": "p1", "content": "x"})
	if o.Err != nil {
		return o
	}
	if !o.IsError || o.Trace == "" {
		o.Broken = append(o.Broken, "the panicking call was not answered with an isError carrying a trace code: "+excerpt(o.Text))
		return o
	}
	// The log line is written as the answer goes out: wait for it a little.
	line := panicLine(lr.Logs(), o.Trace)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(Tolerance); line == ""; {
		select {
		case <-ctx.Done():
			return Observation{Err: ctx.Err()}
		case <-deadline:
		case <-tick.C:
			line = panicLine(lr.Logs(), o.Trace)
			continue
		}
		break
	}
	switch {
	case line == "":
		o.Broken = append(o.Broken, fmt.Sprintf("the proxy's log has no \"handler panicked\" line with trace %s", o.Trace))
	case !strings.Contains(line, "goroutine ") || !strings.Contains(line, "[running]"):
		o.Broken = append(o.Broken, "the proxy logged the panic without its stack: "+excerpt(line))
	}
	return o
}}

// panicLine is the log line reporting the panic of trace, "" if none.
func panicLine(logs, trace string) string {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "handler panicked") && strings.Contains(l, trace) {
			return l
		}
	}
	return ""
}

// NotReadyWhileAuditDown: /readyz says ready, then the audit store stops
// answering and /readyz says 503 within MCPCTL_READY_TIMEOUT_MS: a
// proxy that can neither record rows nor check session owners takes no users.
var NotReadyWhileAuditDown = Operation{Name: "/readyz while the audit store does not answer", Do: func(ctx context.Context, env *harness.Env) Observation {
	st, ok := env.Target.(harness.AuditStaller)
	if !ok {
		return Observation{Err: fmt.Errorf("target %s cannot stall its audit store", env.Target.Name())}
	}
	ready := func() (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+"/readyz", nil)
		if err != nil {
			return 0, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b), err
	}
	var o Observation
	if status, body, err := ready(); err != nil {
		return Observation{Err: err}
	} else if status != http.StatusOK {
		return Observation{Err: fmt.Errorf("/readyz before the store stalled answered %d: %s", status, excerpt(body))}
	}
	st.StallAudit()
	clk := startClock()
	status, body, err := ready()
	o.Err = err
	clk.into(&o)
	if err == nil && status != http.StatusServiceUnavailable {
		o.Broken = append(o.Broken, fmt.Sprintf("/readyz with the audit store not answering answered %d, want 503: %s", status, excerpt(body)))
	}
	return o
}}
