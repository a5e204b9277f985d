package smoke_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// Flags override the MCPCHAOS_SMOKE_* environment:
//
//	go run github.com/onsi/ginkgo/v2/ginkgo ./smoke -- -smoke.url=https://mcp.example.com -smoke.token=...
var (
	flagURL     = flag.String("smoke.url", "", "base URL of the proxy to check (default $"+smoke.EnvURL+"; empty: start a local mcplocal)")
	flagToken   = flag.String("smoke.token", "", "bearer token (default $"+smoke.EnvToken+")")
	flagProject = flag.String("smoke.project", "", "project (default $"+smoke.EnvProject+" or "+smoke.DefaultProject+")")
	flagBudget  = flag.String("smoke.budget", "", "per-call budget, Go duration or ms (default $"+smoke.EnvBudget+" or 30s)")
)

// Bounds of the suite itself.
const (
	buildTimeout = 3 * time.Minute // building cmd/mcplocal for the local proxy
	localBudget  = 5 * time.Second // per call against the local proxy (healthy, loopback)
	checkTimeout = 2 * time.Minute // one check: a few calls, each within its budget
	localToken   = "smoke-token"   // the local proxy's one user
	localUser    = "smoke"
)

// cfg is what every spec checks; local is the proxy the suite started, if any.
var (
	cfg   smoke.Config
	local *harness.Env
)

func TestSmoke(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Smoke")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	cfg, err = smoke.ConfigFromEnv(os.Getenv)
	Expect(err).NotTo(HaveOccurred())
	for dst, v := range map[*string]string{&cfg.URL: *flagURL, &cfg.Token: *flagToken, &cfg.Project: *flagProject} {
		if v != "" {
			*dst = v
		}
	}
	if *flagBudget != "" {
		cfg.Budget, err = smoke.ParseBudget(*flagBudget)
		Expect(err).NotTo(HaveOccurred())
	}
	if cfg.URL != "" {
		AddReportEntry("target", fmt.Sprintf("%s (project %s, budget %v)", cfg.URL, cfg.Project, cfg.Budget))
		return
	}
	By("no URL given: starting a local mcplocal in front of the fake docmost")
	dir, err := os.MkdirTemp("", "mcpchaos-smoke-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	bin, err := harness.BuildMcplocal(ctx, dir)
	Expect(err).NotTo(HaveOccurred())
	local, err = harness.NewEnv(ctx, harness.EnvOptions{
		Target:   &harness.Binary{Path: bin, Stderr: GinkgoWriter},
		Bounds:   harness.DefaultBounds(), // production bounds: the smoke is about a healthy proxy
		Users:    map[string]string{localUser: localToken},
		Pipeline: []harness.Stage{{Name: "paginate"}},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(local.Close(ctx)).To(Succeed()) })
	cfg = smoke.Config{URL: local.Target.URL(), Token: localToken, Project: harness.Project,
		ReadTool: "docmost_search", ReadArgs: map[string]any{"query": "backup runbook"},
		LargeTool: "docmost_search", LargeArgs: map[string]any{"query": "cluster notes"},
		Budget: localBudget}
}, NodeTimeout(buildTimeout))
