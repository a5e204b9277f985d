package scenarios_test

import (
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// chatWith runs mcpctl chat against env's proxy and returns its output and error.
func chatWith(env *harness.Env, args ...string) (string, error) {
	GinkgoHelper()
	cmd := exec.Command(mcpctlPath, append([]string{"chat", "--url", env.Target.URL(), "--timeout", "5s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var _ = Describe("Chat fails over and says who answered", Label("chat"), func() {
	var env *harness.Env
	BeforeEach(func() { env = newWorld(harness.EnvOptions{LLM: true, Fallback: true}) })

	It("answers from the fallback when the primary 404s, and says so", func(ctx SpecContext) {
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Step{Kind: fakellm.NotFound})).To(Succeed())
		for _, stream := range []bool{false, true} {
			args := []string{"what", "is", "in", "the", "backup", "runbook"}
			if stream {
				args = append(args, "--stream")
			}
			start := time.Now()
			out, err := chatWith(env, args...)
			Expect(err).NotTo(HaveOccurred(), out)
			Expect(time.Since(start)).To(BeNumerically("<", mcplocal.KnobsOf(env.Bounds()).ChatBudget+Tolerance+time.Second), "bounded by the chat budget (+ the CLI's own start-up)")
			Expect(out).To(ContainSubstring(fakellm.Reply("what is in the backup runbook")))
			Expect(out).To(ContainSubstring("model: anthropic-fallback (claude-sonnet-5)"))
			Expect(out).To(ContainSubstring("⚠ failed over → answered by anthropic-fallback (claude-sonnet-5)"))
		}
	}, SpecTimeout(specTimeout))

	It("does not fail over once a streamed answer has started, and says why", func(ctx SpecContext) {
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Step{Kind: fakellm.StreamError})).To(Succeed())
		out, err := chatWith(env, "tell", "me", "something", "long", "--stream")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("broke off mid-stream"))
		Expect(out).To(ContainSubstring("vllm-current (qwen3-32b)"))
		Expect(env.Fallback.Requests()).To(BeEmpty(), "no fallback after the first chunk reached the client")
	}, SpecTimeout(specTimeout))

	It("names the last model and its status when every candidate fails", func(ctx SpecContext) {
		Expect(env.LLM.Set(fakellm.AnyModel, fakellm.Step{Kind: fakellm.ServerError})).To(Succeed())
		Expect(env.Fallback.Set(fakellm.AnyModel, fakellm.Step{Kind: fakellm.RateLimited, Text: "quota exceeded for this key"})).To(Succeed())
		out, err := chatWith(env, "hello")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("last: anthropic-fallback (claude-sonnet-5) HTTP 429"))
		Expect(out).To(ContainSubstring("quota exceeded"))
		code := out[strings.LastIndex(out, "[trace ")+7:]
		code = code[:8]
		rows, err := mcplocal.Audit(ctx, env, code)
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindChatTurn), HaveField("Status", audit.StatusError))))
		Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindLLMAttempt), HaveField("Server", "vllm-current"))))
	}, SpecTimeout(specTimeout))
})
