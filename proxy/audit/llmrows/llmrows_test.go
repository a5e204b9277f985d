package llmrows

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// TestAttemptsBecomeChildRowsInSequence: one row per attempt, under the
// parent's span, keeping who and what the request was, laid end to end in
// time, with the status each outcome means and the attempt's account.
func TestAttemptsBecomeChildRowsInSequence(t *testing.T) {
	start := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	parent := audit.Row{
		Kind: audit.KindStageExecution, CorrelationID: "ABCDEFGH", SpanID: "stage-span", ParentID: "pipe-span",
		SessionID: "s1", User: "alice", Project: "docmost", Server: "docmost", Tool: "docmost_search", Stage: "paginate",
		Start: start.Add(-time.Second), Duration: time.Minute, Status: audit.StatusOK,
		Degraded: true, DegradedReason: "timeout", Detail: "14 kB in 4 pages",
	}
	attempts := []llm.Attempt{
		{Provider: "vllm", Model: "qwen", Outcome: llm.OutcomeStatus, Status: 500, Duration: 30 * time.Millisecond},
		{Provider: "claude", Model: "sonnet", Outcome: llm.OutcomeTimeout, Duration: 50 * time.Millisecond},
		{Provider: "third", Model: "m", Outcome: llm.OutcomeOK, Duration: 20 * time.Millisecond},
	}
	rows := FromAttempts(parent, start, attempts)
	if len(rows) != len(attempts) {
		t.Fatalf("%d rows for %d attempts", len(rows), len(attempts))
	}
	wantStatus := []string{audit.StatusError, audit.StatusTimeout, audit.StatusOK}
	wantStart := []time.Time{start, start.Add(30 * time.Millisecond), start.Add(80 * time.Millisecond)}
	spans := map[string]bool{}
	for i, r := range rows {
		a := attempts[i]
		if r.Kind != audit.KindLLMAttempt || r.ParentID != parent.SpanID || r.SpanID == "" || r.SpanID == parent.SpanID || spans[r.SpanID] {
			t.Errorf("row %d: kind %q span %q parent %q: want an llm_attempt row with a fresh span under %q", i, r.Kind, r.SpanID, r.ParentID, parent.SpanID)
		}
		spans[r.SpanID] = true
		if r.CorrelationID != parent.CorrelationID || r.SessionID != parent.SessionID || r.User != parent.User ||
			r.Project != parent.Project || r.Tool != parent.Tool {
			t.Errorf("row %d lost the request's identity: %+v", i, r)
		}
		if r.Server != a.Provider || r.Stage != "" || r.Detail != a.String() {
			t.Errorf("row %d: server %q stage %q detail %q; want provider %q, no stage, detail %q", i, r.Server, r.Stage, r.Detail, a.Provider, a.String())
		}
		if !r.Start.Equal(wantStart[i]) || r.Duration != a.Duration {
			t.Errorf("row %d: start %v duration %v; want %v, %v", i, r.Start, r.Duration, wantStart[i], a.Duration)
		}
		if r.Status != wantStatus[i] || r.Degraded || r.DegradedReason != "" {
			t.Errorf("row %d: status %q degraded %v (%q); want %q, not degraded", i, r.Status, r.Degraded, r.DegradedReason, wantStatus[i])
		}
	}
}

// TestStatusOfEveryOutcome: the call's budget running out is a timeout like
// the attempt's own cap; a cancel is cancelled; anything else is an error.
func TestStatusOfEveryOutcome(t *testing.T) {
	for outcome, want := range map[llm.Outcome]string{
		llm.OutcomeOK: audit.StatusOK, llm.OutcomeTimeout: audit.StatusTimeout, llm.OutcomeBudget: audit.StatusTimeout,
		llm.OutcomeCanceled: audit.StatusCancelled, llm.OutcomeTransport: audit.StatusError, llm.OutcomeStatus: audit.StatusError,
		llm.OutcomeEmpty: audit.StatusError, llm.OutcomeInvalid: audit.StatusError, llm.OutcomeUnresolved: audit.StatusError,
	} {
		if got := Status(outcome); got != want {
			t.Errorf("outcome %q: status %q, want %q", outcome, got, want)
		}
	}
}

// TestNoAttemptsNoRows: a call that made no attempt (no LLM configured, or
// cancelled before it began) writes nothing.
func TestNoAttemptsNoRows(t *testing.T) {
	if rows := FromAttempts(audit.Row{SpanID: "p"}, time.Now(), nil); len(rows) != 0 {
		t.Fatalf("rows for no attempts: %+v", rows)
	}
}
