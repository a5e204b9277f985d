package catalogue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// mcplocal keeps every promise of the catalogue, so every operation, run
// once in process in each of its worlds (on the first row that runs it
// there), passes: an operation that sees a promise broken where none is
// fails a proxy for nothing. (The surface and security operations are held
// to it with their stalls, by
// TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter.)
func TestMcplocalInProcessPassesEveryOperation(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if s.HasLabel("surface") || s.HasLabel("security") {
			continue
		}
		_, op, _ := strings.Cut(s.Name(), " × ") // the operation in its world
		if seen[op] || s.NotApplicable(&harness.InProcess{}) != "" {
			continue
		}
		seen[op] = true
		t.Run(s.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if r := s.Run(ctx, &harness.InProcess{}); !r.Pass {
				t.Errorf("mcplocal in process failed the row: %s", r.Reason)
			}
		})
	}
	if len(seen) < 20 {
		t.Fatalf("only %d operations run in process", len(seen))
	}
}
