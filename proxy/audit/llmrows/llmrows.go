// Package llmrows turns the provider attempts of one LLM call into
// llm_attempt audit rows. It is its own package so that every writer of such
// rows (stages, the gate, chat) shares one mapping without importing one
// another, and so that proxy/audit stays free of the LLM adapter.
package llmrows

import (
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// FromAttempts turns provider attempts into llm_attempt rows under parent's
// span (parent is the stage, gate or chat row they belong to). The rows keep
// parent's correlation, session, user, project and tool; each gets a span of
// its own, starts where the previous attempt ended (the first at start), and
// is never marked degraded: degradation belongs to the operation, not to an
// attempt.
func FromAttempts(parent audit.Row, start time.Time, attempts []llm.Attempt) []audit.Row {
	rows := make([]audit.Row, 0, len(attempts))
	at := start
	for _, a := range attempts {
		row := parent
		row.Kind, row.SpanID, row.ParentID = audit.KindLLMAttempt, trace.NewSpanID(), parent.SpanID
		row.Server, row.Stage = a.Provider, ""
		row.Start, row.Duration = at, a.Duration
		row.Degraded, row.DegradedReason = false, ""
		row.Status = Status(a.Outcome)
		row.Detail = a.String()
		rows = append(rows, row)
		at = at.Add(a.Duration)
	}
	return rows
}

// Status is the audit status of an attempt that ended with outcome: ok,
// timeout (its own cap or the call's budget ran out), cancelled, or error.
func Status(outcome llm.Outcome) string {
	switch outcome {
	case llm.OutcomeOK:
		return audit.StatusOK
	case llm.OutcomeTimeout, llm.OutcomeBudget:
		return audit.StatusTimeout
	case llm.OutcomeCanceled:
		return audit.StatusCancelled
	default:
		return audit.StatusError
	}
}
