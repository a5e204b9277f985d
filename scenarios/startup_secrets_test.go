package scenarios_test

import (
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/proxy/audit/audittest"
)

type lockedBuffer = syncbuf.Buffer

// pgSecret is the password the spec puts in the audit DSN. The throwaway
// server trusts local connections, so it is never checked: only where it
// shows up matters.
const pgSecret = "PGSECRET-startup-4242"

// The threat model's reproduction "the Postgres DSN with its password is printed at
// startup", as an operator sees it: the real mcplocal binary, a real
// PostgreSQL audit store, the startup line on stderr.
var _ = Describe("mcplocal's startup line with a Postgres audit store", Label("security", "secrets", "binary", "postgres"), func() {
	It("names the store's host and database but never its password", func(ctx SpecContext) {
		dsn, stop, err := audittest.StartPostgres(ctx)
		Expect(err).NotTo(HaveOccurred(), "a throwaway PostgreSQL server (make deps installs its binaries)")
		DeferCleanup(stop)
		u, err := url.Parse(dsn)
		Expect(err).NotTo(HaveOccurred())
		u.User = url.UserPassword(u.User.Username(), pgSecret)

		dir := GinkgoT().TempDir()
		cfg := filepath.Join(dir, "mcplocal.yaml")
		Expect(os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\nprojects:\n  docmost:\n    servers:\n      docmost:\n        url: http://127.0.0.1:1/mcp\n"), 0o600)).To(Succeed())
		stderr := &lockedBuffer{}
		cmd := exec.Command(mcplocalPath, "serve", "--config", cfg, "--audit", u.String())
		cmd.Stdout, cmd.Stderr = stderr, stderr
		Expect(cmd.Start()).To(Succeed())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		DeferCleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM) // the process this spec started, by its pid
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})

		Eventually(stderr.String).WithContext(ctx).WithTimeout(30*time.Second).Should(ContainSubstring(`msg="mcplocal listening"`),
			"mcplocal did not start over the Postgres store")
		line := ""
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, `msg="mcplocal listening"`) {
				line = l
			}
		}
		Expect(line).To(ContainSubstring(u.Host), "the startup line names where the audit store is: %s", line)
		Expect(line).To(ContainSubstring(strings.TrimPrefix(u.Path, "/")), "and which database: %s", line)
		Expect(stderr.String()).NotTo(ContainSubstring(pgSecret), "the log carries the audit DSN's password")
	}, SpecTimeout(2*time.Minute))
})
