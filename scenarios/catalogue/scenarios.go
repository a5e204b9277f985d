package catalogue

import (
	"errors"
	"fmt"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// All returns the catalogue, in a stable order.
func All() []Scenario {
	var out []Scenario
	// The baseline: every operation answers, with a trace code.
	for _, op := range []Operation{ListTools, SmallCall, PaginatingCall} {
		out = append(out, Scenario{Fault: harness.None{}, Operation: op, Promise: "1 answered, 6 trace code",
			Labels: []string{"baseline"}, Budget: requestDeadline, Expect: answeredOK})
	}
	// Slow but healthy links still answer.
	for _, op := range []Operation{SmallCall, PaginatingCall} {
		out = append(out, Scenario{Fault: harness.Latency{Ms: 100}, Operation: op, Promise: "1 answered",
			Labels: []string{"network"}, Budget: requestDeadline, Expect: answeredOK})
	}
	// An upstream that never answers, or is gone: answered within the
	// deadline with a readable isError result that quotes the trace code.
	for _, f := range []harness.Fault{harness.Blackhole{}, harness.LinkDown{}} {
		for _, op := range []Operation{SmallCall, PaginatingCall} {
			out = append(out, Scenario{Fault: f, Operation: op, Promise: "1 answered within budget",
				Labels: []string{"network", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery})
		}
	}
	out = append(out,
		Scenario{Fault: harness.ToolHang{Tool: "search"}, Operation: PaginatingCall, Promise: "1 answered within budget",
			Labels: []string{"upstream", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.ToolHang{Tool: "update_page"}, Operation: SmallCall, Promise: "1 answered within budget",
			Labels: []string{"upstream", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.ToolError{Tool: "search"}, Operation: PaginatingCall, Promise: "1 answered",
			Labels: []string{"upstream"}, Budget: requestDeadline, Expect: isErrorPassedThrough},
		Scenario{Fault: harness.HandlerPanic{Tool: "docmost_update_page"}, Operation: SmallCall, Promise: "1 a panic still answers",
			Labels: []string{"proxy", "panic"}, Budget: requestDeadline, Expect: answeredWithRecovery},
	)
	// Sessions: a restart loses every session; the client's next call still
	// works on its old id, says so once, and the audit trail keeps the user.
	users := harness.EnvOptions{Users: map[string]string{"alice": "alice-token"}}
	out = append(out,
		Scenario{Fault: harness.ProxyRestart{}, Operation: Reconnect, Promise: "2 stale session recreated",
			Labels: []string{"sessions", "restart"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered},
		Scenario{Fault: harness.ProxyKill{}, Operation: Reconnect, Promise: "2 stale session recreated",
			Labels: []string{"sessions", "restart", "kill"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered, Needs: needsKiller},
		Scenario{Fault: harness.None{}, Operation: DeleteEmptyJSON, Promise: "3 DELETE closes, 2 deleted id not adopted",
			Labels: []string{"sessions", "delete"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered},
	)
	return out
}

// isErrorPassedThrough: the upstream's own isError result reaches the client
// with the proxy's trace code in _meta.
func isErrorPassedThrough(o Observation) error {
	switch {
	case o.Err != nil:
		return fmt.Errorf("not answered: %v", o.Err)
	case !o.IsError:
		return errors.New("the upstream's isError result arrived as a success")
	case !trace.Valid(o.Trace):
		return fmt.Errorf("result carries no trace code in _meta (got %q)", o.Trace)
	}
	return nil
}
