package catalogue

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

func TestScenarioNamesAreUniqueAndComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name()] {
			t.Errorf("two scenarios are named %q", s.Name())
		}
		seen[s.Name()] = true
		if s.Expect == nil || s.Budget == nil || s.Operation.Do == nil || s.Promise == "" || len(s.Labels) == 0 {
			t.Errorf("%s: incomplete (every scenario needs an operation, a budget, an expectation, a promise and labels)", s.Name())
		}
	}
}

func TestJudgeFailsLateAndBrokenAnswers(t *testing.T) {
	s := All()[0]
	kv := knobs.Defaults()
	late := Observation{Latency: s.Budget(kv) + Tolerance + 1, Trace: "ABCDEFGH"}
	if r := s.Judge(kv, late); r.Pass {
		t.Error("an answer past budget + tolerance passed")
	}
	broken := Observation{Trace: "ABCDEFGH", Broken: []string{"notice missing"}}
	if r := s.Judge(kv, broken); r.Pass || r.Reason != "notice missing" {
		t.Errorf("a broken promise passed: %+v", r)
	}
	if r := s.Judge(kv, Observation{Trace: "ABCDEFGH"}); !r.Pass {
		t.Errorf("a good answer failed: %s", r.Reason)
	}
}
