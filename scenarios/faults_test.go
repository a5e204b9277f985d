package scenarios_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Faults come from the registry, strike when they say, and a scenario whose
// fault never struck proved nothing: it fails, saying so.
var _ = Describe("Faults from the registry", Label("faults"), func() {
	scenario := func(name string) catalogue.Scenario {
		for _, s := range catalogue.All() {
			if s.Name() == name {
				return s
			}
		}
		Fail("no scenario " + name)
		return catalogue.Scenario{}
	}

	It("fails a scenario whose midway fault never struck, against a real mcplocal process", func(ctx SpecContext) {
		kill, err := harness.ParseFault("proxy-kill")
		Expect(err).NotTo(HaveOccurred())
		s := scenario("none × small tools/call").WithFault(kill)
		t := &harness.Binary{Path: mcplocalPath, Stderr: GinkgoWriter}
		Expect(s.NotApplicable(t)).To(BeEmpty(), "a binary target can be killed")
		r := s.Run(ctx, t)
		Expect(r.Pass).To(BeFalse(), "a kill that never happened passed")
		Expect(r.Reason).To(ContainSubstring("[harness] the fault struck: fault proxy-kill (strikes midway) never struck"))
		Expect(r.Breaches).To(HaveLen(1), "the proxy answered the call well: only the harness's finding remains")
	}, SpecTimeout(time.Minute))

	It("runs the same midway fault where the operation strikes it, and it passes", func(ctx SpecContext) {
		kill, err := harness.ParseFault("proxy-kill")
		Expect(err).NotTo(HaveOccurred())
		s := scenario("proxy-restart × reconnect after restart").WithFault(kill)
		r := s.Run(ctx, &harness.Binary{Path: mcplocalPath, Stderr: GinkgoWriter})
		Expect(r.Pass).To(BeTrue(), r.Reason)
	}, SpecTimeout(time.Minute))

	It("makes a scenario whose fault the target cannot take not applicable, with the reason", func(ctx SpecContext) {
		kill, err := harness.ParseFault("proxy-kill")
		Expect(err).NotTo(HaveOccurred())
		r := scenario("proxy-restart × reconnect after restart").WithFault(kill).Run(ctx, &harness.InProcess{})
		Expect(r.NotApplicable).To(Equal("target inprocess lacks kill"))
	}, SpecTimeout(10*time.Second))
})
