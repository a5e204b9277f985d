package scenarios_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	scenreport "github.com/mcpchaos/mcpchaos/scenarios/report"
)

// The example proxy shapes of scenarios/testdata/shapes, each a target spec
// a user could have written: mcplocal; a stateless pass-through with one
// path per server and unprefixed names; an aggregating proxy naming each
// server's tools SERVER__TOOL. Every generic row applies to each shape
// unless the shape does not claim its feature, and the two honest proxies
// (fakes/plainproxy in its whole-surface modes) fail none.

// loadShape reads the example spec name; a spec that runs `mcpchaos fake
// proxy` runs the suite's own build of it (fakeProxyCommand).
func loadShape(name string) *harness.ForeignSpec {
	spec, err := harness.LoadForeign(filepath.Join("testdata", "shapes", name+".yaml"))
	Expect(err).NotTo(HaveOccurred())
	if strings.HasSuffix(spec.Command[0], "/bin/mcpchaos") {
		spec.Command[0], spec.Env = fakeProxyCommand()
	}
	return spec
}

// notApplicable maps each catalogue row not applicable to target to its reason.
func notApplicable(target harness.Target) map[string]string {
	out := map[string]string{}
	for _, s := range catalogue.All() {
		if why := s.NotApplicable(target); why != "" {
			out[s.Name()] = why
		}
	}
	return out
}

var _ = Describe(shapesDescribe, Label("foreign", "shapes"), func() {
	It("leave no more of the catalogue not applicable than each shape's ceiling, a third at most on a stateful shape, each N/A saying why of the target", func(_ SpecContext) {
		total := len(catalogue.All())
		for _, name := range []string{"mcplocal", "aggregate", "stateless-paths"} {
			t := loadShape(name).Target(GinkgoWriter)
			na := notApplicable(t)
			for row, why := range na {
				Expect(why).To(ContainSubstring("target "+t.Name()), "%s: %s: the reason must speak of the target in front of it", name, row)
			}
			GinkgoWriter.Printf("%s: %d of %d rows not applicable\n", name, len(na), total)
			if harness.IsStateless(t) {
				Expect(len(na)).To(BeNumerically("<=", catalogue.StatelessNotApplicableCeiling), "%s: %d of %d rows N/A", name, len(na), total)
				continue
			}
			Expect(len(na)).To(BeNumerically("<=", catalogue.NotApplicableCeiling), "%s: %d of %d rows N/A", name, len(na), total)
			Expect(3*len(na)).To(BeNumerically("<=", total), "%s: %d of %d rows N/A, more than a third", name, len(na), total)
		}
	}, SpecTimeout(specTimeout))

	It("leave a stateless shape N/A beyond a stateful one only where it issues no session or does not claim the method", func(_ SpecContext) {
		stateful := notApplicable(loadShape("aggregate").Target(GinkgoWriter))
		t := loadShape("stateless-paths").Target(GinkgoWriter)
		for row, why := range notApplicable(t) {
			if _, ok := stateful[row]; ok {
				continue
			}
			Expect(why).To(Or(ContainSubstring("is stateless"), ContainSubstring("does not claim to forward")), row)
		}
	}, SpecTimeout(specTimeout))

	It("make every generic surface row apply to a shape claiming its method, whatever its naming and paths", func(_ SpecContext) {
		for _, name := range []string{"aggregate", "stateless-paths"} {
			spec := loadShape(name)
			t := spec.Target(GinkgoWriter)
			for _, s := range catalogue.All() {
				if len(s.Operation.Forwards) == 0 {
					continue
				}
				claimed := true
				for _, m := range s.Operation.Forwards {
					claimed = claimed && harness.Claims(t, m)
				}
				if claimed {
					Expect(s.NotApplicable(t)).To(BeEmpty(), "%s: %s", name, s.Name())
				} else {
					Expect(s.NotApplicable(t)).To(ContainSubstring("does not claim to forward"), "%s: %s", name, s.Name())
				}
			}
		}
	}, SpecTimeout(specTimeout))

	for _, name := range shapeNames {
		Describe("the "+name+" example proxy", Ordered, longFirst, func() {
			var results []catalogue.Result

			BeforeAll(func(ctx SpecContext) {
				t := loadShape(name)
				for _, s := range catalogue.All() {
					if s.NotApplicable(t.Target(GinkgoWriter)) == "" {
						results = append(results, s.Run(ctx, t.Target(GinkgoWriter)))
					}
				}
				var table bytes.Buffer
				Expect(scenreport.WriteTable(&table, scenreport.Run{Tolerance: catalogue.Tolerance, Results: results})).To(Succeed())
				AddReportEntry(name+" report", table.String())
			}, NodeTimeout(plainCatalogueBudget))

			It(shapesRunSpec, func(_ SpecContext) {
				Expect(results).NotTo(BeEmpty())
				var failed []string
				for _, r := range results {
					if !r.Pass {
						failed = append(failed, fmt.Sprintf("%s: %s", r.Scenario.Name(), r.Reason))
					}
				}
				Expect(failed).To(BeEmpty())
			}, SpecTimeout(plainCatalogueBudget+specTimeout))
		})
	}
})
