package scenarios_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The third real client: the official TypeScript SDK keeps the session id it
// was given and never re-initializes by itself (NOTES: against go-sdk's own
// handler every call after a restart fails). Through mcplocal, a restart
// must cost it nothing but one notice. It needs node; it never skips.
var _ = Describe("Stale sessions with the official TypeScript SDK client", Label("sessions", "clients", "tsclient"), func() {
	It("keeps working across a proxy restart on its old id, and is told once", func(ctx SpecContext) {
		dir, err := harness.TSClientDir(ctx)
		Expect(err).NotTo(HaveOccurred(), "the TypeScript SDK client (tools/tsclient)")
		env := newWorld(harness.EnvOptions{Users: alice.Users, Target: &harness.Binary{Path: mcplocalPath, Stderr: GinkgoWriter}})
		c, err := harness.StartTSClient(ctx, dir, env.ProjectURL(), "alice-token")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		Expect(c.SessionID).NotTo(BeEmpty())
		args := map[string]any{"page_id": "p1", "content": "before"}

		By("calling before the restart")
		r, err := c.Call(ctx, "docmost_update_page", args)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.OK).To(BeTrue(), "before the restart: %s", r.Error)
		Expect(r.Text).NotTo(ContainSubstring(catalogue.NoticePrefix))

		By("restarting the proxy: every session is lost")
		Expect(env.Target.Restart(ctx)).To(Succeed())

		By("calling again on the old id")
		r, err = c.Call(ctx, "docmost_update_page", args)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.OK).To(BeTrue(), "the first call after the restart failed: %s", r.Error)
		Expect(r.IsError).To(BeFalse(), r.Text)
		Expect(r.SessionID).To(Equal(c.SessionID), "the client's session id changed")
		Expect(r.Text).To(ContainSubstring(catalogue.NoticePrefix))
		Expect(r.Text).To(ContainSubstring("begin_session"))

		r, err = c.Call(ctx, "docmost_update_page", args)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.OK).To(BeTrue(), "the second call after the restart failed: %s", r.Error)
		Expect(r.Text).NotTo(ContainSubstring(catalogue.NoticePrefix), "the notice is repeated")
	}, SpecTimeout(2*time.Minute))
})
