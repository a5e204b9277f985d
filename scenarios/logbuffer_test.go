package scenarios_test

import (
	"bytes"
	"regexp"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// stalledStderr is a process's stderr that nobody reads until Release: its
// first write blocks, so the pipe behind it fills and the process's own
// writes to stderr would block too. After Release it keeps what it gets.
type stalledStderr struct {
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	got     bytes.Buffer
}

func newStalledStderr() *stalledStderr { return &stalledStderr{release: make(chan struct{})} }

func (s *stalledStderr) Write(p []byte) (int, error) {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.Write(p)
}

func (s *stalledStderr) Release() { s.once.Do(func() { close(s.release) }) }

func (s *stalledStderr) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

var droppedLine = regexp.MustCompile(`level=WARN msg="log lines dropped[^"]*MCPCTL_LOG_BUFFER_BYTES[^"]*" dropped=(\d+) buffer_bytes=(\d+)`)

var _ = Describe("mcplocal's log under a stalled stderr", Label("knobs", "binary"), func() {
	It("MCPCTL_LOG_BUFFER_BYTES alone decides how many log lines wait for a stalled stderr: answers keep coming, the rest are dropped and counted", func(ctx SpecContext) {
		stderr := newStalledStderr()
		kv := mcplocal.Compressed()
		Expect(kv.SetRaw("MCPCTL_LOG_BUFFER_BYTES", 4096)).To(BeTrue())
		env := newWorld(harness.EnvOptions{Target: &harness.Binary{Path: mcplocalPath, Stderr: stderr}, Bounds: mcplocal.BoundsOf(kv)})
		DeferCleanup(stderr.Release) // runs before the world's teardown stops the process
		cs := connect(ctx, env, "")

		By("far more log lines than the OS pipe and the buffer hold, while nobody reads stderr")
		const calls = 600 // a line each, ~250 bytes: ~150 KB against a 64 KiB pipe + 4 KiB
		bound := kv.RequestDeadline + matrixSlack
		for i := range calls {
			var a answer
			took := timed(func() { a = callTool(ctx, cs, "docmost_update_page", map[string]any{"page_id": "p"}) })
			Expect(a.IsError).To(BeFalse(), "call %d: %s", i+1, a.Text)
			Expect(took).To(BeNumerically("<=", bound), "call %d waited for stderr", i+1)
		}

		By("once stderr is read again, the count of the dropped lines is logged")
		stderr.Release()
		Eventually(stderr.String).WithTimeout(5 * time.Second).Should(MatchRegexp(droppedLine.String()))
		m := droppedLine.FindStringSubmatch(stderr.String())
		n, err := strconv.Atoi(m[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">", 0))
		Expect(m[2]).To(Equal("4096"), "the notice names the buffer the knob set")
	}, SpecTimeout(90*time.Second))
})
