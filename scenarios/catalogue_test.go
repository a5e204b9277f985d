package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// mcplocalPath is the mcplocal binary built once for the whole suite.
var mcplocalPath, mcpctlPath string

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	dir, err := os.MkdirTemp("", "mcpchaos-bin-")
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "mcplocal")
	if prebuilt := os.Getenv("MCPCHAOS_MCPLOCAL"); prebuilt != "" {
		// mcpchaos canary runs these specs against a proxy built elsewhere
		// (the baseline's, while the clients here run on a candidate SDK).
		b, err := os.ReadFile(prebuilt)
		Expect(err).NotTo(HaveOccurred(), "MCPCHAOS_MCPLOCAL")
		Expect(os.WriteFile(path, b, 0o755)).To(Succeed())
	} else {
		_, err = harness.BuildMcplocal(ctx, dir)
		Expect(err).NotTo(HaveOccurred())
	}
	if prebuilt := os.Getenv("MCPCHAOS_MCPCTL"); prebuilt != "" {
		// mcpchaos mutants builds both binaries before the suite (a mutant
		// that breaks them is an error of its run, not a kill).
		b, err := os.ReadFile(prebuilt)
		Expect(err).NotTo(HaveOccurred(), "MCPCHAOS_MCPCTL")
		Expect(os.WriteFile(filepath.Join(dir, "mcpctl"), b, 0o755)).To(Succeed())
	} else {
		_, err = harness.BuildCommand(ctx, dir, "mcpctl")
		Expect(err).NotTo(HaveOccurred())
	}
	return []byte(path)
}, func(path []byte) {
	mcplocalPath = string(path)
	mcpctlPath = filepath.Join(filepath.Dir(mcplocalPath), "mcpctl")
}, NodeTimeout(5*time.Minute))

var _ = SynchronizedAfterSuite(func() {}, func() {
	if mcplocalPath != "" {
		_ = os.RemoveAll(filepath.Dir(mcplocalPath))
	}
})

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
