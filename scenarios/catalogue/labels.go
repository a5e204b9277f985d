package catalogue

import (
	"fmt"
	"slices"
	"strings"
)

// Labels is every label a scenario may carry, frozen: a new label is added
// here and to docs/scenarios.md's catalogue families, or the catalogue's
// tests fail. `mcpchaos run --label` and mutant checks select by
// these; a typo there is an error, not an empty run.
var Labels = []string{
	"audit-api", "baseline", "bounded-io", "caps", "deadline", "delete", "failover", "gate", "hang", "idle",
	"ids", "kill", "knob", "llm", "network", "no-llm", "origin", "ownership", "paginate", "panic", "proxy",
	"restart", "secrets", "security", "seeded", "sessions", "shape", "shutdown", "slow-client", "stages", "summarize", "surface",
	"ttl", "upstream",
	"config", "failpoints", "projects", "readyz", "shared-token",
	"routing", "reading", "batch", "names", "refusals", "auth",
	"replay",
}

// CheckLabel says what is wrong with label l ("" when it is one of Labels).
func CheckLabel(l string) error {
	if slices.Contains(Labels, l) {
		return nil
	}
	return fmt.Errorf("unknown label %q (labels: %s)", l, strings.Join(Labels, ", "))
}
