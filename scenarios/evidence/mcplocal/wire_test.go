package mcplocal

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// TestSmokeWireContractMatchesTheProxy: smoke writes the trace-code contract
// down on its own (it must not import the proxy), and the harness core reads
// answers by it; it must agree with the proxy's.
func TestSmokeWireContractMatchesTheProxy(t *testing.T) {
	if smoke.TraceMetaKey != trace.MetaKey {
		t.Fatalf("smoke looks for _meta.%s, the proxy writes _meta.%s", smoke.TraceMetaKey, trace.MetaKey)
	}
	samples := []string{"", "9Q77WKZW", "9q77wkzw", "9Q77WKZ", "9Q77WKZWX", "ILOU0000", "0000000U", "ZZZZZZZZ", "AB-DEFGH"}
	for i := 0; i < 200; i++ {
		samples = append(samples, trace.New())
	}
	for _, s := range samples {
		if smoke.ValidTraceCode(s) != trace.Valid(s) {
			t.Errorf("%q: smoke says valid=%v, the proxy says %v", s, smoke.ValidTraceCode(s), trace.Valid(s))
		}
	}
}
