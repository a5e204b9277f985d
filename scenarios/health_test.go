package scenarios_test

import (
	"net/http"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// fastProbe is a readiness probe compressed to milliseconds: every 50 ms,
// 300 ms to answer, unhealthy after 3 failures in a row.
func fastProbe(tool string) *harness.HealthCheck {
	return &harness.HealthCheck{Tool: tool, IntervalSeconds: 0.05, TimeoutSeconds: 0.3, FailureThreshold: 3}
}

func readyz(env *harness.Env) (int, string) {
	GinkgoHelper()
	resp, err := http.Get(env.Target.URL() + "/readyz")
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var b [512]byte
	n, _ := resp.Body.Read(b[:])
	return resp.StatusCode, string(b[:n])
}

var _ = Describe("Upstream health tells the truth", Label("health"), func() {
	It("reports live for liveness, and readiness degraded then unhealthy while the controller is cut, healthy again after", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Unifi: fastProbe("list_sites")})
		status := func(server string) func() health.Status {
			return func() health.Status { return mcplocal.Instance(ctx, env, server).Status }
		}
		Eventually(status("unifi")).WithTimeout(3 * time.Second).Should(Equal(health.Healthy))
		Eventually(status("docmost")).Should(Equal(health.Live), "a server without a readiness probe is only live")
		Expect(readyzCode(env)).To(Equal(http.StatusOK))

		By("cutting the unifi server's controller: its tools/list still answers, list_sites does not")
		env.ControllerLink.Down()
		Eventually(status("unifi")).WithTimeout(2 * time.Second).WithPolling(5 * time.Millisecond).Should(Equal(health.Degraded))
		Eventually(status("unifi")).WithTimeout(3 * time.Second).Should(Equal(health.Unhealthy))
		in := mcplocal.Instance(ctx, env, "unifi")
		Expect(in.LastError).To(ContainSubstring("controller unreachable"))
		Expect(in.Failures).To(BeNumerically(">=", 3))
		code, body := readyz(env)
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		Expect(body).To(ContainSubstring("docmost/unifi"))
		Expect(mcplocal.Instance(ctx, env, "docmost").Status).To(Equal(health.Live))
		out, err := exec.CommandContext(ctx, mcpctlPath, "get", "instances", "--url", env.Target.URL()).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(MatchRegexp(`(?m)^unifi\s+docmost\s+unhealthy\s+readiness: tools/call list_sites`))
		Expect(string(out)).To(MatchRegexp(`(?m)^docmost\s+docmost\s+live\s+liveness: tools/list`))

		By("restoring the controller")
		Expect(env.ControllerLink.Up()).To(Succeed())
		Eventually(status("unifi")).WithTimeout(3 * time.Second).Should(Equal(health.Healthy))
		Expect(readyzCode(env)).To(Equal(http.StatusOK))
	}, SpecTimeout(specTimeout))

	It("flags a readiness probe on a local-only tool by its latency: a note, not a pass it earned", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Unifi: fastProbe("get_version")})
		// Every probe judges its own latency, and a loaded machine makes some
		// probes slower than LocalOnlyLatency: so the note, the latency that
		// earned it and the table are each awaited on a probe that was fast,
		// never read again from a later probe that may not have been.
		Eventually(func() health.Instance { return mcplocal.Instance(ctx, env, "unifi") }).WithTimeout(3 * time.Second).
			Should(And(HaveField("Status", health.Healthy), HaveField("Note", ContainSubstring("local table")),
				HaveField("Latency", BeNumerically("<", health.LocalOnlyLatency))))
		Eventually(func() string {
			out, err := exec.CommandContext(ctx, mcpctlPath, "get", "instances", "--url", env.Target.URL()).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s", out)
			return string(out)
		}).WithTimeout(3*time.Second).Should(ContainSubstring("note: docmost/unifi answered in"), "the instances table flags the local-only probe")
		By("and the controller being cut does not change it: the probe never crossed to it")
		env.ControllerLink.Down()
		Consistently(func() health.Status { return mcplocal.Instance(ctx, env, "unifi").Status }).
			WithTimeout(300 * time.Millisecond).Should(Equal(health.Healthy))
	}, SpecTimeout(specTimeout))

	It("reports a probe naming a tool the server does not expose as a configuration error", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Unifi: fastProbe("list_stations")})
		Eventually(func() health.Instance { return mcplocal.Instance(ctx, env, "unifi") }).WithTimeout(3 * time.Second).
			Should(And(HaveField("Status", health.Misconfigured), HaveField("LastError", ContainSubstring("list_stations"))))
		code, _ := readyz(env)
		Expect(code).To(Equal(http.StatusServiceUnavailable))
	}, SpecTimeout(specTimeout))
})

func readyzCode(env *harness.Env) int {
	GinkgoHelper()
	code, _ := readyz(env)
	return code
}
