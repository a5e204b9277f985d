package scenarios_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// A second proxy implementation, described only by a foreign target spec: the
// proxy built with a known regression. The catalogue reports the promise it
// breaks, and holds it to the others.
var _ = Describe(foreignMutantDescribe, Label("foreign"), Ordered, func() {
	var spec *harness.ForeignSpec

	BeforeAll(func() {
		// The mutant's mcplocal is built before any spec runs (prebuild_test.go).
		Expect(prebuiltOnce.ForeignErr).To(BeEmpty(), "building mcplocal with mutant "+foreignMutant)
		Expect(prebuiltOnce.Foreign).NotTo(BeEmpty(), "the mutant was not built: this run's label filter did not select the foreign specs")
		var err error
		spec, err = harness.ParseForeign([]byte(fmt.Sprintf(`name: mcplocal-delete-empty-json-rejected
command: [%q, "serve", "--config", "{{.ConfigFile}}", "--listen", "{{.Listen}}"]
passKnobs: true
capabilities: [auditAPI, sessionAdoption]
`, prebuiltOnce.Foreign)))
		Expect(err).NotTo(HaveOccurred())
	})

	byName := func(name string) catalogue.Scenario {
		for _, s := range catalogue.All() {
			if s.Name() == name {
				return s
			}
		}
		Fail("no scenario " + name)
		return catalogue.Scenario{}
	}

	It(foreignMutantSpecs[0], func(ctx SpecContext) {
		DeferCleanup(checkNoLeaks())
		r := byName("none × DELETE with empty JSON body").Run(ctx, spec.Target(GinkgoWriter))
		Expect(r.NotApplicable).To(BeEmpty())
		Expect(r.Pass).To(BeFalse(), "the mutant rejects DELETE with an empty JSON body")
		Expect(r.Reason).To(ContainSubstring("DELETE with an empty JSON body answered 400"))
	}, SpecTimeout(specTimeout))

	It(foreignMutantSpecs[1], func(ctx SpecContext) {
		DeferCleanup(checkNoLeaks())
		r := byName("none × small tools/call").Run(ctx, spec.Target(GinkgoWriter))
		Expect(r.Pass).To(BeTrue(), r.Reason)
	}, SpecTimeout(specTimeout))

	It(foreignMutantSpecs[2], func(ctx SpecContext) {
		r := byName("none × begin_session").Run(ctx, spec.Target(GinkgoWriter))
		Expect(r.Pass).To(BeFalse(), "not applicable is never counted as passed")
		Expect(r.NotApplicable).To(And(ContainSubstring("foreign:mcplocal-delete-empty-json-rejected"), ContainSubstring("gate")))
		Expect(strings.Contains(r.NotApplicable, "lacks")).To(BeTrue())
	}, SpecTimeout(specTimeout))
})
