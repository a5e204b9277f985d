package scenarios_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// A cluster of a foreign proxy: two replicas of the plain fake proxy
// (docs/targets.md, worked example 4) behind HAProxy running the shipped
// config, each keeping its own sessions (no shared store). It runs the
// cluster scenarios that apply to any proxy, judged by what its spec claims,
// and names the rest not applicable.

const foreignClusterDescribe = "A cluster of a foreign proxy behind HAProxy"

// plainClusterSpec is worked example 4's spec, with the suite's own build
// standing in for ./bin/mcpchaos.
func plainClusterSpec() *harness.ForeignSpec {
	GinkgoHelper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "targets.md"))
	Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile("(?s)```yaml\n(name: plain-cluster\n.*?)```").FindSubmatch(doc)
	Expect(m).NotTo(BeNil(), "docs/targets.md has no ```yaml block starting with name: plain-cluster")
	spec, err := harness.ParseForeign(m[1])
	Expect(err).NotTo(HaveOccurred())
	Expect(spec.Command[0]).To(Equal("./bin/mcpchaos"))
	spec.Command[0], spec.Env = fakeProxyCommand()
	return spec
}

// newForeignCluster starts a world whose target is a cluster of n replicas
// of spec, and tears it down after the spec.
func newForeignCluster(spec *harness.ForeignSpec, n int) (*harness.Env, *harness.ForeignCluster) {
	GinkgoHelper()
	c := harness.NewForeignCluster(spec, n, GinkgoWriter)
	return startCluster(c), c
}

var _ = Describe(foreignClusterDescribe, Label("cluster"), Serial, func() {
	It("reports the cluster scenarios it cannot run not applicable, by name and why: mcplocal's audit trail, its notice, a store it did not declare", func(_ SpecContext) {
		c := harness.NewForeignCluster(plainClusterSpec(), 2, nil)
		na := clusterNotApplicable(c)
		for name, why := range na {
			AddReportEntry("not applicable: "+name, why)
		}
		Expect(na).To(HaveLen(5), "%v", na)
		Expect(na).NotTo(HaveKey("a replica SIGKILLed mid-call"))
		Expect(na).NotTo(HaveKey("a rolling restart under load"))
		Expect(na["one replica partitioned from Postgres"]).To(And(ContainSubstring("declares no shared store"), ContainSubstring("lacks auditAPI")))
		Expect(na["Postgres restarted"]).To(And(ContainSubstring("declares no shared store"), ContainSubstring("lacks sessionAdoption")))
		Expect(na["the load balancer restarted"]).To(ContainSubstring("lacks sessionAdoption"))
		Expect(na["a stale session id after every replica restarted"]).To(ContainSubstring("declares no shared store"))
		Expect(na["the soak on 3 replicas"]).To(ContainSubstring("lacks auditAPI"))
		for _, why := range na {
			Expect(why).To(ContainSubstring("cluster:2:foreign:plain-cluster"), "the reason names the target")
		}

		// Each name is a spec of mcplocal's cluster, where every one applies.
		Expect(clusterNotApplicable(&harness.Cluster{Replicas: 2})).To(BeEmpty(), "mcplocal's cluster runs them all")
		specs, err := os.ReadFile("cluster_test.go")
		Expect(err).NotTo(HaveOccurred())
		for _, s := range clusterScenarios {
			Expect(strings.Contains(string(specs), `It("`+s.name) || strings.HasPrefix(clusterKillSpec, s.name) || strings.HasPrefix(clusterRollingSpec, s.name)).
				To(BeTrue(), "%q names no spec of cluster_test.go", s.name)
		}
	}, SpecTimeout(specTimeout))

	It(clusterKillSpec, func(ctx SpecContext) {
		spec := plainClusterSpec()
		env, c := newForeignCluster(spec, 2)
		Expect(clusterNotApplicable(c)).NotTo(HaveKey("a replica SIGKILLed mid-call"))
		clusterKillMidCall(ctx, env, c.Cluster)
	}, SpecTimeout(2*time.Minute))

	It(clusterRollingSpec, func(ctx SpecContext) {
		env, c := newForeignCluster(plainClusterSpec(), 2)
		Expect(clusterNotApplicable(c)).NotTo(HaveKey("a rolling restart under load"))
		clusterRollingRestart(ctx, env, c)
	}, SpecTimeout(3*time.Minute))
})
