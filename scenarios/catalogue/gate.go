package catalogue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The gated project's prompts. With the intent below, the fallback order is
// backup (keyword hit), then deploy (priority 5), then notes; the fake LLM
// ranks them notes, deploy, backup, so the two orders are told apart.
var gatePrompts = []harness.Prompt{
	{Name: "deploy", Text: "How we deploy.", Priority: 5, Keywords: []string{"deploy"}},
	{Name: "backup", Text: "How we back up.", Priority: 1, Keywords: []string{"backup"}},
	{Name: "notes", Text: "How we write notes.", Priority: 0},
}

const (
	gateIntent    = "restore last night's backup"
	llmRanking    = "notes\ndeploy\nbackup"
	fallbackOrder = "1. backup\n"
	llmOrder      = "1. notes\n"
)

func gateEnv(withLLM bool) harness.EnvOptions {
	return harness.EnvOptions{LLM: withLLM, LLMDefault: fakellm.Step{Kind: fakellm.OK, Text: llmRanking},
		Gate: true, Prompts: gatePrompts}
}

func gateBudget(b harness.Bounds) time.Duration { return b.D(harness.BoundGate) }

// BeginSession is the gate's operation: before begin_session the project's
// tools are hidden and refused (with an audit row); begin_session (timed)
// ranks the prompts and opens them.
var BeginSession = Operation{Name: "begin_session", Do: func(ctx context.Context, env *harness.Env) Observation {
	cs, err := connect(ctx, env, "alice")
	if err != nil {
		return Observation{Err: err}
	}
	defer cs.Close()
	var broken []string
	if names, err := toolNames(ctx, cs); err != nil || strings.Contains(names, "docmost_search") {
		broken = append(broken, fmt.Sprintf("before begin_session tools/list shows the project's tools: %s %v", names, err))
	}
	refused := timedCall(ctx, cs, "docmost_search", map[string]any{"query": "x"})
	if refused.Err != nil || !refused.IsError || !strings.Contains(refused.Text, mcplocal.BeginSession) {
		broken = append(broken, fmt.Sprintf("a tool called before begin_session was not refused: %v %s", refused.Err, excerpt(refused.Text)))
	} else if rows, err := evidenceOf(env).Spans(ctx, refused.Trace); err != nil || !hasRow(rows, mcplocal.KindToolCall, evidence.StatusRefused) {
		broken = append(broken, fmt.Sprintf("the refused call has no tool_call_trace row with status refused (%v)", err))
	}

	o := timedCall(ctx, cs, mcplocal.BeginSession, map[string]any{"intent": gateIntent})
	o.Broken = append(o.Broken, broken...)
	if o.Err != nil {
		return o
	}
	if rows, err := evidenceOf(env).Spans(ctx, o.Trace); err == nil {
		o.Spans = rows
	} else {
		o.Broken = append(o.Broken, "audit: "+err.Error())
	}
	if names, err := toolNames(ctx, cs); err != nil || !strings.Contains(names, "docmost_search") {
		o.Broken = append(o.Broken, fmt.Sprintf("after begin_session tools/list lacks the project's tools: %s %v", names, err))
	}
	if after := timedCall(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p1"}); after.Err != nil || after.IsError {
		o.Broken = append(o.Broken, fmt.Sprintf("after begin_session a tool call failed: %v %s", after.Err, excerpt(after.Text)))
	}
	return o
}}

func toolNames(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return strings.Join(names, ","), nil
}

func hasRow(rows []evidence.Span, kind, status string) bool {
	for _, r := range rows {
		if r.Kind == kind && r.Status == status {
			return true
		}
	}
	return false
}

func gateRow(rows []evidence.Span) (evidence.Span, bool) {
	for _, r := range rows {
		if r.Kind == mcplocal.KindGateDecision {
			return r, true
		}
	}
	return evidence.Span{}, false
}

// rankedByLLM: the LLM answered: its order, no notice, a clean gate_decision row.
func rankedByLLM(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	if !strings.Contains(o.Text, llmOrder) || strings.Contains(o.Text, "⚠") {
		return fmt.Errorf("begin_session did not answer in the LLM's order without a notice: %s", excerpt(o.Text))
	}
	if r, ok := gateRow(o.Spans); !ok || r.Degraded {
		return fmt.Errorf("gate_decision row missing or degraded: %+v", r)
	}
	return nil
}

// fallbackQuietly: no LLM configured: keyword/priority order, no notice.
func fallbackQuietly(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	if !strings.Contains(o.Text, fallbackOrder) || strings.Contains(o.Text, "⚠") {
		return fmt.Errorf("begin_session did not answer in fallback order without a notice: %s", excerpt(o.Text))
	}
	if r, ok := gateRow(o.Spans); !ok || r.Degraded {
		return fmt.Errorf("gate_decision row missing or degraded: %+v", r)
	}
	return nil
}

// fallbackWithNotice: promise 4 for the gate: bounded, fallback order, the
// notice, and the degraded gate_decision row.
func fallbackWithNotice(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	notice := "⚠ " + mcplocal.GateFeature + " unavailable ("
	switch {
	case !strings.Contains(o.Text, fallbackOrder):
		return fmt.Errorf("begin_session is not in fallback order: %s", excerpt(o.Text))
	case !strings.Contains(o.Text, notice) || !strings.Contains(o.Text, "[trace "+o.Trace+"]"):
		return fmt.Errorf("no %q notice quoting the trace code", notice)
	}
	r, ok := gateRow(o.Spans)
	switch {
	case !ok:
		return errors.New("no gate_decision row")
	case !r.Degraded || !strings.HasPrefix(r.Reason, mcplocal.GateFeature+" unavailable ("):
		return fmt.Errorf("gate_decision row not degraded with the reason: %+v", r)
	case r.Trace != o.Trace:
		return fmt.Errorf("gate_decision row code %q, request %q", r.Trace, o.Trace)
	}
	return nil
}
