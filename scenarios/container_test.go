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
	dockerCleanup       = 2 * time.Minute  // removing the images, stopping our dockerd
	containerSpecBudget = 45 * time.Second // one catalogue scenario in a container
	serviceSpecBudget   = time.Minute      // the fakes and toxiproxy images
)

// The catalogue against mcplocal in a container built FROM scratch, run by
// testcontainers-go with host networking; the fakes and toxiproxy stay in
// this process. Docker is started by scripts/docker.sh when it is not
// running; when it cannot be, these specs FAIL (they never skip).
var _ = Describe(containerDescribe, Label("container"), Ordered, ContinueOnFailure, func() {
	// The images are built before any spec runs (prebuild_test.go); the
	// first spec fails with why, when they could not be.
	BeforeAll(func() {
		Expect(prebuiltOnce.ImageErr).To(BeEmpty(), "building the container target's images")
		Expect(containerImages).NotTo(BeNil(), "the images were not built: this run's label filter did not select the container specs")
	})

	newTarget := func() harness.Target {
		image := ""
		if containerImages != nil { // nil while the spec tree is built
			image = containerImages.Mcplocal()
		}
		return &harness.Container{Image: image, Stderr: GinkgoWriter}
	}
	for _, s := range catalogue.All() {
		if s.NotApplicable(newTarget()) != "" {
			continue
		}
		It(catalogueSpecText(s), Label(s.Labels...), func(ctx SpecContext) {
			DeferCleanup(checkNoLeaks())
			r := s.Run(ctx, newTarget())
			AddReportEntry("observed", fmt.Sprintf("latency=%v budget=%v trace=%s", r.Latency, r.Budget, r.Trace))
			Expect(r.NotApplicable).To(BeEmpty())
			Expect(r.Pass).To(BeTrue(), "%s: %s (%s)", s.Name(), r.Reason, strings.TrimSpace(s.Fault.Params()))
		}, NodeTimeout(containerSpecBudget), SpecTimeout(specTimeout))
	}

	It(containerWarmSpec, func(ctx SpecContext) {
		DeferCleanup(checkNoLeaks())
		image := containerImages.Mcplocal()
		spec, err := harness.ParseForeign([]byte("name: mcplocal-image\nimage: " + image +
			"\nargs: [serve, --config, '{{.ConfigFile}}', --listen, '{{.Listen}}']\npassKnobs: true\n"))
		Expect(err).NotTo(HaveOccurred())
		By("mcplocal's image")
		runTwoWarm(ctx, newTarget)
		By("the same image as a foreign spec")
		runTwoWarm(ctx, func() harness.Target { return &harness.Foreign{Spec: spec, Stderr: GinkgoWriter} })
	}, NodeTimeout(2*containerSpecBudget), SpecTimeout(specTimeout))

	It(containerServicesSpec, func(ctx SpecContext) {
		DeferCleanup(checkNoLeaks())
		stop := func(s *harness.Service) {
			DeferCleanup(func(ctx context.Context) { Expect(s.Stop(ctx)).To(Succeed()) })
		}
		fakeAddr, err := harness.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		fake, err := harness.StartService(ctx, containerImages.Mcpchaos(),
			[]string{"fake", "upstream", "docmost", "--listen", fakeAddr}, fakeAddr, "/_fake/calls", GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		stop(fake)

		toxiAddr, err := harness.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		host, port, _ := strings.Cut(toxiAddr, ":")
		toxi, err := harness.StartService(ctx, containerImages.Toxiproxy(), []string{"-host", host, "-port", port}, toxiAddr, "/version", GinkgoWriter)
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
