package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// keptRows is a hung recording: the upstream call answered, the request
// never did (no root row).
func keptRows() []audit.Row {
	up := row(audit.KindUpstreamCall, "search", 0, 200*time.Millisecond, "ok")
	up.Server = "docmost"
	return []audit.Row{up}
}

// A kept scenario round-trips, and a replay that shows the pinned verdict
// passes while one that does not fails with the verdict it showed.
func TestAKeptReplayHoldsItsPinnedVerdict(t *testing.T) {
	b := planBundle(t, keptRows())
	p, err := PlanOf(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	p.ClientTimeout = 2 * time.Second
	k, err := Keep("seed-hang", b, p, Fixed)
	if err != nil {
		t.Fatal(err)
	}
	data, err := MarshalKept(k)
	if err != nil {
		t.Fatal(err)
	}
	if !IsKept(data) {
		t.Error("IsKept: a kept scenario not recognised")
	}
	back, err := UnmarshalKept(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != "seed-hang" || back.Expect != Fixed || back.Compress != 10 || back.ClientTimeoutMs != 2000 || back.Bundle.Trace != b.Trace {
		t.Errorf("round trip: %+v", back)
	}
	bp, err := back.Plan()
	if err != nil || bp.ClientTimeout != 2*time.Second || bp.Compress != 10 {
		t.Errorf("plan of the kept scenario: %+v, %v", bp, err)
	}
	// Fixed: the replay answered with a notice where the recording hung.
	root := degraded(row(audit.KindToolCallTrace, "docmost_search", 0, 100*time.Millisecond, "ok"), "LLM timeout")
	fixed := append([]audit.Row{root}, keptRows()...)
	if err := back.Judge(fixed); err != nil {
		t.Errorf("a fixed replay against a kept fix: %v", err)
	}
	// The hang is back: the kept scenario fails and says so.
	err = back.Judge(keptRows())
	if err == nil || !strings.Contains(err.Error(), "expects fixed, the replay is same") {
		t.Errorf("the recorded hang replayed again against a kept fix: %v, want a failure naming both verdicts", err)
	}
}

// What cannot be kept is refused with a reason: a `changed` verdict, a bad
// name, a document that is not one, a bundle of another format.
func TestAKeptScenarioRefusesWhatCannotBeKept(t *testing.T) {
	b := planBundle(t, keptRows())
	p, err := PlanOf(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.ClientTimeout = time.Second
	if _, err := Keep("x", b, p, Changed); err == nil || !strings.Contains(err.Error(), "this replay's is changed") {
		t.Errorf("keeping a changed verdict: %v", err)
	}
	if _, err := Keep("Bad Name", b, p, Same); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("keeping under a bad name: %v", err)
	}
	if _, err := UnmarshalKept([]byte(`{"format":1}`)); err == nil {
		t.Error("a kept scenario without a bundle was read")
	}
	if IsKept([]byte(`{"format":1,"trace":"7K3M9QXZ","rows":[]}`)) {
		t.Error("a bare bundle taken for a kept scenario")
	}
	k, err := Keep("ok", b, p, Same)
	if err != nil {
		t.Fatal(err)
	}
	k.Bundle.Format = 99
	if _, err := MarshalKept(k); err == nil || !strings.Contains(err.Error(), "bundle's format") {
		t.Errorf("a kept scenario over a bundle of format 99: %v", err)
	}
}
