package scenarios_test

import (
	"bufio"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// preconnectSlack is what a connection's close may take past its knob on a
// loaded, shared machine: the proxy notices the deadline, closes, and the
// spec's read returns.
const preconnectSlack = 500 * time.Millisecond

// The 100,000-request soak (docs/performance.md) found three requests that
// got EOF from a proxy that was up: HTTP clients dial connections ahead of
// their requests (Go's transport keeps a dial it did not need in its idle
// pool), and the proxy's HTTP server started its read-header timeout at the
// dial, closing a connection that had not sent a byte yet; a request sent as
// the close crossed it got EOF, on a fresh connection no client retries.
var _ = Describe("Connections opened ahead of their first request", Label("proxy", "idle"), func() {
	for _, t := range targets {
		Context("against the "+t.name+" target", Label(t.name), func() {
			It("serve a request that comes after MCPCTL_READ_TIMEOUT_MS, and close a silent one after MCPCTL_IDLE_CONN_TIMEOUT_MS", func(ctx SpecContext) {
				kv := mcplocal.Compressed()
				kv.ReadTimeout = 300 * time.Millisecond
				kv.IdleConnTimeout = 2 * time.Second
				env := newWorld(harness.EnvOptions{Target: t.make(), Bounds: mcplocal.BoundsOf(kv)})
				u, err := url.Parse(env.Target.URL())
				Expect(err).NotTo(HaveOccurred())

				By("a connection dialled now and first used after twice the read timeout is served")
				var d net.Dialer
				early, err := d.DialContext(ctx, "tcp", u.Host)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(early.Close)
				// The proxy's idle clock starts at its accept, which may come
				// before DialContext returns: the lower bound is measured from
				// before the dial, the upper one from after it.
				beforeLateDial := time.Now()
				late, err := d.DialContext(ctx, "tcp", u.Host)
				Expect(err).NotTo(HaveOccurred())
				lateDialled := time.Now()
				DeferCleanup(late.Close)
				time.Sleep(2 * kv.ReadTimeout) // the wait is what is tested: no request may be in flight
				Expect(early.SetDeadline(time.Now().Add(5 * time.Second))).To(Succeed())
				_, err = early.Write([]byte("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"))
				Expect(err).NotTo(HaveOccurred())
				status, err := bufio.NewReader(early).ReadString('\n')
				Expect(err).NotTo(HaveOccurred(), "the proxy closed a connection that had not sent its first request yet")
				Expect(strings.Fields(status)).To(HaveLen(3))
				Expect(strings.Fields(status)[1]).To(Equal("200"), status)

				By("a connection that never sends a byte is closed once the idle-connection timeout has passed")
				Expect(late.SetReadDeadline(lateDialled.Add(kv.IdleConnTimeout + 5*time.Second))).To(Succeed())
				_, err = late.Read(make([]byte, 1))
				open := time.Since(lateDialled)
				Expect(err).To(HaveOccurred())
				var ne net.Error
				Expect(errors.As(err, &ne) && ne.Timeout()).To(BeFalse(), "the silent connection is still open %v after it was dialled", open)
				Expect(time.Since(beforeLateDial)).To(BeNumerically(">=", kv.IdleConnTimeout), "closed before the idle timeout")
				Expect(open).To(BeNumerically("<=", kv.IdleConnTimeout+preconnectSlack), "closed within the idle timeout + %v", preconnectSlack)
			}, SpecTimeout(30*time.Second))
		})
	}
})
