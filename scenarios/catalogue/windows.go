package catalogue

import (
	"fmt"
	"strings"
	"time"
)

// A compressed window is a knob set short so a scenario can wait it out,
// while the scenario relies on it outlasting an action it spans (a restart,
// a call). A window shorter than that action breaks the scenario by
// construction, on whichever target is slowest: the proxy is then blamed
// for the harness's arithmetic. So each window is declared here with the
// action it spans; TestCompressedWindowsOutlastWhatTheySpan holds every
// window to the slowest that action was measured on each target (times
// LoadFactor), and the scenario measures the action again as it runs
// (Outlasts) and reports a window it outran as a test defect.

// Window is one compressed knob value and the action it must outlast.
type Window struct {
	Knob   string        // the knob's variable
	Value  time.Duration // its compressed value in the scenario
	Spans  string        // the action the window must outlast (a key of Slowest)
	Where  string        // the scenario that relies on it
	Reason string        // why the window spans the action
}

// Windows are the compressed windows that span an action.
var Windows = []Window{
	{Knob: "MCPCTL_SESSION_RECORD_TTL_MS", Value: recordTTLForScenario, Spans: ActionRestart, Where: TombstoneExpiry.Name,
		Reason: "the session opened inside the TTL must still be remembered when the restarted proxy prunes the records at start-up"},
	{Knob: "MCPCTL_SESSION_IDLE_MS", Value: idleForScenario, Spans: ActionCall, Where: IdleExpiry.Name,
		Reason: "a session in the middle of a call must never be mistaken for an idle one"},
}

// The actions compressed windows span.
const (
	// ActionRestart is the proxy stopped and started again, until it is ready.
	ActionRestart = "restart"
	// ActionCall is one tools/call answered through the proxy.
	ActionCall = "call"
)

// Slowest is the slowest each action was measured on each target kind
// (quiet machine, 2 cores): the in-process proxy, the mcplocal binary and
// mcplocal in a container. Raise a figure when a run measures a slower one
// (Outlasts says so); never lower a window under it.
var Slowest = map[string]map[string]time.Duration{
	ActionRestart: {"inprocess": 100 * time.Millisecond, "binary": 300 * time.Millisecond, "container": 440 * time.Millisecond},
	ActionCall:    {"inprocess": 20 * time.Millisecond, "binary": 30 * time.Millisecond, "container": 40 * time.Millisecond},
}

// LoadFactor is how much slower than Slowest an action may run on a busy
// machine (a load of 4 per core) and still fit its window.
const LoadFactor = 3

// TargetKind is the kind of a target name ("binary:/path" is "binary").
func TargetKind(name string) string {
	kind, _, _ := strings.Cut(name, ":")
	return kind
}

// Outlasts reports, as a test defect, that the compressed window of knob
// (value window) was outrun by the action it spans, which took took here:
// the scenario cannot judge the proxy then. nil when the window outlasted
// the action.
func Outlasts(knob string, window time.Duration, action string, took time.Duration) error {
	if took < window {
		return nil
	}
	return fmt.Errorf("test defect, not the proxy's: the compressed %s=%v window spans the %s, which took %v here: "+
		"a window must outlast the slowest action it spans (catalogue.Windows, catalogue.Slowest)", knob, window, action, took.Round(time.Millisecond))
}
