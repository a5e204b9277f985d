package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
)

// Record is one scenario's outcome as plain data: what `mcpchaos run --json`
// writes, and what the canary compares between two runs. Records from other
// sources (a Ginkgo spec) carry no budget, trace or spans.
type Record struct {
	Name   string `json:"name"`
	Source string `json:"source"` // "catalogue" or "ginkgo"
	// Verdict is PASS, FAIL or N/A.
	Verdict string        `json:"verdict"`
	Latency time.Duration `json:"latencyNs"`
	Budget  time.Duration `json:"budgetNs,omitempty"`
	// BudgetNote says the budget was assumed, not declared by the target.
	BudgetNote string   `json:"budgetNote,omitempty"`
	Promise    string   `json:"promise,omitempty"`
	Labels     []string `json:"labels,omitempty"`
	Trace      string   `json:"trace,omitempty"`
	// Reason says why it failed, or why it did not apply.
	Reason string `json:"reason,omitempty"`
	// Broken names every promise a failed scenario broke, "tier:promise"
	// (catalogue.Breach), in order.
	Broken []string `json:"broken,omitempty"`
	// Spans are the request's steps as the target's evidence adapter tells
	// them (none without an adapter).
	Spans []evidence.Span `json:"spans,omitempty"`
	// Draws are what the world's random plans drew (catalogue.Result.Draws):
	// the same --seed gives the same draws.
	Draws []string `json:"draws,omitempty"`
}

// Passed reports a PASS.
func (r *Record) Passed() bool { return r != nil && r.Verdict == string(verdictPass) }

// Records is a run's results as records, in run order.
func Records(run Run) []Record {
	out := make([]Record, 0, len(run.Results))
	for _, r := range run.Results {
		rec := Record{
			Name: scenarioName(r.Scenario), Source: "catalogue", Verdict: string(verdictOf(r)),
			Latency: r.Latency, Budget: r.Budget, Promise: r.Scenario.Promise, Labels: r.Scenario.Labels,
			Trace: r.Trace, Spans: r.Spans, Draws: r.Draws, BudgetNote: r.BudgetNote,
		}
		switch verdictOf(r) {
		case verdictNA:
			rec.Reason = r.NotApplicable
		case verdictFail:
			rec.Reason = failureText(r)
			for _, b := range r.Breaches {
				rec.Broken = append(rec.Broken, string(b.Tier)+":"+b.Promise)
			}
		}
		out = append(out, rec)
	}
	return out
}

// WriteJSON writes the run's records as a JSON array to path.
func WriteJSON(path string, run Run) error {
	b, err := json.MarshalIndent(Records(run), "", " ")
	if err != nil {
		return fmt.Errorf("report: json: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// ReadJSON reads records written by WriteJSON.
func ReadJSON(r io.Reader) ([]Record, error) {
	var out []Record
	if err := json.NewDecoder(r).Decode(&out); err != nil {
		return nil, fmt.Errorf("report: reading records: %w", err)
	}
	return out, nil
}
