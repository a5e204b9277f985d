package bench

import (
	"fmt"
	"strings"
)

// The names of the reference targets a run may hold.
const (
	// Direct is the upstream called directly.
	Direct = "direct"
	// Floor is a plain reverse proxy in front of the same upstream (package
	// fakes/floor): what any proxy costs at the least.
	Floor = "floor"
)

// Overhead is one target against a base target at one concurrency.
type Overhead struct {
	Target   string `json:"target"`
	Base     string `json:"base"`
	Sessions int    `json:"sessions"`
	// AddedP50Ms is the target's median minus the base's.
	AddedP50Ms float64 `json:"addedP50Ms"`
	// ReqPerSecRatio is the target's throughput over the base's; 0 when the
	// base has none.
	ReqPerSecRatio float64 `json:"reqPerSecRatio"`
	// P99Ratio is the target's p99 over the base's; 0 when the base has none.
	P99Ratio float64 `json:"p99Ratio"`
}

// Against compares the target named target with the one named base at
// every concurrency both were measured at; nil when either is missing.
func Against(rep *Report, target, base string) []Overhead {
	t, b := find(rep, target), find(rep, base)
	if t == nil || b == nil {
		return nil
	}
	var out []Overhead
	for _, l := range t.Latency {
		for _, bl := range b.Latency {
			if bl.Sessions == l.Sessions {
				out = append(out, overhead(target, base, l, bl))
			}
		}
	}
	return out
}

func overhead(target, base string, l, b Latency) Overhead {
	o := Overhead{Target: target, Base: base, Sessions: l.Sessions, AddedP50Ms: l.P50Ms - b.P50Ms}
	if b.ReqPerSec > 0 {
		o.ReqPerSecRatio = l.ReqPerSec / b.ReqPerSec
	}
	if b.P99Ms > 0 {
		o.P99Ratio = l.P99Ms / b.P99Ms
	}
	return o
}

func find(rep *Report, name string) *TargetReport {
	for i := range rep.Targets {
		if rep.Targets[i].Target.Name == name {
			return &rep.Targets[i]
		}
	}
	return nil
}

// Goal is what a proxy may cost over the floor at one concurrency; a zero
// bound is not part of the goal.
type Goal struct {
	Sessions          int
	MaxAddedP50Ms     float64
	MinReqPerSecRatio float64
	MaxP99Ratio       float64
}

// FloorGoals are mcplocal's performance targets, against the floor in one
// run: at one session at most 0.1 ms added to the median; at 64 sessions at
// least 95 % of the floor's throughput and a p99 at most 1.1 × the floor's.
var FloorGoals = []Goal{
	{Sessions: 1, MaxAddedP50Ms: 0.1},
	{Sessions: 64, MinReqPerSecRatio: 0.95, MaxP99Ratio: 1.1},
}

// slack absorbs float rounding, so that a figure exactly at a bound meets it
// (figures are whole microseconds; 1.3 - 1.2 is 0.10000000000000009).
const slack = 1e-9

// Judge says whether o meets the goal for its concurrency: "" when no goal
// names that concurrency, else "met" or "missed: " and each bound missed.
func Judge(o Overhead, goals []Goal) string {
	for _, g := range goals {
		if g.Sessions != o.Sessions {
			continue
		}
		var missed []string
		if g.MaxAddedP50Ms > 0 && o.AddedP50Ms > g.MaxAddedP50Ms+slack {
			missed = append(missed, fmt.Sprintf("added p50 > %.2f ms", g.MaxAddedP50Ms))
		}
		if g.MinReqPerSecRatio > 0 && o.ReqPerSecRatio < g.MinReqPerSecRatio-slack {
			missed = append(missed, fmt.Sprintf("req/s < %.0f%%", 100*g.MinReqPerSecRatio))
		}
		if g.MaxP99Ratio > 0 && (o.P99Ratio == 0 || o.P99Ratio > g.MaxP99Ratio+slack) {
			missed = append(missed, fmt.Sprintf("p99 > %.2f×", g.MaxP99Ratio))
		}
		if len(missed) == 0 {
			return "met"
		}
		return "missed: " + strings.Join(missed, ", ")
	}
	return ""
}

// Judged is an Overhead with its goal's verdict ("" when no goal names its
// concurrency).
type Judged struct {
	Overhead
	Goal string `json:"goal,omitempty"`
}

// judgeAgainstFloor compares every target but direct and the floor with the
// floor, and judges each comparison by FloorGoals.
func judgeAgainstFloor(rep *Report) []Judged {
	var out []Judged
	for _, tr := range rep.Targets {
		if tr.Target.Name == Direct || tr.Target.Name == Floor {
			continue
		}
		for _, o := range Against(rep, tr.Target.Name, Floor) {
			out = append(out, Judged{Overhead: o, Goal: Judge(o, FloorGoals)})
		}
	}
	return out
}
