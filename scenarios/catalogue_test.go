package scenarios_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// targets are the places the catalogue runs the proxy under test.
var targets = []struct {
	name string
	make func() harness.Target
}{
	{"inprocess", func() harness.Target { return &harness.InProcess{} }},
	{"binary", func() harness.Target { return &harness.Binary{Path: mcplocalPath, Stderr: GinkgoWriter} }},
}

// The fault catalogue, one spec per scenario and target. The scenarios live
// once, in scenarios/catalogue; `mcpchaos run` executes the same values.
// A scenario a target cannot run gets no spec here (it is reported as not
// applicable by `mcpchaos run`).
var _ = Describe("The fault catalogue", Label("catalogue"), func() {
	for _, t := range targets {
		Context("against the "+t.name+" target", Label(t.name), func() {
			for _, s := range catalogue.All() {
				if s.NotApplicable(t.make()) != "" {
					continue
				}
				It(s.Name()+" holds promise "+s.Promise, Label(s.Labels...), func(ctx SpecContext) {
					DeferCleanup(checkNoLeaks())
					r := s.Run(ctx, t.make())
					AddReportEntry("observed", fmt.Sprintf("latency=%v budget=%v trace=%s", r.Latency, r.Budget, r.Trace))
					Expect(r.NotApplicable).To(BeEmpty())
					Expect(r.Pass).To(BeTrue(), "%s: %s (%s)", s.Name(), r.Reason, strings.TrimSpace(s.Fault.Params()))
				}, SpecTimeout(30*time.Second))
			}
		})
	}
})
