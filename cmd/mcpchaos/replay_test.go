package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
	"github.com/mcpchaos/mcpchaos/scenarios/replay"
)

// TestSeedIncidentReplaysFromItsRows: the seed's hang, recorded on the
// build with the unbounded-pagination bug (time compressed 300×: the
// client gives up after 6 s, the incident's 1800 s), bundled from the rows
// of the hanging docmost_search, and replayed: against the buggy build it
// has the same shape (never answered; --expect same passes), against
// mcplocal it is fixed (answered within budget with the ⚠ notice, every
// row joined by one trace code; --expect fixed passes, --expect same
// fails).
func TestSeedIncidentReplaysFromItsRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	buggy, err := mutants.BuildWith(ctx, []string{"unbounded-paginate"}, dir)
	if err != nil {
		t.Fatalf("building the buggy mcplocal: %v", err)
	}
	const clientTimeout = 6 * time.Second
	kv := mcplocal.CompressBy(300)
	kv.UpstreamConnect, kv.UpstreamCallTimeout = kv.RequestDeadline, kv.RequestDeadline
	kv.RequestDeadline = 10 * clientTimeout // the seed's proxy had no outer deadline

	// The incident, recorded.
	env, err := harness.NewEnv(ctx, harness.EnvOptions{
		Target: &harness.Binary{Path: buggy}, Bounds: mcplocal.BoundsOf(kv), LLM: true,
		LLMDefault: fakellm.Step{Kind: fakellm.HangBeforeHeaders},
		Pipeline:   []harness.Stage{{Name: "paginate"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.Background())
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, ccancel := context.WithTimeout(ctx, clientTimeout)
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "notes"}})
	ccancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the buggy build answered docmost_search (%v): no incident to record", err)
	}
	rows, err := mcplocal.AuditSession(ctx, env, cs.ID())
	if err != nil {
		t.Fatal(err)
	}
	code := ""
	for _, r := range rows {
		if r.Kind == audit.KindUpstreamCall && r.Tool == "search" {
			code = r.CorrelationID
		}
	}
	if code == "" {
		t.Fatalf("no upstream_call row of the hanging docmost_search among %d rows", len(rows))
	}
	// The bundle is made as an engineer would make it, after the fact: once
	// the proxy has written the row of the call the client gave up on (it
	// does so when it sees the client leave, a moment after the timeout).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rows, err = mcplocal.Audit(ctx, env, code); err != nil {
			t.Fatal(err)
		}
		if hasToolCallRow(rows) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !hasToolCallRow(rows) {
		t.Fatalf("the buggy build wrote no tool_call_trace row for the call the client gave up on, within 10s: %d rows", len(rows))
	}
	file := writeBundle(t, env, code, rows)
	_ = env.Close(context.Background())

	replayArgs := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"replay"}, args...), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	replayOnce := func(target, expect string, more ...string) (string, error) {
		return replayArgs(append([]string{file, "--target", target, "--client-timeout", clientTimeout.String(), "--expect", expect}, more...)...)
	}
	out, err := replayOnce("binary:"+buggy, "same")
	if err != nil || !strings.Contains(out, "NO ANSWER: the client gave up after 6") || !strings.Contains(out, "verdict: same") {
		t.Errorf("replayed against the buggy build: %v\n%s", err, out)
	}
	kept := filepath.Join(t.TempDir(), "seed-hang.json")
	out, err = replayOnce("inprocess", "fixed", "--as-scenario", kept, "--name", "seed-hang-1800s")
	if err != nil || !strings.Contains(out, "⚠ Smart page titles unavailable (") || !strings.Contains(out, "verdict: fixed") || !strings.Contains(out, "tool_call_trace docmost docmost_search: recorded cancelled, replayed ok") || !strings.Contains(out, "notice gained") {
		t.Errorf("replayed against mcplocal: %v\n%s", err, out)
	}
	// One trace code joins the rows: the replayed trace holds the pipeline,
	// the stage that degraded and the LLM attempt it bounded.
	for _, span := range []string{"span added         pipeline_execution", "span added         stage_execution docmost docmost_search paginate", "span added         llm_attempt"} {
		if !strings.Contains(out, span) {
			t.Errorf("the replayed trace lacks %q:\n%s", span, out)
		}
	}
	// Answered within budget.
	var answered time.Duration
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(l, "answered in "); ok {
			answered, _ = time.ParseDuration(strings.TrimSuffix(strings.Fields(s)[0], ","))
		}
	}
	if budget := kv.PaginationLLMTimeout + kv.UpstreamCallTimeout + time.Second; answered <= 0 || answered > budget {
		t.Errorf("mcplocal answered in %v, want within %v", answered, budget)
	}
	if _, err := replayOnce("inprocess", "same"); err == nil || !strings.Contains(err.Error(), "verdict fixed, expected same") {
		t.Errorf("--expect same on the fixed build: %v, want a failure", err)
	}
	// Kept after the fix, the replay is a scenario pinned to `fixed`: it
	// holds on mcplocal and fails the day the hang is back.
	if !strings.Contains(out, "kept as "+kept+": it expects fixed") {
		t.Errorf("--as-scenario did not say it kept the replay:\n%s", out)
	}
	if out, err := replayArgs(kept); err != nil || !strings.Contains(out, "kept scenario seed-hang-1800s: expects fixed") || !strings.Contains(out, "verdict: fixed") {
		t.Errorf("the kept scenario on mcplocal: %v\n%s", err, out)
	}
	if out, err := replayArgs(kept, "--target", "binary:"+buggy); err == nil || !strings.Contains(err.Error(), "verdict same, expected fixed") {
		t.Errorf("the kept scenario on the buggy build: %v, want it to fail\n%s", err, out)
	}
}

// writeBundle bundles the rows of code as mcpctl trace --bundle does, from
// the world's config and knobs, and returns the file.
func writeBundle(t *testing.T, env *harness.Env, code string, rows []audit.Row) string {
	t.Helper()
	rc, err := bundle.NewContext(mcplocal.Config(env.World), mcplocal.KnobsOf(env.Bounds()), bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := bundle.Marshal(bundle.New(code, rows, rc, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), code+".bundle.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// replayCompress is how far the recordings of these tests compress the
// knobs: 20, not 100. At 100 an LLM attempt has 100 ms and an upstream call
// 300 ms, and at load 13 under -race one recording met a timeout for the
// primary's 404 (no failover chain) and one replay an upstream call that
// took its whole 300 ms: a compressed window shorter than the action it
// spans on a loaded machine.
const replayCompress = 20

// A failover chain replays faithfully on the build that recorded it: the
// primary answering 404 on every attempt and the fallback answering, the
// replay has the same spans, outcomes and notices (--expect same).
func TestAFailoverChainReplaysFaithfully(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := mcplocal.CompressBy(replayCompress)
	env, err := harness.NewEnv(ctx, harness.EnvOptions{
		Target: &harness.InProcess{}, Bounds: mcplocal.BoundsOf(kv), LLM: true, Fallback: true,
		Pipeline: []harness.Stage{{Name: "paginate"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.Background())
	if err := env.LLM.Set(fakellm.AnyModel, fakellm.Do(fakellm.NotFound)); err != nil {
		t.Fatal(err)
	}
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "notes"}})
	if err != nil || res.IsError {
		t.Fatalf("the recorded call: %v %s", err, firstText(res))
	}
	code, _ := res.Meta[trace.MetaKey].(string)
	rows, err := mcplocal.Audit(ctx, env, code)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	for _, r := range rows {
		if r.Kind == audit.KindLLMAttempt {
			statuses[r.Server+" "+r.Status]++
		}
	}
	if len(statuses) < 2 {
		t.Fatalf("the recording holds no failover chain: %v", statuses)
	}
	file := writeBundle(t, env, code, rows)
	_ = env.Close(context.Background())
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"replay", file, "--expect", "same"}, &out, &errOut); err != nil {
		t.Errorf("replaying a failover chain (%v): %v\n%s%s", statuses, err, out.String(), errOut.String())
	}
}

// A recreated session replays faithfully: recorded as a call that arrived
// after a restart with the client's old session id (a session_recreated
// row and the ⚠ Session state unavailable notice), the replay restarts the
// proxy between handshake and call and shows the same shape.
func TestARecreatedSessionReplaysFaithfully(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, code := callAfterRestart(ctx, t, harness.EnvOptions{}, "docmost_search", map[string]any{"query": "notes"})
	defer env.Close(context.Background())
	rows, err := mcplocal.Audit(ctx, env, code)
	if err != nil {
		t.Fatal(err)
	}
	recreated := false
	for _, r := range rows {
		recreated = recreated || r.Kind == audit.KindSessionRecreated
	}
	if !recreated {
		t.Fatalf("the recording holds no session_recreated row: %v", rows)
	}
	file := writeBundle(t, env, code, rows)
	_ = env.Close(context.Background())
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"replay", file, "--expect", "same"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "⚠ Session state unavailable (") {
		t.Errorf("replaying a recreated session: %v\n%s%s", err, out.String(), errOut.String())
	}
}

// An upstream reset replays faithfully: recorded as a call whose upstream
// connection was reset (toxiproxy reset_peer on the docmost link), the
// replay resets the link the same way and shows the same shape.
func TestAnUpstreamResetReplaysFaithfully(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := mcplocal.CompressBy(replayCompress)
	env, err := harness.NewEnv(ctx, harness.EnvOptions{Target: &harness.InProcess{}, Bounds: mcplocal.BoundsOf(kv)})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.Background())
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := env.Arm(ctx, harness.ResetPeer{}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "notes"}})
	if err != nil || !res.IsError {
		t.Fatalf("the recorded call over a reset link: %v %s", err, firstText(res))
	}
	code, _ := res.Meta[trace.MetaKey].(string)
	rows, err := mcplocal.Audit(ctx, env, code)
	if err != nil {
		t.Fatal(err)
	}
	file := writeBundle(t, env, code, rows)
	_ = env.Close(context.Background())
	var out, errOut bytes.Buffer
	err = run(ctx, []string{"replay", file, "--expect", "same"}, &out, &errOut)
	if _, replayed, _ := strings.Cut(out.String(), "replayed:"); err != nil || !strings.Contains(replayed, "rejected by transport") {
		t.Errorf("replaying an upstream reset: %v\n%s%s", err, out.String(), errOut.String())
	}
}

// hasToolCallRow reports whether rows hold the request's own tool_call_trace row.
func hasToolCallRow(rows []audit.Row) bool {
	for _, r := range rows {
		if r.Kind == audit.KindToolCallTrace {
			return true
		}
	}
	return false
}

// A kept scenario replays as it was kept, judged by its pinned verdict: the
// seed incident kept after its fix passes on mcplocal with no --expect;
// the same file pinned to the hang fails there, naming both verdicts.
func TestAKeptFileIsJudgedByItsPinnedVerdict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data, err := os.ReadFile("../../scenarios/catalogue/kept/seed-hang-1800s.json")
	if err != nil {
		t.Fatal(err)
	}
	k, err := replay.UnmarshalKept(data)
	if err != nil {
		t.Fatal(err)
	}
	// The recording's upstream bound is a compressed 300 ms; the fake's
	// recorded 3 ms answer outlasted it once on a loaded machine (CI with
	// the canary beside it), and the replay read as "changed". This test
	// judges the pinned verdict, not that bound: it gets room.
	if k.Bundle.Knobs["MCPCTL_UPSTREAM_CALL_TIMEOUT_MS"] < 5000 {
		k.Bundle.Knobs["MCPCTL_UPSTREAM_CALL_TIMEOUT_MS"] = 5000
	}
	dir := t.TempDir()
	write := func(k replay.Kept) string {
		out, err := replay.MarshalKept(k)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, string(k.Expect)+".json")
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	var out, errOut bytes.Buffer
	again := filepath.Join(dir, "again.json")
	if err := run(ctx, []string{"replay", write(k), "--as-scenario", again}, &out, &errOut); err != nil || !strings.Contains(out.String(), "verdict: fixed") {
		t.Errorf("the seed incident kept as fixed, on mcplocal: %v\n%s%s", err, out.String(), errOut.String())
	}
	// The output: what is replayed, both waterfalls, the two side by side,
	// the differences and the verdict, in that order.
	var at []int
	for _, part := range []string{
		"kept scenario seed-hang-1800s: expects fixed\n",
		"replaying trace " + k.Bundle.Trace + " (recorded by ",
		"\nrecorded:\n", "\nreplayed:\n", "\n\n  SPAN ", "RECORDED", "REPLAYED",
		"\nverdict: fixed\n", "kept as " + again + ": it expects fixed\n",
	} {
		i := strings.Index(out.String(), part)
		if i < 0 || len(at) > 0 && i < at[len(at)-1] {
			t.Errorf("the replay's output lacks %q where it belongs:\n%s", part, out.String())
		}
		at = append(at, i)
	}
	if !strings.Contains(out.String(), "tool_call_trace docmost docmost_search: recorded cancelled, replayed ok") {
		t.Errorf("the replay's differences are not named:\n%s", out.String())
	}
	// Kept again without --name, it keeps the kept scenario's own name.
	if data, err := os.ReadFile(again); err != nil {
		t.Error(err)
	} else if k2, err := replay.UnmarshalKept(data); err != nil || k2.Name != "seed-hang-1800s" || k2.Expect != replay.Fixed {
		t.Errorf("kept again as %q expecting %s (%v), want seed-hang-1800s, fixed", k2.Name, k2.Expect, err)
	}
	k.Expect = replay.Same
	out.Reset()
	err = run(ctx, []string{"replay", write(k)}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "verdict fixed, expected same") {
		t.Errorf("the seed incident pinned to its hang, on mcplocal: %v, want a failure\n%s", err, out.String())
	}
}

// recordOne records one call in a fresh in-process world (time compressed
// 100×) shaped by o and set up by before (before the client connects), and
// returns the bundle file of its trace and the call's result.
func recordOne(t *testing.T, ctx context.Context, o harness.EnvOptions, tool string, args map[string]any, before func(*harness.Env) error) (string, *mcp.CallToolResult) {
	t.Helper()
	kv := mcplocal.CompressBy(replayCompress)
	o.Target, o.Bounds = &harness.InProcess{}, mcplocal.BoundsOf(kv)
	env, err := harness.NewEnv(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.Background())
	if before != nil {
		if err := before(env); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("the recorded call: %v", err)
	}
	code, _ := res.Meta[trace.MetaKey].(string)
	rows, err := settledAudit(ctx, env, code)
	if err != nil {
		t.Fatal(err)
	}
	return writeBundle(t, env, code, rows), res
}

// settledAudit reads the rows of code once they hold the request's root
// row, a bounded while.
func settledAudit(ctx context.Context, env *harness.Env, code string) ([]audit.Row, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := mcplocal.Audit(ctx, env, code)
		if err != nil || hasToolCallRow(rows) || time.Now().After(deadline) {
			return rows, err
		}
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// callAfterRestart records a call that arrives after a restart with the
// client's old session id: in an in-process world of opts (knobs
// compressed by replayCompress) a client opens its session, the proxy
// restarts, and tool is called with args. It returns the world, still up
// (the caller closes it), and the call's trace code; the call must have
// been answered with the ⚠ Session state unavailable notice.
func callAfterRestart(ctx context.Context, t *testing.T, opts harness.EnvOptions, tool string, args map[string]any) (*harness.Env, string) {
	t.Helper()
	kv := mcplocal.CompressBy(replayCompress)
	opts.Target, opts.Bounds = &harness.InProcess{}, mcplocal.BoundsOf(kv)
	env, err := harness.NewEnv(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		_ = env.Close(context.Background())
		t.Fatal(err)
	}
	defer cs.Close()
	if err := env.Target.Restart(ctx); err != nil {
		_ = env.Close(context.Background())
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError || !strings.Contains(firstText(res), "⚠ Session state unavailable (") {
		_ = env.Close(context.Background())
		t.Fatalf("the recorded call after a restart: %v %s", err, firstText(res))
	}
	code, _ := res.Meta[trace.MetaKey].(string)
	return env, code
}

// replayed runs mcpchaos replay FILE ARGS... and returns its output.
func replayed(ctx context.Context, file string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(ctx, append([]string{"replay", file}, args...), &out, &errOut)
	return out.String() + errOut.String(), err
}

// recordedUpstreamRow is the upstream_call row a bundle recorded.
func recordedUpstreamRow(t *testing.T, file string) audit.Row {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range b.Rows {
		if r.Kind == audit.KindUpstreamCall {
			return r
		}
	}
	t.Fatalf("the bundle holds no upstream_call row")
	return audit.Row{}
}

// A recorded answer's shape is replayed: the upstream answered with text,
// an image and structuredContent, 6000 bytes in all, after 300 ms; the
// replay's fake answers the recorded tool after the recorded latency with a
// neutral body of that size and those kinds, so the replay is the same
// (another size or other kinds would be a different answer).
func TestAnAnswersShapeReplays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	shape := upstream.Shape{Bytes: 6000, Blocks: []upstream.Block{{Type: "text", N: 1}, {Type: "image", N: 1}}, Structured: true}
	file, _ := recordOne(t, ctx, harness.EnvOptions{}, "docmost_search", map[string]any{"query": "notes"}, func(env *harness.Env) error {
		env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Slow, Delay: 30 * time.Millisecond, Shape: &shape})
		return nil
	})
	if r := recordedUpstreamRow(t, file); r.Bytes != 6000 || r.Content != "text:1,image:1,structured" {
		t.Fatalf("the recorded upstream_call row says %d bytes, %q", r.Bytes, r.Content)
	}
	out, err := replayed(ctx, file, "--expect", "same")
	if err != nil || strings.Contains(out, string(replay.DifferentAnswer)) {
		t.Errorf("replaying an answer's shape: %v\n%s", err, out)
	}
}

// A trace through any upstream replays: recorded through the everything
// server, which the replay world does not have, the replay fakes a server
// of that name serving the recorded tool, and the replay is the same.
func TestACallThroughAnotherServerReplays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file, res := recordOne(t, ctx, harness.EnvOptions{Everything: true}, "everything_echo", map[string]any{"text": "PRIVATE page text"}, nil)
	if res.IsError {
		t.Fatalf("the recorded call: %s", firstText(res))
	}
	out, err := replayed(ctx, file, "--expect", "same")
	if err != nil || !strings.Contains(out, "everything_echo → everything/echo") {
		t.Errorf("replaying a call through the everything server: %v\n%s", err, out)
	}
	if strings.Contains(out, "PRIVATE") {
		t.Errorf("the replay shows the recorded answer's content:\n%s", out)
	}
}

// A refused connection replays as itself: recorded as a call whose
// upstream link was down, the replay takes the link down too (not a
// reset), and the replay is the same.
func TestAnUpstreamRefusalReplaysFaithfully(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file, res := recordOne(t, ctx, harness.EnvOptions{}, "docmost_search", map[string]any{"query": "notes"}, func(env *harness.Env) error {
		return env.Arm(ctx, harness.LinkDown{})
	})
	if !res.IsError || !strings.Contains(firstText(res), "connection refused") {
		t.Fatalf("the recorded call over a link down: %s", firstText(res))
	}
	out, err := replayed(ctx, file, "--expect", "same")
	if answer, _, _ := strings.Cut(out, "recorded:"); err != nil || !strings.Contains(answer, "connect: connection refused") {
		t.Errorf("replaying a refused connection: %v\n%s", err, out)
	}
}

// A recreated session through another server replays: the proxy restarts
// between handshake and call, and the fake of that server, added to the
// proxy at run time, is added again to the restarted one.
func TestARecreatedSessionThroughAnotherServerReplays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, code := callAfterRestart(ctx, t, harness.EnvOptions{Everything: true}, "everything_echo", map[string]any{"text": "notes"})
	defer env.Close(context.Background())
	rows, err := settledAudit(ctx, env, code)
	if err != nil {
		t.Fatal(err)
	}
	file := writeBundle(t, env, code, rows)
	_ = env.Close(context.Background())
	out, err := replayed(ctx, file, "--expect", "same")
	if err != nil || !strings.Contains(out, "⚠ Session state unavailable (") {
		t.Errorf("replaying a recreated session through the everything server: %v\n%s", err, out)
	}
}
