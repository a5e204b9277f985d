package scenarios_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Bounds of the container specs.
const (
	dockerStartTimeout  = 4 * time.Minute  // scripts/docker.sh start: apt-get install docker.io + dockerd
	imageBuildTimeout   = 6 * time.Minute  // three static go builds + three FROM scratch images
	dockerCleanup       = 2 * time.Minute  // removing the images, stopping our dockerd
	containerSpecBudget = 45 * time.Second // one catalogue scenario in a container
	serviceSpecBudget   = time.Minute      // the fakes and toxiproxy images
)

// The catalogue against mcplocal in a container built FROM scratch, run by
// testcontainers-go with host networking; the fakes and toxiproxy stay in
// this process. Docker is started by scripts/docker.sh when it is not
// running; when it cannot be, these specs FAIL (they never skip).
var _ = Describe("The fault catalogue against the container target", Label("container"), Ordered, ContinueOnFailure, func() {
	// This run's images, under a tag of its own: another suite run on the same
	// Docker daemon builds and removes its own.
	images := harness.NewImageSet()
	BeforeAll(func(ctx SpecContext) {
		By("making sure Docker runs (scripts/docker.sh start)")
		started, err := harness.EnsureDocker(ctx, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred(), "the container specs need Docker and never skip")
		if started {
			DeferCleanup(func(ctx SpecContext) {
				Expect(harness.StopDocker(ctx, GinkgoWriter)).To(Succeed())
			}, NodeTimeout(dockerCleanup))
		}
		Expect(harness.DockerAvailable(ctx)).To(Succeed())

		By("building the images FROM scratch from static binaries (nothing pulled), tagged " + images.Tag())
		start := time.Now()
		DeferCleanup(func(ctx SpecContext) {
			Expect(images.Remove(ctx)).To(Succeed())
		}, NodeTimeout(dockerCleanup))
		Expect(images.Build(ctx, GinkgoWriter)).To(Succeed())
		AddReportEntry("image build", time.Since(start).Round(time.Millisecond).String())
	}, NodeTimeout(dockerStartTimeout+imageBuildTimeout))

	newTarget := func() harness.Target {
		return &harness.Container{Image: images.Mcplocal(), Stderr: GinkgoWriter}
	}
	for _, s := range catalogue.All() {
		if s.NotApplicable(newTarget()) != "" {
			continue
		}
		It(s.Name()+" holds promise "+s.Promise, Label(s.Labels...), func(ctx SpecContext) {
			DeferCleanup(checkNoLeaks())
			r := s.Run(ctx, newTarget())
			AddReportEntry("observed", fmt.Sprintf("latency=%v budget=%v trace=%s", r.Latency, r.Budget, r.Trace))
			Expect(r.NotApplicable).To(BeEmpty())
			Expect(r.Pass).To(BeTrue(), "%s: %s (%s)", s.Name(), r.Reason, strings.TrimSpace(s.Fault.Params()))
		}, NodeTimeout(containerSpecBudget), SpecTimeout(specTimeout)) // not SpecTimeout: the first spec would also bound BeforeAll's build
	}

	It("serves the fake docmost behind toxiproxy from their own images", func(ctx SpecContext) {
		DeferCleanup(checkNoLeaks())
		stop := func(s *harness.Service) {
			DeferCleanup(func(ctx context.Context) { Expect(s.Stop(ctx)).To(Succeed()) })
		}
		fakeAddr, err := harness.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		fake, err := harness.StartService(ctx, images.Mcpchaos(),
			[]string{"fake", "upstream", "docmost", "--listen", fakeAddr}, fakeAddr, "/_fake/calls", GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		stop(fake)

		toxiAddr, err := harness.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		host, port, _ := strings.Cut(toxiAddr, ":")
		toxi, err := harness.StartService(ctx, images.Toxiproxy(), []string{"-host", host, "-port", port}, toxiAddr, "/version", GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		stop(toxi)

		By("linking toxiproxy to the fake over its HTTP API")
		linkAddr, err := harness.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		body, _ := json.Marshal(map[string]any{"name": "docmost", "listen": linkAddr, "upstream": fakeAddr, "enabled": true})
		hc := &http.Client{Timeout: 5 * time.Second}
		DeferCleanup(hc.CloseIdleConnections)
		resp, err := hc.Post("http://"+toxiAddr+"/proxies", "application/json", bytes.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		out, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusCreated), string(out))

		By("listing the fake's tools through the link")
		cs, err := harness.SDKClient(ctx, "http://"+linkAddr+"/mcp", "")
		Expect(err).NotTo(HaveOccurred())
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, t := range tools.Tools {
			names = append(names, t.Name)
		}
		Expect(names).To(ContainElements("search", "update_page"))
	}, NodeTimeout(serviceSpecBudget), SpecTimeout(specTimeout))
})
