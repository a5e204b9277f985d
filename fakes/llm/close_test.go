package llm_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gleak"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

var _ = Describe("Closing", func() {
	It("unblocks every hanging handler, returns once they are done and leaves no goroutine behind", func(ctx SpecContext) {
		http.DefaultClient.CloseIdleConnections()
		baseline := Goroutines()

		srv, err := llm.New(llm.Options{Provider: llm.Anthropic})
		Expect(err).NotTo(HaveOccurred())
		tr := http.DefaultTransport.(*http.Transport).Clone()
		client := anthropicClient(srv, &http.Client{Transport: tr})

		hangers := map[string]llm.Step{
			"m-hang-before": llm.Do(llm.HangBeforeHeaders),
			"m-hang-after":  llm.Do(llm.HangAfterHeaders),
			"m-stall":       llm.Do(llm.StallMidStream),
			"m-slow":        llm.SlowFor(time.Hour),
		}
		results := make(chan error, 2*len(hangers))
		for model, step := range hangers {
			Expect(srv.Set(model, step)).To(Succeed())
			go func() {
				defer GinkgoRecover()
				_, err := client.Messages.New(ctx, anthropicParams(model, "wait"))
				results <- err
			}()
			go func() {
				defer GinkgoRecover()
				results <- readAnthropicStream(ctx, client, anthropicParams(model, "wait")).Err
			}()
		}
		Eventually(srv.Requests).Should(HaveLen(2 * len(hangers)))
		Consistently(results, 50*time.Millisecond).ShouldNot(Receive(), "all of them hang")

		closed := make(chan error, 1)
		go func() { closed <- srv.Close() }()
		Eventually(closed).Should(Receive(BeNil()))
		Expect(srv.Requests()).To(HaveEach(And(HaveField("Done", true), HaveField("FakeClosed", true))),
			"Close returned after every handler was done")
		for range 2 * len(hangers) {
			var err error
			Eventually(results).Should(Receive(&err))
			Expect(err).To(HaveOccurred(), "the client sees the fake go away, even mid-stream")
		}
		Expect(srv.Close()).To(Succeed(), "a second Close returns the same")

		tr.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		Eventually(Goroutines).ShouldNot(HaveLeaked(baseline))
	}, SpecTimeout(10*time.Second))

	It("leaves no goroutine behind after a mix of behaviours", func(ctx SpecContext) {
		baseline := Goroutines()
		srv, err := llm.New(llm.Options{Provider: llm.OpenAI})
		Expect(err).NotTo(HaveOccurred())
		tr := http.DefaultTransport.(*http.Transport).Clone()
		client := openAIClient(srv, &http.Client{Transport: tr})
		Expect(srv.Set("m", llm.Do(llm.OK), llm.Do(llm.Reset), llm.Do(llm.TruncatedStream),
			llm.Do(llm.StreamError), llm.Do(llm.Malformed), llm.Do(llm.ServerError))).To(Succeed())
		for range 6 {
			_ = readOpenAIStream(ctx, client, openAIParams("m", "x"))
		}
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		Expect(srv.Set("m", llm.Do(llm.StallMidStream))).To(Succeed())
		Expect(readOpenAIStream(cctx, client, openAIParams("m", "x")).Err).To(MatchError(context.DeadlineExceeded))

		Expect(srv.Close()).To(Succeed())
		tr.CloseIdleConnections()
		Eventually(Goroutines).ShouldNot(HaveLeaked(baseline))
	}, SpecTimeout(10*time.Second))

	It("refuses connections once closed", func(ctx SpecContext) {
		srv, err := llm.New(llm.Options{Provider: llm.Anthropic})
		Expect(err).NotTo(HaveOccurred())
		Expect(srv.Close()).To(Succeed())
		_, err = net.DialTimeout("tcp", srv.Addr(), time.Second)
		Expect(err).To(HaveOccurred())
	}, SpecTimeout(specTimeout))

	It("Serve runs the fake until its context is done", func(ctx SpecContext) {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		ready := make(chan *llm.Server, 1)
		served := make(chan error, 1)
		go func() {
			served <- llm.Serve(sctx, llm.Options{Provider: llm.Anthropic}, func(s *llm.Server) { ready <- s })
		}()
		var srv *llm.Server
		Eventually(ready).Should(Receive(&srv))
		Expect(srv.URL()).To(HavePrefix("http://127.0.0.1:"))
		Expect(srv.BaseURL()).To(Equal(srv.URL()))

		hc := newHTTPClient()
		client := anthropicClient(srv, hc)
		Expect(srv.Set("m", llm.Do(llm.HangBeforeHeaders))).To(Succeed())
		hung := make(chan error, 1)
		go func() {
			_, err := client.Messages.New(ctx, anthropicParams("m", "x"))
			hung <- err
		}()
		Eventually(srv.Requests).Should(HaveLen(1))
		Consistently(served, 20*time.Millisecond).ShouldNot(Receive())

		stop()
		Eventually(served).Should(Receive(BeNil()))
		Eventually(hung).Should(Receive(HaveOccurred()))
	}, SpecTimeout(5*time.Second))

	It("Serve returns the error of a bad configuration", func(ctx SpecContext) {
		err := llm.Serve(ctx, llm.Options{Provider: "gemini"}, nil)
		Expect(err).To(MatchError(ContainSubstring(`unknown provider "gemini"`)))
	}, SpecTimeout(specTimeout))

	It("reports a listen address in use", func(_ SpecContext) {
		srv := newFake(llm.Options{Provider: llm.OpenAI})
		Expect(srv.BaseURL()).To(Equal(srv.URL() + "/v1"))
		_, err := llm.New(llm.Options{Provider: llm.OpenAI, Addr: srv.Addr()})
		Expect(err).To(MatchError(ContainSubstring("listen")))
	}, SpecTimeout(specTimeout))

	It("stays quiet unless given a logger, and logs one line per request with one", func(ctx SpecContext) {
		var lines syncBuffer
		srv := newFake(llm.Options{Provider: llm.Anthropic, Logger: slog.New(slog.NewTextHandler(&lines, nil))})
		client := anthropicClient(srv, newHTTPClient())
		Expect(srv.Set("claude-opus-5", llm.Do(llm.NotFound))).To(Succeed())
		_, err := client.Messages.New(ctx, anthropicParams("claude-opus-5", "x"))
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Eventually(lines.String).Should(ContainSubstring("step=not_found"))
		Expect(strings.Count(lines.String(), "\n")).To(Equal(1))
	}, SpecTimeout(specTimeout))
})
