package conformance_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/conformance"
)

// McplocalEnv names a prebuilt mcplocal to hold to the suite instead of
// building ./cmd/mcplocal (for example another branch's build).
const McplocalEnv = "MCPCHAOS_CONFORMANCE_MCPLOCAL"

// Bounds of the specs: a build of both binaries (cold cache) and one suite
// run each, plus starting and stopping the processes.
const (
	buildTimeout = 10 * time.Minute
	runTimeout   = conformance.RunTimeout + 30*time.Second
)

// suiteBinaries are what the specs run, built before any of them starts, so
// a spec's timeout bounds only the run it checks, never a cold compile.
type suiteBinaries struct{ Fixture, Mcplocal, Dir, Err string }

var binaries suiteBinaries

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	var b suiteBinaries
	if Label("conformance").MatchesLabelFilter(GinkgoLabelFilter()) {
		b = buildBinaries(ctx)
	}
	out, err := json.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return out
}, func(data []byte) {
	Expect(json.Unmarshal(data, &binaries)).To(Succeed())
}, NodeTimeout(buildTimeout))

var _ = SynchronizedAfterSuite(func() {}, func() {
	if binaries.Dir != "" {
		_ = os.RemoveAll(binaries.Dir)
	}
})

// buildBinaries builds go-sdk's everything-server from the module cache and
// mcplocal (or takes the prebuilt one McplocalEnv names).
func buildBinaries(ctx SpecContext) (b suiteBinaries) {
	root, err := conformance.ModuleRoot()
	if err != nil {
		return suiteBinaries{Err: err.Error()}
	}
	if b.Dir, err = os.MkdirTemp("", "mcpchaos-conformance-"); err != nil {
		return suiteBinaries{Err: err.Error()}
	}
	By("building go-sdk's conformance everything-server from the module cache")
	if b.Fixture, err = conformance.Build(ctx, root, conformance.FixturePackage, b.Dir); err != nil {
		b.Err = err.Error()
		return b
	}
	if b.Mcplocal = os.Getenv(McplocalEnv); b.Mcplocal != "" {
		By("using the prebuilt mcplocal at " + b.Mcplocal)
		return b
	}
	By("building mcplocal")
	if b.Mcplocal, err = conformance.Build(ctx, root, "./cmd/mcplocal", b.Dir); err != nil {
		b.Err = err.Error()
	}
	return b
}

// BaselineFile is the ratchet, relative to the module root.
var BaselineFile = filepath.Join("tools", "conformance", "baseline.yml")

var _ = Describe("The official MCP conformance suite", Label("conformance"), Ordered, func() {
	var (
		root        string
		suite       conformance.Suite
		baseline    conformance.Baseline
		fixtureBin  string
		mcplocalBin string
		direct      conformance.Result
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		root, err = conformance.ModuleRoot()
		Expect(err).NotTo(HaveOccurred())
		suite = conformance.Suite{Dir: filepath.Join(root, "tools", "conformance")}
		Expect(suite.Check()).To(Succeed())
		baseline, err = conformance.LoadBaseline(filepath.Join(root, BaselineFile))
		Expect(err).NotTo(HaveOccurred())

		// Built before any spec runs (the SynchronizedBeforeSuite above).
		Expect(binaries.Err).To(BeEmpty(), "building the fixture and mcplocal")
		fixtureBin, mcplocalBin = binaries.Fixture, binaries.Mcplocal
		Expect(fixtureBin).NotTo(BeEmpty(), "the fixture was not built: this run's label filter did not select the conformance specs")
	})

	It("passes against go-sdk's everything-server directly, as the baseline says", func(ctx SpecContext) {
		fixture, url, err := conformance.StartFixture(ctx, fixtureBin)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(fixture.Stop)

		direct, err = suite.Run(ctx, url)
		Expect(err).NotTo(HaveOccurred(), "running the suite against the fixture")
		conformance.Survived(&direct, fixture.Alive(), fixture.Output())
		report("directly", direct, false)
		Expect(direct.Scenarios).NotTo(BeEmpty(), "the suite ran no scenario:\n%s", direct.Output)

		v := conformance.Compare(direct, direct, conformance.Baseline{Direct: baseline.Direct})
		Expect(v.DirectFailures).To(BeEmpty(),
			"the fixture itself fails these (list them under direct: in %s with a reason, or fix the fixture):\n%s",
			BaselineFile, lines(findings(v.DirectFailures)))
		Expect(v.Stale).To(BeEmpty(), "direct: entries of %s that now pass; remove them:\n%s",
			BaselineFile, lines(findings(v.Stale)))
	}, SpecTimeout(runTimeout))

	It("passes through mcplocal wherever it passes directly, except what the baseline lists", func(ctx SpecContext) {
		Expect(direct.Scenarios).NotTo(BeEmpty(), "the direct run did not happen: nothing to compare with")
		fixture, upstream, err := conformance.StartFixture(ctx, fixtureBin)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(fixture.Stop)
		proxy, err := conformance.StartMcplocal(ctx, mcplocalBin, upstream, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Stop)
		if proxy.Prefixed {
			By("this mcplocal rejects `prefix: false`: the project runs with prefixed names")
		}

		proxied, err := suite.Run(ctx, proxy.URL)
		Expect(err).NotTo(HaveOccurred(), "running the suite through mcplocal")
		conformance.Survived(&proxied, proxy.Alive(), proxy.Output())
		report("through mcplocal", proxied, proxy.Prefixed)

		v := conformance.Compare(direct, proxied, baseline)
		for _, f := range v.Known {
			GinkgoWriter.Printf("  known (baseline): %s\n", f)
		}
		AddReportEntry("conformance verdict", fmt.Sprintf("directly: %s; through mcplocal: %s; known failures (baseline): %d",
			direct.Score(), proxied.Score(), len(v.Known)))
		if !v.OK() {
			AddReportEntry("mcplocal output (tail)", tailLines(proxy.Output(), 60))
		}
		Expect(v.OK()).To(BeTrue(),
			"through mcplocal, against the baseline %s (a failure not listed is a regression; a listed scenario that passes must be removed, so the baseline only shrinks):\n%s",
			BaselineFile, lines(v.Problems()))
	}, SpecTimeout(runTimeout))
})

// report prints a run's score and failures (on stdout, so make test shows
// them) and adds them to the Ginkgo report.
func report(how string, r conformance.Result, prefixed bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance %s (%s, @modelcontextprotocol/conformance@%s): %s\n", how, r.URL, conformance.Version, r.Score())
	if prefixed {
		b.WriteString("  (mcplocal without `prefix: false`: tool and prompt names were prefixed)\n")
	}
	for _, s := range r.Scenarios {
		if s.Status != conformance.Pass {
			fmt.Fprintf(&b, "  ✗ %s: %s", s.Name, s.Status)
			if reason := s.Reason(); reason != "" {
				fmt.Fprintf(&b, ": %s", reason)
			}
			b.WriteString("\n")
		}
	}
	AddReportEntry("conformance "+how, b.String())
	fmt.Fprint(os.Stdout, b.String())
}

func findings(fs []conformance.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func lines(ss []string) string { return "  " + strings.Join(ss, "\n  ") }

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
