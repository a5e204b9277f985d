package scenarios_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// warmPair is two catalogue rows that may share one proxy on the target
// newTarget makes: no fault of their own, nothing that asks for a fresh
// process, the same world's options.
func warmPair(newTarget func() harness.Target) []catalogue.Scenario {
	GinkgoHelper()
	byKey := map[string][]catalogue.Scenario{}
	for _, s := range catalogue.All() {
		if s.Fault.Name() != "none" || catalogue.ColdReason(s) != "" || s.NotApplicable(newTarget()) != "" {
			continue
		}
		key, err := catalogue.WarmKey(s)
		Expect(err).NotTo(HaveOccurred())
		if byKey[key] = append(byKey[key], s); len(byKey[key]) == 2 {
			return byKey[key]
		}
	}
	Fail("no two rows of the catalogue may share a proxy on this target")
	return nil
}

// runTwoWarm runs a warm pair on the target newTarget makes, as
// mcpchaos run does: the first row starts the proxy, the second runs on it
// once the target says it is ready, and both pass.
func runTwoWarm(ctx context.Context, newTarget func() harness.Target) {
	GinkgoHelper()
	pair := warmPair(newTarget)
	w := &catalogue.Warm{NewTarget: newTarget}
	defer w.Close()
	w.Plan(pair)
	for i, s := range pair {
		r := w.Run(ctx, s, 1)
		Expect(r.NotApplicable).To(BeEmpty(), s.Name())
		Expect(r.Pass).To(BeTrue(), "%s: %s", s.Name(), r.Reason)
		Expect(r.Warm).To(Equal(i == 1), "%s: the second row runs on the first row's proxy", s.Name())
	}
	Expect([]int{w.WarmRows, w.ColdRows}).To(Equal([]int{1, 1}), "rows run warm and cold")
}
