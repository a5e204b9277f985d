package scenarios_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gleak"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Tolerance is what a bounded answer may take beyond its budget here: the
// catalogue's, stated once there, used by every spec.
const Tolerance = catalogue.Tolerance

// newWorld starts a harness Env for one spec and tears it down after it,
// checking that nothing was left running.
func newWorld(o harness.EnvOptions) *harness.Env {
	GinkgoHelper()
	DeferCleanup(checkNoLeaks())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env, err := harness.NewEnv(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		Expect(env.Close(ctx)).To(Succeed())
	})
	return env
}

// checkNoLeaks snapshots goroutines now and returns the check to run after
// the spec's world is torn down: every goroutine it started must be gone.
func checkNoLeaks() func() {
	before := gleak.Goroutines()
	return func() {
		http.DefaultClient.CloseIdleConnections()
		Eventually(gleak.Goroutines).WithTimeout(5 * time.Second).ShouldNot(gleak.HaveLeaked(before,
			// toxiproxy v2.5.0's link and toxic goroutines send without
			// watching for an interrupt; when limit_data or slicer cut the
			// connection they feed mid-answer, that send blocks forever. They
			// are the harness's network, not the proxy under test, so only
			// goroutines started by toxiproxy's links are forgiven.
			gleak.IgnoringCreator("github.com/Shopify/toxiproxy/v2.(*ToxicLink)..."),
		))
	}
}
