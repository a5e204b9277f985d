package scenarios_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Two public MCP proxies nobody here wrote (pinned by
// tools/thirdparty/package-lock.json), each described by a target spec a
// user could have written in a few minutes. Their verdicts on a handful of
// rows are pinned: the passes show the harness holds a proxy built otherwise
// only to what it promised (its declared budget, the MCP spec), and each
// failure is one the MCP spec makes, broken by that version. A harness
// change that flips one is a change in how proxies are judged, to be made on
// purpose.

// thirdPartyDir is where make deps installs the proxies.
const thirdPartyDir = "../tools/thirdparty"

// thirdPartyVerdict is a row's pinned verdict on a third-party proxy: the
// generic promises it breaks, none when it passes.
type thirdPartyVerdict struct {
	spec, row string
	broken    []string
}

var thirdPartyVerdicts = []thirdPartyVerdict{
	{"mcp-proxy", "none × small tools/call", nil},
	{"mcp-proxy", "none × DELETE with empty JSON body", nil},
	{"mcp-proxy", "proxy-restart × a new session after the restart", nil},
	// It cuts a call at its --requestTimeout (6 s, declared): the slow tool
	// answers after twice that, so the cut is what answers.
	{"mcp-proxy", "tool-slow × paginating tools/call", nil},
	// It accepts an empty JSON array with 202: no request in it to answer.
	{"mcp-proxy", "none × malformed requests answered", nil},
	// It serves an initialize from any Origin (the MCP spec: refuse with 403).
	{"mcp-proxy", "none × an initialize from a foreign Origin", []string{"8 a foreign Origin is refused (MCP spec: DNS rebinding)"}},
	// A proxy of one server meets the rows on the everything fake with that
	// fake in its server's place: the wire rows, the methods it forwards.
	{"mcp-proxy", "none × ids of every kind come back as sent", nil},
	{"mcp-proxy", "latency × prompts/get", nil},
	{"supergateway", "none × small tools/call", nil},
	{"supergateway", "none × resources/templates/list + a templated read", nil},
	// It opens each session with a child process, slowly: after the
	// malformed requests it still serves, which is all the row asks.
	{"supergateway", "none × malformed requests answered", nil},
	// Its bridge keeps using an upstream session the restarted upstream
	// answers 404, where the MCP spec says a client starts a new one.
	{"supergateway", "upstream-restart × tools/call across the fault", []string{"1 the proxy reconnects to a restarted upstream"}},
}

var _ = Describe("Third-party proxies", Label("foreign", "thirdparty"), Ordered, func() {
	BeforeAll(func(ctx SpecContext) {
		// Installed by make deps; a run without it installs here, outside
		// any spec's timeout.
		if _, err := os.Stat(filepath.Join(thirdPartyDir, "node_modules", ".bin", "supergateway")); err == nil {
			return
		}
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = thirdPartyDir
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "npm ci in %s: %s", thirdPartyDir, out)
	}, NodeTimeout(5*time.Minute))

	for _, v := range thirdPartyVerdicts {
		want := "passes"
		if len(v.broken) > 0 {
			want = "fails on the MCP promise it breaks"
		}
		It(v.spec+": "+v.row+" "+want, func(ctx SpecContext) {
			spec, err := harness.LoadForeign(filepath.Join("testdata", "thirdparty", v.spec+".yaml"))
			Expect(err).NotTo(HaveOccurred())
			var row *catalogue.Scenario
			for _, s := range catalogue.All() {
				if s.Name() == v.row {
					row = &s
					break
				}
			}
			Expect(row).NotTo(BeNil(), "no catalogue row %q", v.row)
			r := row.Run(ctx, spec.Target(GinkgoWriter))
			Expect(r.NotApplicable).To(BeEmpty())
			var broken []string
			for _, b := range r.Breaches {
				Expect(b.Tier).To(Equal(catalogue.Generic), "%s: only generic promises are held to a proxy claiming nothing: %s", v.row, r.Reason)
				broken = append(broken, b.Promise)
			}
			slices.Sort(broken)
			Expect(broken).To(Equal(v.broken), "%s on %s: %s\n%s", v.row, v.spec, r.Reason, r.Log)
		}, SpecTimeout(3*time.Minute))
	}
})
