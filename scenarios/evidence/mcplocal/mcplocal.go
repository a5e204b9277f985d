// Package mcplocal is mcplocal's adapter: the one place where the harness
// meets mcplocal's own types. As evidence, it turns the proxy's audit rows
// (one request's, by trace code) into the harness core's target-neutral
// spans and reads its audit API, session store and instance health; as
// control, it makes mcplocal's configuration from a world (config.go),
// turns bounds into knobs and back (knobs.go), and runs the proxy in this
// process with a stallable audit store and the spec's failpoints, or a
// cluster's PostgreSQL (inprocess.go). The core (harness, catalogue runner,
// verdicts, report) imports nothing under proxy/.
package mcplocal

import (
	"cmp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/waterfall"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
)

// The attributes of mcplocal's spans (evidence.Span.Attrs): an audit row's
// server, tool, stage and the user it was recorded for.
const (
	AttrServer = "server"
	AttrTool   = "tool"
	AttrStage  = "stage"
	AttrUser   = "user"
)

// The kinds and statuses of mcplocal's audit rows, as spans carry them.
const (
	KindToolCall     = string(audit.KindToolCallTrace)
	KindUpstreamCall = string(audit.KindUpstreamCall)
	KindStage        = string(audit.KindStageExecution)
	KindGateDecision = string(audit.KindGateDecision)
	KindLLMAttempt   = string(audit.KindLLMAttempt)
	KindRecreated    = string(audit.KindSessionRecreated)
)

// The names mcplocal's ⚠ notices and degraded rows give its LLM features,
// and the tool its prompt-selection gate opens a session with.
const (
	TitlesFeature    = stage.TitlesFeature
	SummariesFeature = stage.SummariesFeature
	GateFeature      = gate.Feature
	BeginSession     = gate.BeginSession
)

// Spans turns one request's audit rows into spans, in the order mcplocal's
// own waterfall shows them (a parent before its children, children by
// start); nil when there are no rows.
func Spans(rows []audit.Row) []evidence.Span {
	if len(rows) == 0 {
		return nil
	}
	tree, order := waterfall.Tree(rows)
	out := make([]evidence.Span, 0, len(order))
	for _, i := range order {
		t := tree[i]
		r := t.Row
		s := evidence.Span{
			ID: r.SpanID, Parent: r.ParentID, Depth: t.Depth, Orphan: t.OrphanOf != "", Trace: r.CorrelationID,
			Kind: string(r.Kind), Name: cmp.Or(r.Stage, r.Tool, r.Server),
			Start: r.Start, Duration: r.Duration, Status: r.Status,
			Degraded: r.Degraded, Reason: r.DegradedReason, Detail: r.Detail,
		}
		for k, v := range map[string]string{AttrServer: r.Server, AttrTool: r.Tool, AttrStage: r.Stage, AttrUser: r.User} {
			if v != "" {
				if s.Attrs == nil {
					s.Attrs = map[string]string{}
				}
				s.Attrs[k] = v
			}
		}
		out = append(out, s)
	}
	return out
}
