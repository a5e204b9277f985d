package catalogue

import (
	"context"
	"embed"
	"fmt"
	"path"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/replay"
)

// keptFiles are the replays kept as scenarios (`mcpchaos replay FILE
// --as-scenario scenarios/catalogue/kept/NAME.json`): each a recorded
// request pinned to the verdict its replay showed when it was kept.
//
//go:embed kept/*.json
var keptFiles embed.FS

// PromiseKept is the promise of a kept replay: the recorded request, played
// back, shows the verdict it was kept with.
const PromiseKept = "a kept replay keeps its verdict"

// Kept is a scenario for every kept replay: its world is the recording's
// (knobs, pipeline, gate, the fakes playing each recorded answer back), its
// operation sends the recorded call, and it passes when the replay shows
// the pinned verdict. A kept file that cannot be read is a row that fails
// and says why, never a row that vanishes.
func Kept() []Scenario {
	names, err := keptFiles.ReadDir("kept")
	if err != nil {
		return []Scenario{unreadableKept("kept", err)}
	}
	var out []Scenario
	for _, n := range names {
		file := path.Join("kept", n.Name())
		data, err := keptFiles.ReadFile(file)
		if err != nil {
			out = append(out, unreadableKept(file, err))
			continue
		}
		k, err := replay.UnmarshalKept(data)
		if err != nil {
			out = append(out, unreadableKept(file, err))
			continue
		}
		out = append(out, keptScenario(k))
	}
	return out
}

func keptScenario(k replay.Kept) Scenario {
	p, _ := k.Plan() // UnmarshalKept made one already
	op := Operation{Name: fmt.Sprintf("kept replay %s (trace %s, expects %s)", k.Name, k.Bundle.Trace, k.Expect),
		Do: func(ctx context.Context, env *harness.Env) Observation {
			res, err := replay.Play(ctx, p, env)
			o := Observation{Latency: res.Latency, Trace: res.Trace, Text: res.Text, IsError: res.IsError, Spans: mcplocal.Spans(res.Rows)}
			if err != nil {
				o.Err = err
				return o
			}
			if !res.Answered {
				o.Err = context.DeadlineExceeded
			}
			if err := k.Judge(res.Rows); err != nil {
				o.Broken = append(o.Broken, err.Error())
			}
			return o
		}}
	return Scenario{Fault: harness.None{}, Operation: op, Promise: "1 answered, " + PromiseKept,
		Labels: []string{"replay"}, Env: p.Env, Budget: requestDeadline, Expect: keptAnswered,
		Claims: []string{harness.CapAuditAPI}}
}

// keptAnswered: the replayed call was answered; the kept verdict is judged
// by the operation itself.
func keptAnswered(o Observation) error { return unanswered(o) }

// unreadableKept is the row of a kept file that cannot be read: it fails on
// every target that could run a kept replay, naming the file.
func unreadableKept(file string, err error) Scenario {
	op := Operation{Name: "kept replay " + file + " (unreadable)", Do: func(context.Context, *harness.Env) Observation {
		return Observation{Broken: []string{fmt.Sprintf("%s: %v", file, err)}}
	}}
	return Scenario{Fault: harness.None{}, Operation: op, Promise: PromiseKept,
		Labels: []string{"replay"}, Budget: requestDeadline, Expect: keptAnswered, Claims: []string{harness.CapAuditAPI}}
}
