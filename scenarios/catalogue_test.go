package scenarios_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The fault catalogue, one spec per scenario. The scenarios live once, in
// scenarios/catalogue; `mcpchaos run` executes the same values.
var _ = Describe("The fault catalogue", Label("catalogue"), func() {
	for _, s := range catalogue.All() {
		It(s.Name()+" holds promise "+s.Promise, Label(s.Labels...), func(ctx SpecContext) {
			target := &harness.InProcess{}
			DeferCleanup(checkNoLeaks())
			r := s.Run(ctx, target)
			AddReportEntry("observed", fmt.Sprintf("latency=%v budget=%v trace=%s", r.Latency, r.Budget, r.Trace))
			Expect(r.Pass).To(BeTrue(), "%s: %s (%s)", s.Name(), r.Reason, strings.TrimSpace(s.Fault.Params()))
		})
	}
})
