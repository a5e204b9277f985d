// Package evidence is what the harness core knows of a proxy's own account
// of a request: spans a target's evidence adapter hands over, in neutral
// terms. The core (harness, catalogue runner, verdicts, report) speaks MCP
// and HTTP and observes the wire; a target that keeps its own record of
// each request (mcplocal's audit rows, trace codes) may offer an adapter
// that turns that record into Spans. Without one a report has no waterfall,
// and a scenario that needs the evidence is not applicable.
package evidence

import (
	"context"
	"time"
)

// The statuses a span may end with. Others are shown as they are.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusTimeout   = "timeout"
	StatusRefused   = "refused"
	StatusCancelled = "cancelled"
)

// Span is one step of one request, as the target's own evidence records it.
// An adapter gives a request's spans in tree order: each parent before its
// children, siblings by start, with Depth set.
type Span struct {
	// ID names the span; Parent the span it ran under ("" for a root).
	ID     string `json:"id,omitempty"`
	Parent string `json:"parent,omitempty"`
	// Depth is 0 for a root. Orphan marks a root whose Parent is not among
	// the request's spans.
	Depth  int  `json:"depth,omitempty"`
	Orphan bool `json:"orphan,omitempty"`
	// Kind is what the step was ("upstream_call"); Name its most specific
	// name (a tool, a server).
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	// Trace is the trace code the step was recorded under.
	Trace string `json:"trace,omitempty"`
	// Attrs are further things the evidence names of the step ("server":
	// "docmost"); those that repeat Name are not shown.
	Attrs    map[string]string `json:"attrs,omitempty"`
	Start    time.Time         `json:"start"`
	Duration time.Duration     `json:"durationNs"`
	Status   string            `json:"status,omitempty"`
	// Degraded marks a step that fell back; Reason says why.
	Degraded bool   `json:"degraded,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Detail is the step's own message (an error's text).
	Detail string `json:"detail,omitempty"`
}

// Failed reports whether the span did not end well.
func (s Span) Failed() bool { return s.Status != "" && s.Status != StatusOK }

// Adapter is the evidence a target may offer beyond the wire: its own
// account of each request, named by the trace code the answer carried.
type Adapter interface {
	// Spans are the steps of the request trace names, in tree order; an
	// error when the target could not be asked.
	Spans(ctx context.Context, trace string) ([]Span, error)
}
